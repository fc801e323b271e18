"""Seed sweep: every method x guide x seed of one environment, WORKERS runs at a time, each on its own core.

  METHODS="td3 camel_td3 camel_plus_td3" SEEDS="1 2 3" TOTAL_TIMESTEPS=100000 WORKERS=2 scripts/hopper.sh
  ENV_ID=Walker2d-v4 SEEDS="1 2 3" WORKERS=2 scripts/sweep.sh     # the same three methods (the default), 1M steps
  METHODS=camel_plus_td3 GUIDES="llm policies/poor/hopper_lean.py" scripts/hopper.sh   # CAMEL+ with two guides
  METHODS="camel_td3 camel_td3_no_ma_em" GUIDES="llm random" scripts/hopper.sh          # the paper's CAMEL and its control
  GUIDES="expert" EXPERT_MODEL=cleanrl/Hopper-v4-td3_continuous_action-seed1 scripts/hopper.sh   # expert masking
  scripts/sweep.sh --dry-run          # print the run matrix and what each run would do; run nothing
  scripts/sweep.sh --print-matrix     # one run name per line, in the Slurm array's order
  scripts/sweep.sh --count            # the number of runs in the matrix
  scripts/sweep.sh --task 0           # run only run 0 of the matrix (0-based; one Slurm array task)
(scripts/sweep.sh runs this file, scripts/sweep.py, which needs only Python's standard library.)

Settings (environment variables):
  ENV_ID           Gymnasium env id (default Hopper-v4)
  METHODS          methods, space-separated (default "td3 camel_td3 camel_plus_td3"); each is the run's --exp-name:
                     td3              TD3: camel_td3.py without a guide
                     camel_td3        the paper's CAMEL: camel_td3.py with a guide
                     camel_plus_td3   CAMEL+: camel_plus_td3.py (always with a guide)
                     sac              SAC: camel_sac.py without a guide
                     camel_sac        CAMEL-SAC: camel_sac.py with a guide
                   a guided method followed by _no_ma_em (camel_td3_no_ma_em) is the paper's control: the same without
                   the masking-aware actor and epsilon masking (--no-masking-aware --no-epsilon-masking)
  GUIDES           the guides, space-separated; each guided method runs with each (default llm):
                     llm              LLM_POLICY's file
                     FILE.py          a guide file of your own
                     NAME=FILE.py     a guide file under the name NAME, e.g. tuned=policies/tuned/hopper.py
                     expert           expert masking with EXPERT_MODEL
                     random           a random guide (--random-guide)
  LLM_POLICY       the LLM-written guide file (default: policies/{env}.py, the one the project ships for ENV_ID,
                   e.g. policies/hopper.py for Hopper-v4)
  EXPERT_MODEL     the expert of GUIDES=expert: a .cleanrl_model file or a Hugging Face repo id such as
                   cleanrl/Hopper-v4-td3_continuous_action-seed1 (default: experts/{ENV_ID}.cleanrl_model, made by
                   scripts/train_expert.sh, or experts/{ENV_ID}/td3_continuous_action.cleanrl_model, which
                   `hf download cleanrl/{ENV_ID}-td3_continuous_action-seed1 td3_continuous_action.cleanrl_model
                   --local-dir experts/{ENV_ID}` gives, whichever exists)
  SEEDS            seeds, space-separated (default "1 2 3")
  TOTAL_TIMESTEPS  environment steps per run (default 1000000)
  WORKERS          runs at a time on this machine (default 1). Two or more are pinned, each to its own core(s), when
                   the cores this sweep may use suffice (WORKERS x TORCH_THREADS): a run then neither waits for nor
                   slows another, and its steps/s are its own
  TORCH_THREADS    torch threads per run, passed as --torch-threads (default 1; 0 is torch's default, unpinned)
  EXTRA_ARGS       more trainer flags for every new run, split as a shell would (e.g. "--eval-frequency 10000").
                   A run's name says its method and guide only, so runs whose flags change the algorithm (e.g.
                   "--learning-starts 25000") belong in a RUNS_DIR of their own. Flags that the settings above give
                   (--seed, --exp-name, --llm-policy, --no-masking-aware, ...) are refused here
  RUNS_DIR         where run folders go (default <repo>/runs); its name must be "runs", because the trainer writes
                   to ./runs: runs are started from the folder that holds it
  PROGRESS_EVERY   seconds between the progress lines of each running run (its step, steps/s, returns), copied from
                   its log (default 300; 0: none)
  PYTHON           the interpreter for the runs (default <repo>/.venv/bin/python if it exists, else this one)
  DRY_RUN=1        the same as --dry-run

Each run is RUNS_DIR/{ENV_ID}__{method}__{seed} for TD3, SAC and the env's shipped guide (policies/hopper.py for
Hopper-v4), else RUNS_DIR/{ENV_ID}__{method}_{guide}__{seed}, where {guide} is the guide file's stem, its NAME,
expert or random: Hopper-v4__camel_plus_td3_hopper_lean__1 (scripts/queue.py names runs so too). Its output is
appended to log.txt there under a header line. Runs of different methods or guides never share a folder: two
guides of one sweep with one name are refused (name one NAME=FILE.py), and so is a folder that holds a finished
run of another method or guide file (finished.json records the guide file's sha256).
A run with finished.json is skipped, one with checkpoint.pt is resumed (--resume), any other is started fresh:
re-running the same command after an interruption continues the sweep. A run that fails is reported at the end
with the last error line of its log, and the other runs go on; the sweep then exits 1. A resumed or finished run
keeps its own settings (changing TOTAL_TIMESTEPS does not extend it). Ctrl-C or SIGTERM stops the sweep: it passes
the signal on to each running run, which saves a checkpoint; the sweep reports them and exits 130 (a second Ctrl-C
is passed on too, and stops the runs at once, unsaved). Under Slurm, which signals every process of a job itself,
the sweep passes nothing on, so that each run gets the signal once. A wrong setting is one error line, exit 2.
"""

import argparse
import hashlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # camel_utils' cli and conditions, standard library only like this file

from camel_utils.cli import USER_CWD, UsageError, format_duration, shown_path  # noqa: E402
from camel_utils.conditions import is_hub_repo_id  # noqa: E402
from camel_utils.preregistration import run_name  # noqa: E402  (one rule for run names, the queue's too)
from camel_utils.preregistration import shipped_guide as shipped_guide_path  # noqa: E402

# method -> (trainer, whether it takes a guide); a method's name is the trainer's default --exp-name for it
METHODS = {"td3": ("camel_td3.py", False), "camel_td3": ("camel_td3.py", True), "camel_plus_td3": ("camel_plus_td3.py", True),
           "sac": ("camel_sac.py", False), "camel_sac": ("camel_sac.py", True)}  # fmt: skip
DEFAULT_METHODS = "td3 camel_td3 camel_plus_td3"  # the README's comparison: TD3, the paper's CAMEL, CAMEL+
NO_MA_EM = "_no_ma_em"  # the paper's control: a guided method without the masking-aware actor and epsilon masking
NO_MA_EM_FLAGS = ("--no-masking-aware", "--no-epsilon-masking")
GUIDE_WORDS = ("llm", "expert", "random")  # the guides GUIDES names by a word rather than a file
HUB_EXPERT_FILE = "td3_continuous_action.cleanrl_model"  # the file in CleanRL's Hub repos
# trainer flags that the settings give each run, by setting: in EXTRA_ARGS they would override them unseen (tyro takes
# the last of a flag given twice)
FLAGS_OF_SETTINGS = {
    "ENV_ID": ("--env-id",), "SEEDS": ("--seed",), "TOTAL_TIMESTEPS": ("--total-timesteps",), "TORCH_THREADS": ("--torch-threads",),
    "METHODS and GUIDES, which name the run": ("--exp-name", "--run-name"),
    "GUIDES": ("--llm-policy", "--expert-model", "--random-guide", "--no-random-guide"),
    "METHODS (a method's _no_ma_em control)": ("--masking-aware", "--no-masking-aware", "--epsilon-masking", "--no-epsilon-masking"),
    "the sweep itself, which resumes stopped runs": ("--resume",),
}  # fmt: skip
# the settings of the sweep before one trainer per method: a command that still sets them would run something else
RETIRED_SETTINGS = {"CONDITIONS": "METHODS and GUIDES", "VARIANT": "METHODS (and a RUNS_DIR of their own for runs that EXTRA_ARGS changes)",
                    "TRAINER": "METHODS (sac, camel_sac)", "TUNED_POLICY": "GUIDES=tuned=FILE.py, e.g. tuned=policies/tuned/hopper.py"}  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# Settings, from environment variables
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Guide:
    name: str  # in the run's name after the method; "" for the env's shipped guide
    flags: tuple  # the trainer flags that give it
    sha256: Optional[str] = None  # a guide file's, as finished.json records it
    given: str = ""  # as GUIDES names it, for messages


@dataclass
class Settings:
    """A sweep's settings (see the module docstring for each variable); paths are absolute."""

    env_id: str
    methods: list
    guides: list  # of Guide, for the guided methods
    seeds: list
    total_timesteps: int
    workers: int
    torch_threads: int
    expert_model: Optional[str]  # a file's absolute path or a Hub repo id
    extra_args: list
    runs_dir: Path
    python: str
    progress_every: int = 300
    dry_run: bool = False
    repo: Path = REPO

    @property
    def workdir(self):
        """Where runs start: the trainer writes to ./runs, so the folder that holds RUNS_DIR."""
        return self.runs_dir.parent


def shipped_guide(repo, env_id):
    """The LLM-written guide the project ships for an env, in `repo`: policies/hopper.py for Hopper-v4 (it may not exist)."""
    return repo / shipped_guide_path(env_id)


def find_expert(repo, env_id):
    """The expert the sweep uses when EXPERT_MODEL is unset: scripts/train_expert.sh's output, or the file that the
    documented `hf download ... --local-dir experts/{env_id}` writes, whichever exists (None if neither does)."""
    for path in (repo / "experts" / f"{env_id}.cleanrl_model", repo / "experts" / env_id / HUB_EXPERT_FILE):
        if path.is_file():
            return path
    return None


def passed_path(path, repo, workdir):
    """A file as the trainer gets it: relative to the repository when it lies inside it and runs start there (so
    the run logs, and its export keeps, a path that means the same on every machine), else absolute."""
    path = Path(path).resolve()
    if workdir.resolve() == repo.resolve() and path.is_relative_to(repo.resolve()):
        return path.relative_to(repo.resolve()).as_posix()
    return str(path)


def integer(name, value, minimum):
    if not re.fullmatch(r"\d+", value.strip()) or int(value) < minimum:
        raise UsageError(f"{name} must be an integer of at least {minimum}, got '{value}'")
    return int(value)


def read_methods(text, repo):
    """METHODS' names, checked: each known (with _no_ma_em only on a guided one), once, its trainer in the checkout."""
    names = text.split()
    for name in names:
        base = name.removesuffix(NO_MA_EM)
        if base not in METHODS or (name != base and not METHODS[base][1]):
            raise UsageError(f"unknown method '{name}' (known: {' '.join(METHODS)}; a guided one also with {NO_MA_EM}, "
                             "e.g. camel_td3_no_ma_em)")  # fmt: skip
        if not (repo / METHODS[base][0]).is_file():
            raise UsageError(f"method {name} needs {METHODS[base][0]}, which this checkout does not have")
    if len(set(names)) < len(names):
        raise UsageError(f"METHODS names a method twice: {text}")
    return names


def read_guide(text, llm_policy, expert_model, env_id, repo, path):
    """A Guide from its entry in GUIDES; UsageError if it is unknown, lacks its file or expert, or has a bad name.
    `path` turns a file into the trainer's argument."""
    if text == "expert":
        if expert_model is None:
            raise UsageError(f"GUIDES=expert needs an expert: none at experts/{env_id}.cleanrl_model (scripts/train_expert.sh {env_id} "
                             f"makes it) or experts/{env_id}/{HUB_EXPERT_FILE} (hf download cleanrl/{env_id}-td3_continuous_action-seed1 "
                             f"{HUB_EXPERT_FILE} --local-dir experts/{env_id}); or set EXPERT_MODEL to a file or a Hub repo id")  # fmt: skip
        return Guide("expert", ("--expert-model", path(expert_model) if Path(expert_model).is_file() else expert_model), given=text)
    if text == "random":
        return Guide("random", ("--random-guide",), given=text)
    if text == "llm":
        if llm_policy is None:
            raise UsageError(f"GUIDES=llm needs LLM_POLICY, a guide file: the project ships none for {env_id} "
                             f"({shipped_guide(repo, env_id).relative_to(repo)} does not exist)")  # fmt: skip
        name, file = None, str(llm_policy)
    else:
        name, file = text.split("=", 1) if "=" in text else (None, text)
    if not Path(file).is_file():
        known = "llm, expert, random, FILE.py or NAME=FILE.py"
        raise UsageError(f"GUIDES {text}: {file}: no such guide file" if "=" in text or file.endswith(".py") else f"unknown guide '{text}' ({known})")
    file = Path(file).resolve()
    if name is None:  # the shipped guide leaves the run's name as the method's alone, as scripts/queue.py does
        name = "" if file == shipped_guide(repo, env_id).resolve() else file.stem
    if name and (not re.fullmatch(r"[A-Za-z0-9]+([_.-][A-Za-z0-9]+)*", name) or name in GUIDE_WORDS):
        raise UsageError(f"guide {text}: its name '{name}' must be letters and digits, joined by single _ . or -, and not "
                         f"{', '.join(GUIDE_WORDS)}: give it one as NAME=FILE.py")  # fmt: skip
    return Guide(name, ("--llm-policy", path(file)), hashlib.sha256(file.read_bytes()).hexdigest(), text)


def read_extra_args(text):
    try:
        extra_args = shlex.split(text)
    except ValueError as e:
        raise UsageError(f"EXTRA_ARGS cannot be split into flags: {e}") from None
    for arg in extra_args:
        flag = arg.split("=", 1)[0]
        for setting, flags in FLAGS_OF_SETTINGS.items():
            if flag in flags:
                raise UsageError(f"EXTRA_ARGS gives {flag}, which the sweep sets from {setting}")
    return extra_args


def read_settings(environ=os.environ, repo=REPO):
    """The sweep's settings from environment variables, checked: UsageError names the first wrong one."""
    for variable, instead in RETIRED_SETTINGS.items():
        if environ.get(variable):
            raise UsageError(f"{variable} has left the sweep (one trainer per method now): use {instead}; see scripts/sweep.sh --help")
    env_id = environ.get("ENV_ID") or "Hopper-v4"
    methods = read_methods(environ.get("METHODS") or DEFAULT_METHODS, repo)
    runs_dir = Path(environ.get("RUNS_DIR") or repo / "runs").absolute()
    if runs_dir.name != "runs":
        raise UsageError(f"RUNS_DIR={runs_dir} must be a folder named 'runs' (the trainer writes to ./runs); e.g. RUNS_DIR=/scratch/me/runs")
    seeds_text = environ.get("SEEDS", "1 2 3")
    if not seeds_text.split():
        raise UsageError("SEEDS is empty")
    seeds = [integer("SEEDS", seed, 0) for seed in seeds_text.split()]

    llm_policy = environ.get("LLM_POLICY") or None
    if llm_policy is not None and not Path(llm_policy).is_file():
        raise UsageError(f"LLM_POLICY {llm_policy}: no such guide file")
    if llm_policy is None and shipped_guide(repo, env_id).is_file():
        llm_policy = shipped_guide(repo, env_id)
    expert_model = environ.get("EXPERT_MODEL") or None
    if expert_model is None:
        found = find_expert(repo, env_id)
        expert_model = found and str(found)
    elif Path(expert_model).is_file():
        expert_model = str(Path(expert_model).resolve())
    elif not is_hub_repo_id(expert_model):
        raise UsageError(f"EXPERT_MODEL {expert_model}: no such file (nor a Hugging Face repo id such as cleanrl/{env_id}-td3_continuous_action-seed1)")

    def path(file):
        return passed_path(file, repo, runs_dir.parent)

    guides = []
    if any(METHODS[method.removesuffix(NO_MA_EM)][1] for method in methods):  # GUIDES matter to guided methods only
        texts = (environ.get("GUIDES") or "llm").split()
        if len(set(texts)) < len(texts):
            raise UsageError(f"GUIDES names a guide twice: {' '.join(texts)}")
        guides = [read_guide(text, llm_policy, expert_model, env_id, repo, path) for text in texts]

    python = environ.get("PYTHON") or (str(repo / ".venv/bin/python") if os.access(repo / ".venv/bin/python", os.X_OK) else sys.executable)
    if os.sep in python:  # runs start in another folder
        python = str(Path(python).absolute())
    return Settings(
        env_id=env_id, methods=methods, guides=guides, seeds=seeds,
        total_timesteps=integer("TOTAL_TIMESTEPS", environ.get("TOTAL_TIMESTEPS") or "1000000", 1),
        workers=integer("WORKERS", environ.get("WORKERS") or "1", 1),
        torch_threads=integer("TORCH_THREADS", environ.get("TORCH_THREADS") or "1", 0),
        expert_model=expert_model, extra_args=read_extra_args(environ.get("EXTRA_ARGS", "")), runs_dir=runs_dir, python=python,
        progress_every=integer("PROGRESS_EVERY", environ.get("PROGRESS_EVERY") or "300", 0),
        dry_run=environ.get("DRY_RUN", "0") not in ("", "0"), repo=repo,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# The run matrix, and what each run would do now
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    method: str  # its --exp-name
    guide: Optional[Guide]  # None for TD3 and SAC
    seed: int
    name: str  # {env_id}__{method}[_{guide}]__{seed}
    script: Path
    flags: tuple  # the guide's and the method's trainer flags


def matrix(settings):
    """Every run, seeds outermost (every method and guide has its first seed before any has its second), then
    methods in METHODS' order, each guided one with every guide in GUIDES' order. UsageError if two would share a name."""
    runs = []
    for seed in settings.seeds:
        for method in settings.methods:
            script, guided = METHODS[method.removesuffix(NO_MA_EM)]
            for guide in settings.guides if guided else [None]:
                flags = (*guide.flags, *NO_MA_EM_FLAGS) if method.endswith(NO_MA_EM) else guide.flags if guide else ()
                name = run_name(settings.env_id, method, seed, guide.name if guide else "")
                runs.append(Run(method, guide, seed, name, settings.repo / script, flags))
    named = {}
    for run in runs:
        other = named.setdefault(run.name, run)
        if other is not run:
            raise UsageError(f"two runs would be named {run.name}: {describe(other)} and {describe(run)}; give a guide a name of its own "
                             "with NAME=FILE.py")  # fmt: skip
    return runs


def describe(run):
    return f"{run.method} with guide {run.guide.given}" if run.guide else run.method


def folder_conflict(run, settings):
    """Why the run's folder cannot be this run's (a finished run of another method or guide file is in it), or None.
    finished.json records the method (exp_name) and the guide file's path and sha256; older runs, without them, pass."""
    finished = settings.runs_dir / run.name / "finished.json"
    try:
        record = json.loads(finished.read_text())
    except (OSError, ValueError):
        return None
    recorded_method = record.get("exp_name")
    if recorded_method not in (None, run.method):
        return f"{shown_path(finished.parent)} holds a finished run of {recorded_method}, not {run.method}"
    recorded = record.get("guide_file") or {}  # None for a run without a guide file
    mine = run.guide.sha256 if run.guide else None
    if "guide_file" in record and recorded.get("sha256") != mine:
        theirs = f"guide file {recorded.get('path')} (sha256 {str(recorded.get('sha256'))[:12]})" if recorded else "no guide file"
        ours = f"{run.guide.flags[1]} (sha256 {mine[:12]})" if mine else "no guide file"
        return (f"{shown_path(finished.parent)} holds a finished run with {theirs}; this run has {ours}: give this guide a name of "
                "its own (NAME=FILE.py) or the sweep another RUNS_DIR")  # fmt: skip
    return None


def plan(run, settings):
    """(action, command): `skip` a finished run (no command), `resume` one with a checkpoint, `start` any other."""
    run_dir = settings.runs_dir / run.name
    threads = ["--torch-threads", str(settings.torch_threads)]  # a machine setting: a resumed run takes it too
    if (run_dir / "finished.json").is_file():
        return "skip", []
    if (run_dir / "checkpoint.pt").is_file():
        return "resume", [settings.python, str(run.script), "--resume", f"runs/{run.name}", *threads]
    command = [settings.python, str(run.script), "--env-id", settings.env_id, "--seed", str(run.seed), "--exp-name", run.method,
               "--run-name", run.name, "--total-timesteps", str(settings.total_timesteps), *run.flags, *threads, *settings.extra_args]  # fmt: skip
    return "start", command


def plan_line(run, settings, width=0):
    """One line of --dry-run: action, run name and the command (repo paths relative when runs start in the repo)."""
    action, command = plan(run, settings)
    shown = f"(finished: {shown_path(settings.runs_dir / run.name / 'finished.json')})" if action == "skip" else shlex.join(command)
    if settings.workdir == settings.repo:
        shown = shown.replace(f"{settings.repo}/", "")
    return f"{action:<7} {run.name:<{width}} {shown}"


def failure_reason(log_text):
    """Why a run failed, from its log: the last `error: ...` line of its latest attempt (the lines after the last
    `=== ` header), else that attempt's last line (a traceback's ends in the exception)."""
    lines = log_text.splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("=== ")]
    lines = [line for line in lines[headers[-1] + 1 if headers else 0 :] if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    line = (errors or lines or ["no output"])[-1]
    return line if len(line) <= 300 else line[:297] + "..."


def latest_progress(log, run_name):
    """The run's last progress line in its log (the trainer writes `{run_name}: {step}/{total} steps (...)` every
    30 s when its output is a file), or None before the first."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 16384))
            tail = f.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    lines = [line for line in tail.splitlines() if line.startswith(f"{run_name}: ")]
    return lines[-1] if lines else None


# ---------------------------------------------------------------------------------------------------------
# Running: WORKERS child processes at a time, each pinned to its cores, polled; signals passed on from the main loop
# ---------------------------------------------------------------------------------------------------------
def usable_cores():
    """The cores this process may run on (a Slurm job's or a container's, not the machine's)."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))


def core_slots(settings):
    """The cores of each worker (TORCH_THREADS each), or None when runs are left unpinned: one worker, torch's own
    thread count, no pinning on this system, or too few cores."""
    per_run, cores = settings.torch_threads, usable_cores()
    if settings.workers < 2 or per_run < 1 or not hasattr(os, "sched_setaffinity") or settings.workers * per_run > len(cores):
        return None
    return [cores[i * per_run : (i + 1) * per_run] for i in range(settings.workers)]


@dataclass
class Outcome:
    status: str  # finished, skipped, failed or interrupted
    seconds: float = 0.0
    reason: str = ""


@dataclass
class Running:
    process: subprocess.Popen
    log: object
    started: float
    slot: Optional[int]  # its index in core_slots, None when unpinned
    signals_sent: int = 0
    last_progress: Optional[str] = None


class StopRequest:
    """Records each Ctrl-C / SIGTERM while active; the main loop passes each one on to every running run, once."""

    def __init__(self):
        self.signals = []

    def handle(self, signum, frame):
        self.signals.append(signum)

    def __enter__(self):
        self.previous = {s: signal.signal(s, self.handle) for s in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *exc):
        for s, handler in self.previous.items():
            signal.signal(s, handler)
        return False


def describe_exit(code):
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}"


class Sweep:
    """Runs a list of runs, WORKERS at a time, and records an Outcome for each one it got to."""

    def __init__(self, settings, forward_signals):
        self.settings, self.forward_signals = settings, forward_signals
        self.slots = core_slots(settings)
        self.outcomes = {}
        # the runs print commands (resume, evaluate) as seen from the folder the sweep was started in, where the user is
        self.run_env = {**os.environ, USER_CWD: os.environ.get(USER_CWD) or os.getcwd()}
        if settings.torch_threads:  # BLAS in NumPy and torch's intra-op pool, also for resumed runs
            self.run_env.update(OMP_NUM_THREADS=str(settings.torch_threads), MKL_NUM_THREADS=str(settings.torch_threads))

    def start(self, run, action, command, slot):
        run_dir = self.settings.runs_dir / run.name
        run_dir.mkdir(parents=True, exist_ok=True)
        log = open(run_dir / "log.txt", "a")
        log.write(f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} {action} on {socket.gethostname()}: {shlex.join(command)}\n")
        log.flush()
        cores = self.slots[slot] if slot is not None else None
        where = f" on core{'s' if len(cores) > 1 else ''} {','.join(map(str, cores))}" if cores else ""
        say(f"{action} {run.name}{where} -> {shown_path(run_dir / 'log.txt')}")
        # Outside Slurm a run gets its own session, so that a terminal's Ctrl-C reaches it only through the sweep,
        # once; under Slurm it stays in the job's process group, which Slurm signals (and tracks) as a whole.
        process = subprocess.Popen(command, cwd=self.settings.workdir, env=self.run_env, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=self.forward_signals,
                                   preexec_fn=(lambda: os.sched_setaffinity(0, cores)) if cores else None)  # fmt: skip
        return Running(process, log, time.monotonic(), slot)

    def finish(self, run, running, stopping):
        running.log.close()
        code, run_dir = running.process.returncode, self.settings.runs_dir / run.name
        seconds = time.monotonic() - running.started
        if code == 0 and (run_dir / "finished.json").is_file():
            final = json.loads((run_dir / "finished.json").read_text()).get("final_eval_return")
            outcome = Outcome("finished", seconds, f"eval/episodic_return {final:.1f}" if isinstance(final, (int, float)) else "")
        elif code == 130 or stopping:
            saved = (run_dir / "checkpoint.pt").is_file()
            reason = "checkpoint saved; run the sweep again to resume it" if saved else "stopped before its first checkpoint; run the sweep again to start it over"
            outcome = Outcome("interrupted", seconds, reason)
        else:
            log_text = (run_dir / "log.txt").read_text(encoding="utf-8", errors="replace")
            outcome = Outcome("failed", seconds, f"{describe_exit(code)}: {failure_reason(log_text)}")
        say(f"{outcome.status} {run.name} after {format_duration(outcome.seconds)}{': ' + outcome.reason if outcome.reason else ''}")
        return outcome

    def show_progress(self, running):
        """Each running run's latest progress line, if it is new."""
        for run, entry in running.items():
            line = latest_progress(self.settings.runs_dir / run.name / "log.txt", run.name)
            if line is not None and line != entry.last_progress:
                say(line)
                entry.last_progress = line

    def run(self, runs):
        """Run `runs` in order until all have ended or a stop was asked for; True if it was."""
        pending, running = deque(runs), {}
        every = self.settings.progress_every
        next_progress = time.monotonic() + every
        with StopRequest() as stop:
            while running or (pending and not stop.signals):
                # start runs while there are free workers and no stop was asked for, each on a free slot's cores
                while pending and len(running) < self.settings.workers and not stop.signals:
                    run = pending.popleft()
                    action, command = plan(run, self.settings)
                    if action == "skip":
                        self.outcomes[run] = Outcome("skipped")
                        say(f"skipped {run.name} (already finished)")
                    else:
                        taken = {entry.slot for entry in running.values()}
                        slot = min(set(range(len(self.slots))) - taken) if self.slots else None
                        running[run] = self.start(run, action, command, slot)
                # pass each Ctrl-C / SIGTERM on to each running run, once (send_signal ignores a run that just ended)
                for entry in running.values():
                    while self.forward_signals and entry.signals_sent < len(stop.signals):
                        entry.process.send_signal(stop.signals[entry.signals_sent])
                        entry.signals_sent += 1
                # collect the runs that ended
                for run, entry in list(running.items()):
                    if entry.process.poll() is not None:
                        self.outcomes[run] = self.finish(run, entry, stopping=bool(stop.signals))
                        del running[run]
                if every and time.monotonic() >= next_progress:
                    self.show_progress(running)
                    next_progress = time.monotonic() + every
                if running:
                    time.sleep(0.2)
        return bool(stop.signals)


def say(line):
    print(f"[sweep] {line}", flush=True)


def summary(runs, outcomes, settings):
    """The closing report, one line per run that did not finish, after a count of each status."""
    counts = {status: sum(o.status == status for o in outcomes.values()) for status in ("finished", "skipped", "failed", "interrupted")}
    lines = [f"== sweep {settings.env_id}: {len(runs)} runs: {counts['finished']} finished, {counts['skipped']} skipped (already finished), "
             f"{counts['failed']} failed, {counts['interrupted']} interrupted, {len(runs) - len(outcomes)} not run"]  # fmt: skip
    for run in runs:
        outcome = outcomes.get(run)
        if outcome is None:
            lines.append(f"not run: {run.name}")
        elif outcome.status in ("failed", "interrupted"):
            lines.append(f"{outcome.status}: {run.name} ({shown_path(settings.runs_dir / run.name / 'log.txt')}): {outcome.reason}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------------------
class OneLineParser(argparse.ArgumentParser):
    def error(self, message):  # one line, like every other mistake, instead of usage + error
        print(f"error: {message} (see scripts/sweep.sh --help)", file=sys.stderr)
        sys.exit(2)


def parse_args(argv):
    parser = OneLineParser(prog="scripts/sweep.sh", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="print the run matrix and what each run would do; run nothing")
    mode.add_argument("--print-matrix", action="store_true", help="one run name per line, in the Slurm array's order")
    mode.add_argument("--count", action="store_true", help="the number of runs in the matrix")
    mode.add_argument("--task", type=int, metavar="I", help="run only run I of the matrix (0-based; one Slurm array task)")
    return parser.parse_args(argv)


def main(argv=None, environ=os.environ):
    """Returns the exit status: 0 when every run finished, 1 when one failed, 130 when stopped, 2 for a wrong setting."""
    args = parse_args(argv)
    try:
        settings = read_settings(environ)
        runs = matrix(settings)
        if args.task is not None and not 0 <= args.task < len(runs):
            raise UsageError(f"task {args.task} is outside the run matrix (0..{len(runs) - 1}: {len(runs)} runs)")
        chosen = runs if args.task is None else runs[args.task : args.task + 1]
        for run in chosen:
            conflict = folder_conflict(run, settings)
            if conflict:
                raise UsageError(conflict)
    except UsageError:  # its line is printed
        return 2

    if args.print_matrix:
        print("\n".join(run.name for run in runs))
        return 0
    if args.count:
        print(len(runs))
        return 0
    if args.task is None:
        cores, pinned = len(usable_cores()), core_slots(settings) is not None
        print(f"== sweep {settings.env_id}: {len(runs)} runs, {settings.total_timesteps} steps each, {settings.workers} at a time"
              f"{', each on its own core' if pinned else ''}, into {shown_path(settings.runs_dir)}", flush=True)  # fmt: skip
        if settings.workers > cores:
            print(f"note: WORKERS={settings.workers} on {cores} CPU cores: runs share cores, each slower, and the "
                  "runs' speeds say nothing of the method's")  # fmt: skip
    if args.dry_run or settings.dry_run:
        width = max(len(run.name) for run in chosen)
        print("\n".join(plan_line(run, settings, width) for run in chosen))
        return 0

    sweep = Sweep(settings, forward_signals="SLURM_JOB_ID" not in environ)
    stopped = sweep.run(chosen)
    print(summary(chosen, sweep.outcomes, settings), flush=True)
    if stopped:
        print("stopped: run the same command again to continue")
        return 130
    return 0 if all(o.status in ("finished", "skipped") for o in sweep.outcomes.values()) and len(sweep.outcomes) == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
