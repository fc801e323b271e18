"""Seed sweep for CAMEL: every condition x every seed of one environment, WORKERS runs at a time.

  ENV_ID=Hopper-v4 LLM_POLICY=policies/hopper.py SEEDS="1 2 3" WORKERS=2 scripts/sweep.sh
  scripts/hopper.sh                   # the same with Hopper's settings (also walker2d.sh, ant.sh)
  VARIANT=qbc_gwarm_noboot_cu2 CONDITIONS="baseline camel" scripts/hopper.sh   # baseline and camel_qbc_gwarm_noboot_cu2: TD3, CAMEL+
  VARIANT=ls25k EXTRA_ARGS="--learning-starts 25000" CONDITIONS="baseline camel" scripts/hopper.sh   # baseline_ls25k, camel_ls25k
  scripts/sweep.sh --dry-run          # print the run matrix and what each run would do; run nothing
  scripts/sweep.sh --print-matrix     # one "condition seed" line per run, in the Slurm array's order
  scripts/sweep.sh --count            # the number of runs in the matrix
  scripts/sweep.sh --task I           # run only run I of the matrix (0-based; one Slurm array task)
(scripts/sweep.sh runs this file, scripts/sweep.py, which needs only Python's standard library.)

Settings (environment variables):
  ENV_ID           Gymnasium env id (default Hopper-v4)
  SEEDS            seeds, space-separated (default "1 2 3")
  CONDITIONS       conditions, space-separated (default: baseline random random_no_ma_em, then
                   camel camel_no_ma_em if LLM_POLICY is set, then expert expert_no_ma_em if an expert is found;
                   camel_tuned only when named)
  TOTAL_TIMESTEPS  environment steps per run (default 1000000)
  WORKERS          runs at a time on this machine (default 1; at most one per CPU core)
  TORCH_THREADS    torch threads per run, passed as --torch-threads (default 1: runs beside other work stay fast;
                   0 is torch's default)
  TRAINER          td3 (camel_td3.py, the default) or sac (camel_sac.py: the paper's CAMEL on SAC, without CAMEL+'s
                   levers; the same flags otherwise)
  LLM_POLICY       guide file for the camel conditions, the LLM-written guide, e.g. policies/hopper.py
  TUNED_POLICY     guide file for the camel_tuned conditions, the hand-written tuned guide, e.g. policies/tuned/hopper.py
  EXPERT_MODEL     expert for the expert conditions: a .cleanrl_model file or a Hugging Face repo id such as
                   cleanrl/Hopper-v4-td3_continuous_action-seed1 (default: experts/{ENV_ID}.cleanrl_model, made by
                   scripts/train_expert.sh, or experts/{ENV_ID}/td3_continuous_action.cleanrl_model, which
                   `hf download cleanrl/{ENV_ID}-td3_continuous_action-seed1 td3_continuous_action.cleanrl_model
                   --local-dir experts/{ENV_ID}` gives, whichever exists)
  EXTRA_ARGS       more trainer flags for every new run, split as a shell would (e.g. "--eval-frequency 10000"); flags
                   that change the algorithm need a VARIANT, or their runs take the plain runs' names (and a finished
                   plain run is skipped instead of run with them)
  VARIANT          a name for the runs that EXTRA_ARGS changes: each condition's runs are named {condition}_{VARIANT}
                   ({guide}_{VARIANT}_no_ma_em for a *_no_ma_em one, so that plot.py pairs it with its own control);
                   letters and digits, joined by single _ . or -. Name a setting the way camel_utils/conditions.py does:
                   ls25k for --learning-starts 25000 (plot.py labels it "learning from 25k"). A VARIANT made of
                   camel_td3.py's CAMEL+ levers brings their flags, and leaves baseline (no guide) as it is:
                   VARIANT=qbc_gwarm_noboot_cu2 CONDITIONS="baseline camel" runs TD3 and CAMEL+, camel_td3.py's default.
                   Several, space-separated, run every condition under each in one pool of WORKERS (no core idles
                   between them); `plain` stands for the conditions as they are. Several only of CAMEL+ levers'
                   names and plain (EXTRA_ARGS goes to every run): VARIANT="qbc_gwarm_noboot_cu2 plain" runs CAMEL+ and the
                   paper's CAMEL
  RUNS_DIR         where run folders go (default <repo>/runs); its name must be "runs", because the trainer writes
                   to ./runs: runs are started from the folder that holds it
  PYTHON           the interpreter for the runs (default <repo>/.venv/bin/python if it exists, else this one)
  DRY_RUN=1        the same as --dry-run

Conditions (each run's --exp-name is its condition; with VARIANT, {condition}_{VARIANT}; with TRAINER=sac, sac_ before it;
the naming rule, what guided a run and then the settings where it differs from the paper's CAMEL, is in
camel_utils/conditions.py: every camel_td3.py run gets --paper, then its VARIANT's flags):
  baseline         no guide (TD3, or SAC)
  camel            --llm-policy $LLM_POLICY (the LLM-written guide)
  camel_tuned      --llm-policy $TUNED_POLICY (the hand-written guide, tuned on the env's reward)
  random           --random-guide
  expert           --expert-model $EXPERT_MODEL
  NAME=FILE.py     --llm-policy FILE.py under the name NAME, to compare guides, e.g. lean=policies/poor/hopper_lean.py
  *_no_ma_em       the same guide with --no-masking-aware --no-epsilon-masking (the paper's "w/o MA EM")
A guide or expert file inside the repository is passed relative to it when runs start in the repository (RUNS_DIR
unset), so that the runs log, and plot.py exports, paths that mean the same on every machine.

Each run is RUNS_DIR/{ENV_ID}__{exp_name}__{seed}, with its output appended to log.txt there under a header line.
A run with finished.json is skipped, one with checkpoint.pt is resumed (--resume), any other is started fresh:
re-running the same command after an interruption continues the sweep. A run that fails is reported at the end
with the last error line of its log, and the other runs go on; the sweep then exits 1. A resumed or finished run
keeps its own settings (changing TOTAL_TIMESTEPS does not extend it). Ctrl-C or SIGTERM stops the sweep: it passes
the signal on to each running run, which saves a checkpoint; the sweep reports them and exits 130 (a second Ctrl-C
is passed on too, and stops the runs at once, unsaved). Under Slurm, which signals every process of a job itself,
the sweep passes nothing on, so that each run gets the signal once.
"""

import argparse
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
sys.path.insert(0, str(REPO))  # camel_utils' conditions and cli, standard library only like this file

from camel_utils.cli import USER_CWD, UsageError  # noqa: E402
from camel_utils.conditions import NO_MA_EM, SWEEP_GUIDES, is_hub_repo_id, variant_flags  # noqa: E402

TRAINERS = {"td3": "camel_td3.py", "sac": "camel_sac.py"}
NO_MA_EM_FLAGS = ("--no-masking-aware", "--no-epsilon-masking")  # what makes a condition its _no_ma_em control
HUB_EXPERT_FILE = "td3_continuous_action.cleanrl_model"  # the file in CleanRL's Hub repos


# ---------------------------------------------------------------------------------------------------------
# Settings, from environment variables
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Condition:
    name: str  # the run's --exp-name (before TRAINER's prefix)
    flags: tuple = ()  # the trainer flags that make it this condition


@dataclass
class Settings:
    """A sweep's settings (see the module docstring for each variable); paths are absolute."""

    env_id: str
    seeds: list
    conditions: list  # of Condition
    total_timesteps: int
    workers: int
    torch_threads: int
    trainer: str  # td3 or sac
    trainer_script: Path
    llm_policy: Optional[Path]
    tuned_policy: Optional[Path]
    expert_model: Optional[str]  # a file's absolute path or a Hub repo id
    extra_args: list
    runs_dir: Path
    python: str
    dry_run: bool = False
    repo: Path = REPO

    @property
    def algorithm_flags(self):
        """camel_td3.py's --paper, for every run: a run's name says how it differs from the paper's CAMEL."""
        return ["--paper"] if self.trainer == "td3" else []

    @property
    def workdir(self):
        """Where runs start: the trainer writes to ./runs, so the folder that holds RUNS_DIR."""
        return self.runs_dir.parent


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


def parse_condition(text, guides, expert_model, env_id, path):
    """A Condition from its name in CONDITIONS; UsageError if it is unknown or lacks its guide. `guides` holds the
    guide files of camel and camel_tuned (None where unset); `path` turns a file into the trainer's argument."""
    if "=" in text:  # NAME=FILE.py: a guide file of one's own
        name, file = text.split("=", 1)
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name) or "__" in name or name.removesuffix(NO_MA_EM) in SWEEP_GUIDES:
            raise UsageError(f"condition {text}: NAME in NAME=FILE.py must be letters, digits, _ . - (no '__'), and not a built-in condition")
        if not Path(file).is_file():
            raise UsageError(f"condition {text}: {file}: no such guide file")
        return Condition(name, ("--llm-policy", path(file)) + (NO_MA_EM_FLAGS if name.endswith(NO_MA_EM) else ()))
    guide = text.removesuffix(NO_MA_EM)
    if guide not in SWEEP_GUIDES or text == "baseline" + NO_MA_EM:
        raise UsageError(f"unknown condition '{text}' (known: {' '.join(SWEEP_GUIDES)}, each guided one also with {NO_MA_EM}, "
                         "and NAME=FILE.py for a guide file of your own)")  # fmt: skip
    if guide == "camel" and guides["camel"] is None:
        raise UsageError(f"condition {text} needs LLM_POLICY, a guide file such as policies/hopper.py")
    if guide == "camel_tuned" and guides["camel_tuned"] is None:
        raise UsageError(f"condition {text} needs TUNED_POLICY, a guide file such as policies/tuned/hopper.py")
    if guide == "expert" and expert_model is None:
        raise UsageError(f"condition {text} needs an expert: none at experts/{env_id}.cleanrl_model (scripts/train_expert.sh {env_id} "
                         f"makes it) or experts/{env_id}/{HUB_EXPERT_FILE} (hf download cleanrl/{env_id}-td3_continuous_action-seed1 "
                         f"{HUB_EXPERT_FILE} --local-dir experts/{env_id}); or set EXPERT_MODEL to a file or a Hub repo id")  # fmt: skip
    if guide in guides:  # camel, camel_tuned
        flags = ("--llm-policy", path(guides[guide]))
    elif guide == "expert":  # a file, or a Hub repo id as it is
        flags = ("--expert-model", path(expert_model) if Path(expert_model).is_file() else expert_model)
    else:
        flags = {"baseline": (), "random": ("--random-guide",)}[guide]
    return Condition(text, flags + (NO_MA_EM_FLAGS if text.endswith(NO_MA_EM) else ()))


def with_variant(condition, variant, trainer="td3"):
    """The condition under VARIANT's name, NAME_VARIANT (NAME_VARIANT_no_ma_em for a _no_ma_em one), with the same
    flags: EXTRA_ARGS gives the variant's own, except a camel_td3.py VARIANT made of CAMEL+ levers, which brings their
    flags (camel_utils.conditions.variant_flags). The levers act on a guide: without one, the run stays `baseline`."""
    try:
        levers = variant_flags(variant) if trainer == "td3" else []
    except ValueError as e:  # a lever that has left the trainer
        raise UsageError(str(e)) from None
    if not variant or (levers and condition.name == "baseline"):
        return condition
    base = condition.name.removesuffix(NO_MA_EM)
    return Condition(f"{base}_{variant}{condition.name[len(base):]}", (*levers, *condition.flags))


def read_variants(text, trainer):
    """VARIANT's names, in order ("" for `plain`, the conditions as they are): one name, or several space-separated
    ones made only of CAMEL+ levers' names or `plain`, since EXTRA_ARGS, which gives any other VARIANT its flags, goes
    to every run. UsageError names what is wrong."""
    names = text.split() or ["plain"]
    for name in names:
        if not re.fullmatch(r"[A-Za-z0-9]+([_.-][A-Za-z0-9]+)*", name):
            raise UsageError(f"VARIANT '{name}' must be letters and digits, joined by single _ . or - (e.g. ls25k, distill_1)")
    if len(set(names)) < len(names):
        raise UsageError(f"VARIANT names a variant twice: {text}")
    if trainer != "td3":
        for name in names:
            try:
                levers = name != "plain" and variant_flags(name)
            except ValueError:  # a retired lever's name: a lever's all the same
                levers = True
            if levers:
                raise UsageError(f"VARIANT {name} names CAMEL+ levers, which {TRAINERS[trainer]} does not have (it trains the "
                                 "paper's CAMEL on SAC): leave VARIANT out, or use TRAINER=td3")  # fmt: skip
    if len(names) > 1:
        for name in names:
            try:
                levers = name == "plain" or trainer == "td3" and variant_flags(name)
            except ValueError as e:  # a lever that has left the trainer
                raise UsageError(str(e)) from None
            if not levers:
                raise UsageError(f"VARIANT '{text}': several variants must each be made of CAMEL+ levers' names "
                                 f"(qbc_gwarm_noboot_cu2, gwarm, ...) or be plain; {name} takes its flags from EXTRA_ARGS, which would go to "
                                 "every run: sweep it on its own")  # fmt: skip
    return ["" if name == "plain" else name for name in names]


def read_settings(environ=os.environ, repo=REPO):
    """The sweep's settings from environment variables, checked: UsageError names the first wrong one."""
    env_id = environ.get("ENV_ID") or "Hopper-v4"
    trainer = environ.get("TRAINER") or "td3"
    if trainer not in TRAINERS:
        raise UsageError(f"TRAINER must be one of {', '.join(TRAINERS)}, got '{trainer}'")
    trainer_script = repo / TRAINERS[trainer]
    if not trainer_script.is_file():
        raise UsageError(f"TRAINER={trainer} needs {TRAINERS[trainer]}, which this checkout does not have (yet); TRAINER=td3 uses camel_td3.py")

    runs_dir = Path(environ.get("RUNS_DIR") or repo / "runs").absolute()
    if runs_dir.name != "runs":
        raise UsageError(f"RUNS_DIR={runs_dir} must be a folder named 'runs' (the trainer writes to ./runs); e.g. RUNS_DIR=/scratch/me/runs")
    seeds_text = environ.get("SEEDS", "1 2 3")
    if not seeds_text.split():
        raise UsageError("SEEDS is empty")
    seeds = [integer("SEEDS", seed, 0) for seed in seeds_text.split()]

    guides = {}
    for guide, variable in (("camel", "LLM_POLICY"), ("camel_tuned", "TUNED_POLICY")):
        file = environ.get(variable) or None
        if file is not None and not Path(file).is_file():
            raise UsageError(f"{variable} {file}: no such guide file")
        guides[guide] = file and Path(file).resolve()
    llm_policy = guides["camel"]
    expert_model = environ.get("EXPERT_MODEL") or None
    if expert_model is None:
        found = find_expert(repo, env_id)
        expert_model = found and str(found)
    elif Path(expert_model).is_file():
        expert_model = str(Path(expert_model).resolve())
    elif not is_hub_repo_id(expert_model):
        raise UsageError(f"EXPERT_MODEL {expert_model}: no such file (nor a Hugging Face repo id such as cleanrl/{env_id}-td3_continuous_action-seed1)")

    names = (environ.get("CONDITIONS") or "").split()
    if not names:
        names = ["baseline", "random", "random_no_ma_em"]
        names += ["camel", "camel_no_ma_em"] if llm_policy else []
        names += ["expert", "expert_no_ma_em"] if expert_model else []
    variants = read_variants(environ.get("VARIANT") or "", trainer)

    def path(file):
        return passed_path(file, repo, runs_dir.parent)

    if len(set(names)) < len(names):
        raise UsageError(f"CONDITIONS names a condition twice: {' '.join(names)}")
    parsed = [parse_condition(name, guides, expert_model, env_id, path) for name in names]
    by_name = {}  # run name -> condition: one the levers leave as it is (baseline) runs once
    for variant in variants:
        for condition in (with_variant(c, variant, trainer) for c in parsed):
            if by_name.setdefault(condition.name, condition) != condition:
                raise UsageError(f"two conditions of CONDITIONS and VARIANT would both be named {condition.name}: rename the NAME=FILE.py one")
    conditions = list(by_name.values())

    python = environ.get("PYTHON") or (str(repo / ".venv/bin/python") if os.access(repo / ".venv/bin/python", os.X_OK) else sys.executable)
    if os.sep in python:  # runs start in another folder
        python = str(Path(python).absolute())
    try:
        extra_args = shlex.split(environ.get("EXTRA_ARGS", ""))
    except ValueError as e:
        raise UsageError(f"EXTRA_ARGS cannot be split into flags: {e}") from None
    return Settings(
        env_id=env_id, seeds=seeds, conditions=conditions,
        total_timesteps=integer("TOTAL_TIMESTEPS", environ.get("TOTAL_TIMESTEPS") or "1000000", 1),
        workers=integer("WORKERS", environ.get("WORKERS") or "1", 1),
        torch_threads=integer("TORCH_THREADS", environ.get("TORCH_THREADS") or "1", 0),
        trainer=trainer, trainer_script=trainer_script, llm_policy=llm_policy, tuned_policy=guides["camel_tuned"], expert_model=expert_model,
        extra_args=extra_args,
        runs_dir=runs_dir, python=python, dry_run=environ.get("DRY_RUN", "0") not in ("", "0"), repo=repo,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# The run matrix, and what each run would do now
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    condition: Condition
    seed: int
    name: str  # {env_id}__{exp_name}__{seed}
    exp_name: str


def matrix(settings):
    """Every (condition, seed), seeds outermost, so that seed 1 of every condition comes first."""
    prefix = "" if settings.trainer == "td3" else f"{settings.trainer}_"
    runs = []
    for seed in settings.seeds:
        for condition in settings.conditions:
            exp_name = prefix + condition.name
            runs.append(Run(condition, seed, f"{settings.env_id}__{exp_name}__{seed}", exp_name))
    return runs


def plan(run, settings):
    """(action, command): `skip` a finished run (no command), `resume` one with a checkpoint, `start` any other."""
    run_dir = settings.runs_dir / run.name
    threads = ["--torch-threads", str(settings.torch_threads)]  # a machine setting: a resumed run takes it too
    if (run_dir / "finished.json").is_file():
        return "skip", []
    if (run_dir / "checkpoint.pt").is_file():
        return "resume", [settings.python, str(settings.trainer_script), "--resume", f"runs/{run.name}", *threads]
    command = [settings.python, str(settings.trainer_script), "--env-id", settings.env_id, "--seed", str(run.seed),
               "--exp-name", run.exp_name, "--run-name", run.name, "--total-timesteps", str(settings.total_timesteps),
               *settings.algorithm_flags, *run.condition.flags, *threads, *settings.extra_args]  # fmt: skip
    return "start", command


def plan_line(run, settings):
    """One line of --dry-run: action, condition, seed, and the command (repo paths relative when runs start there)."""
    action, command = plan(run, settings)
    shown = f"(finished: {settings.runs_dir / run.name / 'finished.json'})" if action == "skip" else shlex.join(command)
    if settings.workdir == settings.repo:
        shown = shown.replace(f"{settings.repo}/", "")
    return f"{action:<7} {run.condition.name:<16} seed {run.seed:<4} {shown}"


def failure_reason(log_text):
    """Why a run failed, from its log: the last `error: ...` line of its latest attempt (the lines after the last
    `=== ` header), else that attempt's last line (a traceback's ends in the exception)."""
    lines = log_text.splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("=== ")]
    lines = [line for line in lines[headers[-1] + 1 if headers else 0 :] if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    line = (errors or lines or ["no output"])[-1]
    return line if len(line) <= 300 else line[:297] + "..."


# ---------------------------------------------------------------------------------------------------------
# Running: WORKERS child processes at a time, polled; signals passed on from the main loop
# ---------------------------------------------------------------------------------------------------------
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
    signals_sent: int = 0


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
        self.outcomes = {}
        # the runs print commands (resume, evaluate) as seen from the folder the sweep was started in, where the user is
        self.run_env = {**os.environ, USER_CWD: os.environ.get(USER_CWD) or os.getcwd()}
        if settings.torch_threads:  # BLAS in NumPy and torch's intra-op pool, also for resumed runs
            self.run_env.update(OMP_NUM_THREADS=str(settings.torch_threads), MKL_NUM_THREADS=str(settings.torch_threads))

    def start(self, run, action, command):
        run_dir = self.settings.runs_dir / run.name
        run_dir.mkdir(parents=True, exist_ok=True)
        log = open(run_dir / "log.txt", "a")
        log.write(f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} {action} on {socket.gethostname()}: {shlex.join(command)}\n")
        log.flush()
        say(f"{action} {run.condition.name} seed {run.seed} -> {run_dir / 'log.txt'}")
        # Outside Slurm a run gets its own session, so that a terminal's Ctrl-C reaches it only through the sweep,
        # once; under Slurm it stays in the job's process group, which Slurm signals (and tracks) as a whole.
        process = subprocess.Popen(command, cwd=self.settings.workdir, env=self.run_env, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=self.forward_signals)  # fmt: skip
        return Running(process, log, time.monotonic())

    def finish(self, run, running, stopping):
        running.log.close()
        code, run_dir = running.process.returncode, self.settings.runs_dir / run.name
        seconds = time.monotonic() - running.started
        if code == 0 and (run_dir / "finished.json").is_file():
            outcome = Outcome("finished", seconds)
        elif code == 130 or stopping:
            saved = (run_dir / "checkpoint.pt").is_file()
            reason = "checkpoint saved; run the sweep again to resume it" if saved else "stopped before its first checkpoint; run the sweep again to start it over"
            outcome = Outcome("interrupted", seconds, reason)
        else:
            log_text = (run_dir / "log.txt").read_text(encoding="utf-8", errors="replace")
            outcome = Outcome("failed", seconds, f"{describe_exit(code)}: {failure_reason(log_text)}")
        say(f"{outcome.status} {run.condition.name} seed {run.seed} ({outcome.seconds:.0f} s){': ' + outcome.reason if outcome.reason else ''}")
        return outcome

    def run(self, runs):
        """Run `runs` in order until all have ended or a stop was asked for; True if it was."""
        pending, running = deque(runs), {}
        with StopRequest() as stop:
            while running or (pending and not stop.signals):
                # start runs while there are free workers and no stop was asked for
                while pending and len(running) < self.settings.workers and not stop.signals:
                    run = pending.popleft()
                    action, command = plan(run, self.settings)
                    if action == "skip":
                        self.outcomes[run] = Outcome("skipped")
                        say(f"skipped {run.condition.name} seed {run.seed} (already finished)")
                    else:
                        running[run] = self.start(run, action, command)
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
            lines.append(f"not run: {run.condition.name} seed {run.seed}")
        elif outcome.status in ("failed", "interrupted"):
            log = settings.runs_dir / run.name / "log.txt"
            lines.append(f"{outcome.status}: {run.condition.name} seed {run.seed} ({log}): {outcome.reason}")
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
    mode.add_argument("--print-matrix", action="store_true", help='one "condition seed" line per run, in the Slurm array\'s order')
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
    except UsageError:  # its line is printed
        return 2

    if args.print_matrix:
        print("\n".join(f"{run.condition.name} {run.seed}" for run in runs))
        return 0
    if args.count:
        print(len(runs))
        return 0
    if args.task is not None:
        runs = runs[args.task : args.task + 1]
    dry_run = args.dry_run or settings.dry_run
    if args.task is None:
        print(f"== sweep {settings.env_id}: {len(settings.conditions)} conditions x {len(settings.seeds)} seeds, {settings.total_timesteps} "
              f"steps each, trainer {settings.trainer_script.name}, {settings.workers} at a time, into {settings.runs_dir}", flush=True)  # fmt: skip
        if settings.workers > (os.cpu_count() or 1):
            print(f"note: WORKERS={settings.workers} on {os.cpu_count()} CPU cores: runs share cores, each slower, and the "
                  "runs' speeds say nothing of the method's")  # fmt: skip
    if dry_run:
        print("\n".join(plan_line(run, settings) for run in runs))
        return 0

    sweep = Sweep(settings, forward_signals="SLURM_JOB_ID" not in environ)
    stopped = sweep.run(runs)
    print(summary(runs, sweep.outcomes, settings), flush=True)
    if stopped:
        print("stopped: run the same command again to continue")
        return 130
    return 0 if all(o.status in ("finished", "skipped") for o in sweep.outcomes.values()) and len(sweep.outcomes) == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
