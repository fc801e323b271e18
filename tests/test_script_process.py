"""run_script (script_process.py) stands in for `python SCRIPT` in most tests: what a script does run that way must be
what it does run by python itself."""

import os
import re
import subprocess
import sys
from multiprocessing import forkserver
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from script_process import run_script

REPO = Path(__file__).resolve().parent.parent

SCRIPTS = {
    "exit code": "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)\n",
    "exit message": "import sys\nsys.exit('stopped: why')\n",
    "exception": "def f():\n    raise ValueError('bad')\n\nprint('before', flush=True)\nf()\n",
    "syntax error": "def f(:\n",
    "ctrl-c": "raise KeyboardInterrupt\n",
    "signal": "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
    "at exit": "import atexit, threading, time\natexit.register(print, 'bye')\n"
               "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\n",
    "argv, folder, environment": "import os, sys\nprint(sys.argv[1:], os.path.basename(os.getcwd()), os.environ.get('CAMEL_X'))\n"
                                 "print(sys.path[0] == os.path.dirname(os.path.abspath(__file__)), __name__)\n",
    "warning": "import warnings\nwarnings.warn('careful')\n",
    "stdin": "import sys\nprint(repr(sys.stdin.read()))\n",
}  # fmt: skip


def by_python(script, *args, cwd, env):
    return subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip


@pytest.mark.parametrize("warnings", ["", "ignore"])
@pytest.mark.parametrize("name", SCRIPTS)
def test_a_small_script_exits_prints_and_sees_what_it_would_under_python(tmp_path, name, warnings):
    script = tmp_path / "script.py"
    script.write_text(SCRIPTS[name])
    (tmp_path / "here").mkdir()
    env = {**os.environ, "CAMEL_X": "x", "PYTHONWARNINGS": warnings}
    forked = run_script(script, "a b", "--c", cwd=tmp_path / "here", env=env)
    real = by_python(script, "a b", "--c", cwd=tmp_path / "here", env=env)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)


def scalars(run_dir):
    events = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"] if tag != "charts/SPS"}


def test_a_trainer_run_by_the_preloaded_server_is_the_trainer_run_by_python(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    guide = "import numpy as np\n\ndef policy(obs):\n    return np.tanh(np.asarray(obs)[:3])\n"
    args = ["--llm-policy", "guide.py", "--total-timesteps", "700", "--learning-starts", "400", "--batch-size", "32",
            "--eval-frequency", "350", "--eval-episodes", "1", "--torch-threads", "1", "--run-name", "r"]  # fmt: skip
    results = {}
    for way, run in (("forked", run_script), ("python", by_python)):
        (tmp_path / way).mkdir()
        (tmp_path / way / "guide.py").write_text(guide)
        results[way] = run(REPO / "camel_td3.py", *args, cwd=tmp_path / way, env=env)
        assert results[way].returncode == 0, results[way].stderr
    forked, real = results["forked"], results["python"]
    assert forked.stdout == real.stdout
    without_speed = re.compile(r"sps \d+")
    assert without_speed.sub("sps", forked.stderr) == without_speed.sub("sps", real.stderr)
    assert scalars(tmp_path / "forked/runs/r") == scalars(tmp_path / "python/runs/r")
    models = [torch.load(tmp_path / way / "runs/r/camel_td3.cleanrl_model", weights_only=True) for way in results]
    for forked_state, real_state in zip(*models):
        for name in forked_state:
            assert torch.equal(forked_state[name], real_state[name]), name
    # forking a process that runs threads can copy a lock another thread held; the imports started none
    assert len(os.listdir(f"/proc/{forkserver._forkserver._forkserver_pid}/task")) == 1


@pytest.mark.parametrize("name, value", [("OMP_NUM_THREADS", "4"), ("MUJOCO_GL", "a renderer the server did not load")])
def test_a_setting_read_at_import_that_differs_from_the_servers_is_refused(tmp_path, name, value):
    with pytest.raises(ValueError, match=f"{name}={value} is read when torch, BLAS or MuJoCo is imported"):
        run_script(REPO / "camel_td3.py", "--help", cwd=tmp_path, env={**os.environ, name: value})
