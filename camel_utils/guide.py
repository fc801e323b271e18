"""Guides: the policies g(s) that CAMEL learns from, checked, loaded and wrapped as one type.

Shared by the trainers (`camel_td3.py`, `camel_sac.py`), which train with a guide, and by `generate_policy.py` and
`evaluate_policy.py`, which ask a language model to write guides and judge them. Every guide source comes
through `make_guide` as a `Guide`, with the same counters and the same failure behaviour:

- an LLM-written file defining `policy(obs) -> action in [-1, 1]` (`load_guide`), untrusted input:
  1. `check_source` reads its syntax tree before anything runs and refuses imports other than NumPy and
     `math`, dunder access, `open`/`exec`/`eval`/`compile`/`__import__`/`getattr`..., and NumPy file I/O.
  2. `trial_run` imports it in a child process with a wall-clock timeout and calls it on sample
     observations, so a guide that hangs, crashes, returns garbage or was written for another env is
     refused before training starts;
- an expert: a trained actor in CleanRL's `.cleanrl_model` format, local or from the Hugging Face Hub
  (`expert_policy`), the paper's expert-masking control;
- random actions (`random_policy`), the paper's random-masking control.

`Guide` wraps any of them for training: a call that raises, hangs past its timeout, or returns the wrong
shape or NaN/inf returns None (the caller then leaves that step unmasked) and is counted; out-of-range
actions are clipped to [-1, 1]. Each kind of trouble is warned about once.

This is a guard against accidents, not a security sandbox: Python code that wants to escape such checks
can. Only run guides you would be willing to run yourself.
"""

from __future__ import annotations

import ast
import glob
import hashlib
import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from camel_utils.cli import REPO, repo_relative
from camel_utils.conditions import is_hub_repo_id


def quiet_mujoco_deprecations():
    """MuJoCo warns, on stderr and in a MUJOCO_LOG.TXT it writes into the current folder, that the v4 envs' models use
    a deprecated compiler attribute (HalfCheetah-v4: settotalmass), each time one is made: not news here. Other MuJoCo
    warnings still go to stderr."""
    try:
        import mujoco
    except ImportError:
        return

    def warn(message):
        if "is deprecated" not in message:
            print(f"MuJoCo warning: {message}", file=sys.stderr)

    mujoco.set_mju_user_warning(warn)


quiet_mujoco_deprecations()

ALLOWED_IMPORTS = frozenset({"numpy", "math"})
FORBIDDEN_NAMES = frozenset(
    {
        "open", "exec", "eval", "compile", "__import__", "input", "breakpoint", "globals", "locals",
        "vars", "getattr", "setattr", "delattr", "exit", "quit", "help", "memoryview", "__builtins__",
    }
)  # fmt: skip
# NumPy functions and methods that read or write files (or pickles).
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        "load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromfile",
        "tofile", "memmap", "fromregex", "DataSource", "ctypeslib", "lib", "dump", "dumps", "system",
    }
)  # fmt: skip
ALLOWED_DUNDER_NAMES = frozenset({"__name__"})  # so `if __name__ == "__main__":` demo blocks pass


# The normalised action contract, defined once for every script: guides, the mask's bounds and the actor all
# speak the normalised action space [-1, 1]^d; only the env speaks its own units.
def action_scale_bias(action_space) -> tuple[np.ndarray, np.ndarray]:
    """(scale, bias) such that env_action = scale * a + bias for a normalised action a in [-1, 1]^d."""
    low, high = np.asarray(action_space.low, dtype=np.float64), np.asarray(action_space.high, dtype=np.float64)
    return (high - low) / 2.0, (high + low) / 2.0


def to_env_units(action, action_space) -> np.ndarray:
    """A normalised action (or bound) in [-1, 1]^d in the env's own units, in the action space's dtype."""
    scale, bias = action_scale_bias(action_space)
    return (np.asarray(action, dtype=np.float64) * scale + bias).astype(action_space.dtype)


def to_normalized(env_action, action_space) -> np.ndarray:
    """An action in the env's units mapped back to [-1, 1]^d (the inverse of to_env_units)."""
    scale, bias = action_scale_bias(action_space)
    return (np.asarray(env_action, dtype=np.float64) - bias) / scale


def full_bounds(action_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The bounds of an unmasked step: the whole normalised action space, low = -1 and high = 1 (float32)."""
    return -np.ones(action_dim, dtype=np.float32), np.ones(action_dim, dtype=np.float32)


def guide_file_record(path: str | os.PathLike) -> dict:
    """A guide file's identity for a run's record: its path relative to this repository (absolute if it lies
    outside) and the sha256 of its bytes, so a committed result names exactly the code it was trained with."""
    resolved = Path(path).resolve()
    return {"path": repo_relative(str(resolved)), "sha256": hashlib.sha256(resolved.read_bytes()).hexdigest()}


class GuideError(Exception):
    """A guide file that cannot be used; the message is one line meant for the user."""


def check_source(source: str, filename: str = "<guide>") -> ast.Module:
    """Parse a guide's source and refuse anything beyond plain NumPy/math computation.

    Returns the syntax tree; raises GuideError naming the first problem and its line.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        raise GuideError(f"{filename}: syntax error at line {e.lineno}: {e.msg}") from None
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in ALLOWED_IMPORTS:
                    raise GuideError(f"{filename}: line {line} imports '{alias.name}'; only numpy and math may be imported")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or module.split(".")[0] not in ALLOWED_IMPORTS:
                raise GuideError(f"{filename}: line {line} imports from '{'.' * node.level}{module}'; only numpy and math may be imported")
            for alias in node.names:
                if alias.name in FORBIDDEN_ATTRIBUTES:
                    raise GuideError(f"{filename}: line {line} imports '{alias.name}', which does file I/O; guides may not")
        elif isinstance(node, ast.Name):
            if node.id in FORBIDDEN_NAMES:
                raise GuideError(f"{filename}: line {line} uses '{node.id}', which guides may not use")
            if _is_dunder(node.id) and node.id not in ALLOWED_DUNDER_NAMES:
                raise GuideError(f"{filename}: line {line} uses '{node.id}'; dunder names are not allowed")
        elif isinstance(node, ast.Attribute):
            if _is_dunder(node.attr):
                raise GuideError(f"{filename}: line {line} accesses '.{node.attr}'; dunder attributes are not allowed")
            if node.attr in FORBIDDEN_ATTRIBUTES:
                raise GuideError(f"{filename}: line {line} uses '.{node.attr}', which does file I/O; guides may not")
    if not any(_defines_policy(node) for node in tree.body):
        raise GuideError(f"{filename}: defines no top-level function 'policy(obs)'")
    return tree


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _defines_policy(node: ast.stmt) -> bool:
    if isinstance(node, ast.FunctionDef) and node.name == "policy":
        return bool(node.args.posonlyargs or node.args.args or node.args.vararg)
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "policy" for t in node.targets)
    return False


def read_and_check(path: str | os.PathLike) -> str:
    """Read a guide file and run `check_source` on it; GuideError if it is missing or refused."""
    path = Path(path)
    if not path.is_file():
        raise GuideError(f"{path}: no such guide policy file")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GuideError(f"{path}: cannot read guide policy file ({e})") from None
    check_source(source, str(path))
    return source


class WrongShape(ValueError):
    """`policy(obs)` returned an action of the wrong size (often: a guide written for another env)."""


def as_action(output, action_dim: int) -> np.ndarray:
    """Turn what `policy(obs)` returned into a float64 vector of length action_dim, or raise ValueError."""
    if output is None:
        raise ValueError("returned None (a missing return statement?)")
    try:
        action = np.asarray(output, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"returned {type(output).__name__}, not an array of numbers") from None
    if action.size != action_dim or action.squeeze().ndim > 1:
        raise WrongShape(f"returned shape {action.shape}, expected ({action_dim},)")
    action = action.reshape(action_dim)
    if not np.all(np.isfinite(action)):
        raise ValueError("returned NaN or inf")
    return action


@dataclass
class TrialReport:
    """What `trial_run` saw: the raw actions on each sample observation and the time per call."""

    actions: np.ndarray
    seconds_per_call: float

    @property
    def out_of_range_fraction(self) -> float:
        return float(np.mean(np.any(np.abs(self.actions) > 1.0, axis=1)))


def one_thread_env() -> dict:
    """The environment for a child process that runs guide code: ours, with NumPy's BLAS on one thread (a guide's
    small array operations gain nothing from more, and the child should not take cores from training)."""
    # PYTHONPATH: the child runs a module of camel_utils (python -m), which must be importable from any folder
    python_path = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": python_path}


def trial_run(
    path: str | os.PathLike,
    observations: np.ndarray,
    action_dim: int,
    timeout: float = 20.0,
    call_timeout: float = 1.0,
    env_id: str | None = None,
) -> TrialReport:
    """Import the guide in a child process and call it on each observation, with a wall-clock timeout.

    Raises GuideError if the import or any call fails, a call takes over `call_timeout` seconds, the
    whole trial takes over `timeout` seconds, or a call returns anything but a finite vector of length
    action_dim. When a call raises or returns the wrong shape, the message also says what the env (named
    `env_id`) gives and wants, since a guide written for another env fails this way.
    """
    path = Path(path)
    observations = np.asarray(observations, dtype=np.float64)
    with tempfile.TemporaryDirectory(prefix="camel_guide_") as tmp:
        obs_file, result_file = os.path.join(tmp, "obs.npy"), os.path.join(tmp, "result.npz")
        np.save(obs_file, observations)
        command = [sys.executable, "-m", "camel_utils.guide", str(path.resolve()), obs_file, result_file, str(action_dim), str(call_timeout)]
        env = one_thread_env()
        try:
            child = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise GuideError(f"{path}: did not finish {len(observations)} sample calls within {timeout:g} s (does it hang?)") from None
        if not os.path.exists(result_file):
            last_line = (child.stderr.strip().splitlines() or ["no output"])[-1]
            raise GuideError(f"{path}: the trial process died (exit code {child.returncode}): {last_line}")
        with np.load(result_file) as result:
            error, env_related = str(result["error"]), bool(result["env_related"])
            if error:
                if env_related:
                    obs_size = observations[0].size if len(observations) else "?"
                    error += (f"; {env_id or 'the env'} gives observations of size {obs_size} and wants {action_dim} actions "
                              "(was the guide written for another env?)")  # fmt: skip
                raise GuideError(f"{path}: {error}")
            return TrialReport(actions=result["actions"], seconds_per_call=float(result["seconds_per_call"]))


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0]


def _trial_child(guide_path: str, obs_file: str, result_file: str, action_dim: int, call_timeout: float) -> None:
    """Runs in the child process started by `trial_run`; writes actions or an error message, and whether the
    error is one a guide written for another env makes (it raised, or returned the wrong shape)."""
    try:  # a guide that allocates wildly should fail here, not take the machine down
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    except (ImportError, ValueError, OSError):
        pass
    observations = np.load(obs_file)
    actions, error, env_related, seconds = np.zeros((0, action_dim)), "", False, 0.0
    try:
        policy = _import_policy(guide_path)
        rows, start = [], time.perf_counter()
        for i, obs in enumerate(observations):
            try:
                with _time_limit(call_timeout):
                    output = policy(obs.copy())
            except GuideTimeout:
                raise GuideError(f"policy(obs) took over {call_timeout:g} s on sample observation {i} (does it hang?)") from None
            except Exception as e:
                env_related = isinstance(e, (IndexError, ValueError))  # what indexing an obs of another size raises
                raise GuideError(f"policy(obs) raised {type(e).__name__}: {_first_line(e)} on sample observation {i}") from None
            try:
                rows.append(as_action(output, action_dim))
            except ValueError as e:
                env_related = isinstance(e, WrongShape)
                raise GuideError(f"policy(obs) {e} on sample observation {i}") from None
        seconds = (time.perf_counter() - start) / max(len(observations), 1)
        actions = np.stack(rows) if rows else actions
    except GuideError as e:
        error = str(e)
    except BaseException as e:  # the guide's own import-time code failed
        error = f"importing it raised {type(e).__name__}: {_first_line(e)}"
    np.savez(result_file, actions=actions, error=np.array(error), env_related=np.array(env_related),
             seconds_per_call=np.array(seconds))  # fmt: skip


def _import_policy(path: str | os.PathLike):
    """Execute a guide file as a fresh module and return its `policy` (after the static check)."""
    read_and_check(path)
    module_name = f"camel_guide_policy_{abs(hash(os.path.abspath(path)))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise GuideError(f"{path}: importing it raised {type(e).__name__}: {_first_line(e)}") from None
    policy = getattr(module, "policy", None)
    if not callable(policy):
        raise GuideError(f"{path}: 'policy' is not a function")
    return policy


class GuideTimeout(Exception):
    pass


class Guide:
    """A guide g(s) as training calls it, once per masked step (CAMEL+: once per step, for guide BC and the guide
    warm-up), whatever its source (an LLM-written file, an expert actor, random actions).
    Never raises: a bad call returns None, and the caller leaves that step unmasked.

    `policy` is the raw function obs -> normalised action. Counts every call (`calls`), failed calls (`failures`,
    the latest reason in `last_error`) and calls whose action had to be clipped into [-1, 1] (`clipped`); warns
    the first time each kind of trouble happens. `state_dict()` holds the counts, so a resumed run keeps them.
    """

    def __init__(self, policy, action_dim: int, name: str, call_timeout: float = 1.0):
        self.policy, self.action_dim, self.name, self.call_timeout = policy, action_dim, name, call_timeout
        self.calls = self.failures = self.clipped = 0
        self.last_error = ""

    def __call__(self, obs: np.ndarray) -> np.ndarray | None:
        self.calls += 1
        try:
            with _time_limit(self.call_timeout):
                action = as_action(self.policy(np.array(obs, dtype=np.float64)), self.action_dim)
        except Exception as e:  # anything the guide does wrong costs one unmasked step, not the run
            reason = f"timed out after {self.call_timeout:g} s" if isinstance(e, GuideTimeout) else f"{type(e).__name__}: {e}"
            if not self.failures:
                print(f"warning: guide {self.name} failed ({reason}); such steps go unmasked and are counted", file=sys.stderr)
            self.failures += 1
            self.last_error = reason
            return None
        if np.any(np.abs(action) > 1.0):
            if not self.clipped:
                print(f"warning: guide {self.name} returned actions outside [-1, 1]; clipping them", file=sys.stderr)
            self.clipped += 1
            action = np.clip(action, -1.0, 1.0)
        return action

    def state_dict(self) -> dict:
        return {"calls": self.calls, "failures": self.failures, "clipped": self.clipped}

    def load_state_dict(self, state: dict) -> None:
        self.calls, self.failures, self.clipped = state["calls"], state["failures"], state["clipped"]


class _time_limit:
    """Raise GuideTimeout in the main thread if the block runs longer than `seconds` (SIGALRM timer)."""

    def __init__(self, seconds: float):
        self.active = seconds > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        self.seconds = seconds

    def __enter__(self):
        if self.active:
            self.previous = signal.signal(signal.SIGALRM, _raise_timeout)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


def _raise_timeout(signum, frame):
    raise GuideTimeout()


def load_guide(
    path: str | os.PathLike,
    observations: np.ndarray,
    action_dim: int,
    timeout: float = 20.0,
    call_timeout: float = 1.0,
    env_id: str | None = None,
) -> Guide:
    """Check a guide file, try it in a child process on `observations`, then load it for training.

    Raises GuideError (one line) for a missing file, a syntax error, forbidden code, no `policy`, an
    exception, a hang, or a wrong or non-finite output. Warns if its actions leave [-1, 1] or it is slow.
    """
    read_and_check(path)
    report = trial_run(path, observations, action_dim, timeout=timeout, call_timeout=call_timeout, env_id=env_id)
    if report.out_of_range_fraction > 0:
        print(
            f"warning: guide {path} returned actions outside [-1, 1] on {report.out_of_range_fraction:.0%} "
            "of sample observations; they will be clipped",
            file=sys.stderr,
        )
    if report.seconds_per_call > 1e-3:
        print(f"warning: guide {path} takes {report.seconds_per_call * 1e3:.1f} ms per call; training will be slower", file=sys.stderr)
    return Guide(_import_policy(path), action_dim, name=str(path), call_timeout=call_timeout)


def expert_policy(model: str, env):
    """Expert masking's g(s): a trained actor saved in CleanRL's format (`torch.save` of the actor's, qf1's and
    qf2's state dicts), from a local file or a Hugging Face repo id, as a function obs -> normalised action.

    The actor acts as camel_utils.agent runs it, the way the run that trained it evaluated it (unmasked, float32; a SAC
    actor by its mean action), and its action in the env's units is mapped back to [-1, 1] by this env's action space.
    Raises GuideError (one line) for a file that is not a CleanRL-format model or an actor trained on another env."""
    from camel_utils.agent import load_agent  # torch: only experts need it, so the LLM guides' checks stay light

    try:
        path = expert_model_file(model, _env_id(env))
    except OSError as e:
        raise GuideError(f"--expert-model {model}: {e}") from None
    try:
        agent = load_agent(path, env)
    except (OSError, ValueError) as e:
        raise GuideError(f"--expert-model {model}: {e}") from None

    def expert(obs):
        return np.clip(to_normalized(agent(obs), env.action_space), -1.0, 1.0)

    return expert


def random_policy(action_dim: int, rng: np.random.Generator):
    """Random masking's g(s), the paper's control: a uniformly random normalised action at every call, drawn
    from `rng` (the trainer's generator, so a resumed run draws what the uninterrupted one would have)."""
    return lambda obs: rng.uniform(-1.0, 1.0, action_dim)


def make_guide(
    env,
    *,
    llm_policy: str | None = None,
    expert_model: str | None = None,
    random_guide: bool = False,
    rng: np.random.Generator | None = None,
    seed: int = 0,
    call_timeout: float = 1.0,
) -> Guide | None:
    """The guide the trainer's flags ask for (--llm-policy, --expert-model, --random-guide), checked and wrapped
    as a Guide; None when there is none (the plain baseline). Raises GuideError with one line for the user.

    An LLM file is tried on observations sampled from `env` (with `seed`) before it is accepted."""
    action_dim = int(np.prod(env.action_space.shape))
    if llm_policy:
        observations = sample_observations(env, seed=seed)
        try:
            return load_guide(llm_policy, observations, action_dim, call_timeout=call_timeout, env_id=_env_id(env))
        except GuideError as e:
            raise GuideError(f"guide {e}") from None
    if expert_model:
        return Guide(expert_policy(expert_model, env), action_dim, name=f"expert {expert_model}", call_timeout=call_timeout)
    if random_guide:
        rng = rng if rng is not None else np.random.default_rng(seed)
        return Guide(random_policy(action_dim, rng), action_dim, name="random", call_timeout=call_timeout)
    return None


def _env_id(env) -> str:
    return env.spec.id if env.spec is not None else type(env.unwrapped).__name__


def sample_observations(env, n: int = 64, seed: int = 0) -> np.ndarray:
    """Observations a guide will meet: episode starts and states along short random-action rollouts."""
    rng = np.random.default_rng(seed)
    low, high = env.action_space.low, env.action_space.high
    obs, _ = env.reset(seed=seed)
    samples = []
    while len(samples) < n:
        samples.append(obs)
        obs, _, terminated, truncated, _ = env.step(rng.uniform(low, high).astype(env.action_space.dtype))
        if terminated or truncated or len(samples) % 16 == 0:
            obs, _ = env.reset(seed=int(rng.integers(2**31)))
    return np.stack(samples).astype(np.float64)


def track_robot_camera(env) -> None:
    """Make a MuJoCo env's rendering camera follow the robot (used by both scripts' videos).

    Gymnasium's renderer resets its camera to a free, fixed camera at every frame, where `trackbodyid` does
    nothing, so a robot that walks ten metres leaves the picture. Also turns down the two render settings that
    cost most in software (EGL on a CPU): the shadow map size and anti-aliasing. Does nothing for other envs.
    """
    if not hasattr(env.unwrapped, "mujoco_renderer"):
        return
    import mujoco

    quality = env.unwrapped.model.vis.quality
    quality.shadowsize, quality.offsamples = 1024, 0
    env.reset()
    env.render()  # creates the renderer's camera
    renderer = env.unwrapped.mujoco_renderer
    renderer.camera_id = None  # None: leave the camera's type alone at each frame
    renderer.viewer.cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
    renderer.viewer.cam.trackbodyid = max(renderer.viewer.cam.trackbodyid, 1)


# ---- Expert models: a local file, or a Hugging Face repo id ---------------------------------------------------

CLEANRL_REPO_NAME = re.compile(r"(?P<env_id>.+?-v\d+)-(?P<exp_name>.+)-seed\d+")  # CleanRL's {env_id}-{exp_name}-seed{seed}


def expert_model_file(model, env_id):
    """The local path of an expert model given as a file or a Hugging Face repo id (downloaded once into
    huggingface_hub's cache). Raises OSError with one line that says what to do."""
    if os.path.isfile(model):
        return model
    if os.path.isdir(model):
        raise IsADirectoryError("is a folder; pass the .cleanrl_model file in it")
    if not is_hub_repo_id(model):  # a path-shaped value is a missing file, never a Hub lookup
        raise FileNotFoundError(
            f"no such file. Fetch CleanRL's TD3 expert with `hf download cleanrl/{env_id}-td3_continuous_action-seed1 "
            f"td3_continuous_action.cleanrl_model --local-dir experts/{env_id}` and pass "
            f"experts/{env_id}/td3_continuous_action.cleanrl_model, or train one with scripts/train_expert.sh {env_id}"
        )
    return download_expert(model, env_id)


def download_expert(repo_id, env_id):
    """Fetch a CleanRL model from the Hugging Face Hub, or take it from huggingface_hub's cache (~/.cache): in a repo
    named as CleanRL names its models ({env_id}-{exp_name}-seed{seed}), {exp_name}.cleanrl_model; in any other, the
    repo's one .cleanrl_model file (as camel_utils/hub.py uploads them). Raises OSError (one line, with the command that
    fetches it elsewhere) when it cannot."""
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import HfApi, constants, hf_hub_download, snapshot_download

    match = CLEANRL_REPO_NAME.fullmatch(repo_id.split("/")[1])
    filename = f"{match['exp_name']}.cleanrl_model" if match else None  # None: ask the repo
    folder = f"experts/{match['env_id'] if match else env_id}"
    try:
        if filename:
            return hf_hub_download(repo_id=repo_id, filename=filename, local_files_only=True)
        cached = glob.glob(os.path.join(snapshot_download(repo_id, allow_patterns="*.cleanrl_model", local_files_only=True), "*.cleanrl_model"))
        if len(cached) == 1:
            return cached[0]
    except Exception:
        pass  # not cached yet
    fetch = f"hf download {repo_id} {filename}" if filename else f'hf download {repo_id} --include "*.cleanrl_model"'
    shown = f"{folder}/{filename}" if filename else f"the .cleanrl_model file in {folder}"
    offline_help = (f"Download it on a connected machine (`{fetch} --local-dir {folder}`) and pass {shown}, or train one "
                    "with scripts/train_expert.sh.")  # fmt: skip
    endpoint = urlparse(constants.ENDPOINT)
    try:  # fail in seconds, not after the Hub client's retries, when there is no network
        socket.create_connection((endpoint.hostname, endpoint.port or (443 if endpoint.scheme == "https" else 80)), timeout=5).close()
    except OSError:
        raise ConnectionError(f"the Hugging Face Hub ({constants.ENDPOINT}) is unreachable. {offline_help}") from None
    try:
        listed = None if filename else [name for name in HfApi().list_repo_files(repo_id) if name.endswith(".cleanrl_model") and "/" not in name]
    except Exception as e:
        raise ConnectionError(f"could not list the files of {repo_id} ({type(e).__name__}). {offline_help}") from None
    if listed is not None and len(listed) != 1:
        raise FileNotFoundError(f"{repo_id} holds {len(listed) or 'no'} .cleanrl_model files at its top level"
                                f"{': ' + ', '.join(listed) if listed else ''}; download the one you mean and pass its path")  # fmt: skip
    filename = filename or listed[0]
    try:
        return hf_hub_download(repo_id=repo_id, filename=filename)
    except Exception as e:
        raise ConnectionError(f"could not download {filename} ({type(e).__name__}). {offline_help}") from None


if __name__ == "__main__":  # the child process of a guide's trial (_trial_child)
    _trial_child(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
