"""Run a repository script in a process of its own without paying for its imports every time.

A trainer spends most of a short test run importing torch (and torch._dynamo, which the optimisers' first step
pulls in) and gymnasium: 3-8 s a process on the 2-core CI machine, against well under a second for a test-sized run.
`run_script` starts the script as `python SCRIPT ARGS...` would, in its own process with its own argv, working
folder, environment, stdout, stderr and exit status, but forked from a server (multiprocessing's forkserver, one per
test worker) that has already imported those libraries. What it does not exercise is the interpreter's start and the
imports themselves: the tests that start a trainer with `subprocess` (the kill-and-resume tests, the queue, the
quickstart, the docs' commands) still do.
"""

import atexit
import multiprocessing
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from multiprocessing import forkserver
from pathlib import Path

# Imported once in the server. Importing starts no thread (forking a process with threads is unsafe), checked by
# test_a_trainer_run_by_the_preloaded_server_is_the_trainer_run_by_python.
PRELOAD = ["numpy", "torch", "torch._dynamo", "torch.utils.tensorboard", "gymnasium", "mujoco", "tyro",
           "camel_utils.run", "camel_utils.guide", "camel_utils.fast_update", "script_process"]  # fmt: skip

# Read by torch, BLAS and MuJoCo when they are imported, so fixed for the server's life (its value when the server
# starts; the thread counts one): run_script refuses another value.
READ_AT_IMPORT = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MUJOCO_GL", "PYOPENGL_PLATFORM")
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

_context = None
_fixed = {}


def _server():
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(PRELOAD)
        outer = dict(os.environ)
        os.environ.update(ONE_THREAD)  # the server starts with this process's environment
        os.environ.pop("PYTHONWARNINGS", None)  # each child applies its own (below)
        _fixed.update({name: os.environ[name] for name in READ_AT_IMPORT if name in os.environ})
        try:
            forkserver.ensure_running()
        finally:
            os.environ.clear()
            os.environ.update(outer)
    return _context


def _as_python_runs_it(script, args, cwd, env, stdout_path, stderr_path):
    """The child: what `python SCRIPT ARGS...` does from `cwd` with `env`, once the imports are done."""
    for fd, path in ((1, stdout_path), (2, stderr_path)):
        file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(file, fd)
        os.close(file)
    sys.stdin = open(os.devnull)
    sys.stdout = open(1, "w", closefd=False)  # block-buffered, as when python's stdout is a pipe
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")  # line-buffered, as python's
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    options = [option for option in env.get("PYTHONWARNINGS", "").split(",") if option]
    sys.warnoptions[:] = options
    warnings._processoptions(options)  # what python does with PYTHONWARNINGS at start
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(script))
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit:
        if exit.code is None or isinstance(exit.code, int):
            code = exit.code or 0
        else:
            print(exit.code, file=sys.stderr)
            code = 1
    except BaseException as error:
        print_as_python_does(error, script)
        code = -signal.SIGINT if isinstance(error, KeyboardInterrupt) else 1
    threading._shutdown()  # what the interpreter does at exit: wait for threads, then the atexit functions
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    if code == -signal.SIGINT:  # python dies of SIGINT when KeyboardInterrupt reaches the top
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def print_as_python_does(error, script):
    """The traceback from the script's own frames on, without runpy's and this module's."""
    frames = error.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename != script:
        frames = frames.tb_next
    traceback.print_exception(type(error), error, frames)


def run_script(script, *args, cwd, env=None, timeout=300):
    """`subprocess.run([sys.executable, script, *args], cwd=cwd, env=env, capture_output=True, text=True,
    timeout=timeout)`, forked from the preloaded server."""
    server = _server()
    env = dict(os.environ if env is None else env)
    for name in READ_AT_IMPORT:
        if name in env and env[name] != _fixed.get(name):
            raise ValueError(f"{name}={env[name]} is read when torch, BLAS or MuJoCo is imported, and the server has "
                             f"{_fixed.get(name)}: run the script with subprocess")  # fmt: skip
    env.update(_fixed)
    script, cwd = str(script), str(cwd)
    with tempfile.TemporaryDirectory() as folder:
        out, err = Path(folder, "stdout"), Path(folder, "stderr")
        out.touch(), err.touch()  # a child that fails before the script starts writes nothing here (the server's stderr)
        process = server.Process(target=_as_python_runs_it, args=(script, list(map(str, args)), cwd, env, out, err))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired([script, *args], timeout, out.read_bytes(), err.read_bytes())
        return subprocess.CompletedProcess([sys.executable, script, *args], process.exitcode,
                                           out.read_text(errors="backslashreplace"), err.read_text(errors="backslashreplace"))  # fmt: skip
