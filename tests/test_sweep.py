"""Specification of the sweep scheduler (scripts/sweep.py, behind scripts/sweep.sh, the per-env wrappers and the
Slurm array script): the run matrix of methods x guides x seeds, each run's name and command, skip/resume/start from
the files on disk, the settings' checks, failure reports, progress lines, cores and signals, and the example commands
of the scripts' headers. Runs are played by a fake trainer (PYTHON=fake_trainer), so no test trains for real except
the tiny sweep at the end."""

import hashlib
import importlib.util
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from camel_utils.conditions import default_exp_name
from camel_utils.preregistration import planned_runs, registered_experiments

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
spec = importlib.util.spec_from_file_location("sweep", SCRIPTS / "sweep.py")
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)

SETTING_NAMES = ["ENV_ID", "METHODS", "GUIDES", "SEEDS", "TOTAL_TIMESTEPS", "WORKERS", "TORCH_THREADS", "LLM_POLICY", "EXPERT_MODEL",
                 "EXTRA_ARGS", "RUNS_DIR", "PROGRESS_EVERY", "PYTHON", "DRY_RUN", "CONDITIONS", "VARIANT", "TRAINER", "TUNED_POLICY",
                 "SLURM_ARRAY_TASK_ID", "SLURM_JOB_ID"]  # fmt: skip
GUIDE = "import numpy as np\ndef policy(obs):\n    return np.zeros(3)\n"
NO_MA_EM = ["--no-masking-aware", "--no-epsilon-masking"]


@pytest.fixture
def repo(tmp_path):
    """A checkout with the two TD3 trainers (no camel_sac.py, no experts) and a shipped guide policies/hopper.py."""
    root = tmp_path / "repo"
    (root / "policies").mkdir(parents=True)
    (root / "camel_td3.py").write_text("")
    (root / "camel_plus_td3.py").write_text("")
    (root / "policies" / "hopper.py").write_text(GUIDE)
    return root


@pytest.fixture
def guide(tmp_path):
    path = tmp_path / "guide.py"
    path.write_text(GUIDE)
    return path


def settings(repo, tmp_path, **environ):
    return sweep.read_settings({"RUNS_DIR": str(tmp_path / "runs"), **{k: str(v) for k, v in environ.items()}}, repo=repo)


def names(s):
    return [run.name for run in sweep.matrix(s)]


def run_script(script, *args, cwd=None, **environ):
    """Run a sweep entry point with the settings as environment variables; no inherited sweep setting leaks in."""
    env = {k: v for k, v in os.environ.items() if k not in SETTING_NAMES}
    env.update({k: str(v) for k, v in environ.items()})
    return subprocess.run(["bash", str(script), *args], cwd=cwd or REPO, env=env, capture_output=True, text=True, timeout=300)


# ---------------------------------------------------------------------------------------------------------
# The run matrix: each run's name and command
# ---------------------------------------------------------------------------------------------------------
def test_default_is_td3_the_papers_camel_and_camel_plus_with_the_envs_shipped_guide(repo, tmp_path):
    s = settings(repo, tmp_path, SEEDS="1", PYTHON="python3")
    assert names(s) == ["Hopper-v4__td3__1", "Hopper-v4__camel_td3__1", "Hopper-v4__camel_plus_td3__1"]
    td3, camel, camel_plus = (sweep.plan(run, s)[1] for run in sweep.matrix(s))
    assert td3[1] == str(repo / "camel_td3.py") and "--llm-policy" not in td3
    assert camel[1] == str(repo / "camel_td3.py") and camel[12:14] == ["--llm-policy", str(repo / "policies" / "hopper.py")]
    assert camel_plus[1] == str(repo / "camel_plus_td3.py") and camel_plus[12:14] == camel[12:14]


def test_matrix_runs_each_method_with_each_guide_seeds_outermost(repo, tmp_path):
    s = settings(repo, tmp_path, SEEDS="3 1", METHODS="camel_plus_td3 td3", GUIDES="llm random")
    assert names(s) == [f"Hopper-v4__{exp}__{seed}" for seed in (3, 1) for exp in ("camel_plus_td3", "camel_plus_td3_random", "td3")]


def test_a_runs_name_adds_its_guides_name_to_the_method_unless_it_is_the_envs_shipped_guide(repo, tmp_path, guide):
    lean = tmp_path / "poor" / "hopper_lean.py"
    lean.parent.mkdir()
    lean.write_text(GUIDE)
    s = settings(repo, tmp_path, SEEDS="24", METHODS="camel_plus_td3", GUIDES=f"llm {lean} tuned={guide} shipped={repo}/policies/hopper.py "
                 "expert random", EXPERT_MODEL="cleanrl/Hopper-v4-td3_continuous_action-seed1")  # fmt: skip
    assert names(s) == ["Hopper-v4__camel_plus_td3__24", "Hopper-v4__camel_plus_td3_hopper_lean__24", "Hopper-v4__camel_plus_td3_tuned__24",
                        "Hopper-v4__camel_plus_td3_shipped__24", "Hopper-v4__camel_plus_td3_expert__24", "Hopper-v4__camel_plus_td3_random__24"]  # fmt: skip
    # LLM_POLICY names another file: its runs carry its stem
    assert names(settings(repo, tmp_path, SEEDS="1", METHODS="camel_td3", LLM_POLICY=lean)) == ["Hopper-v4__camel_td3_hopper_lean__1"]


def test_run_names_are_those_the_queue_gives_the_registered_runs(tmp_path):
    """scripts/queue.py names the preregistered runs; the sweep gives the same method, guide and seed the same folder."""
    for experiment in registered_experiments():
        for planned in planned_runs(experiment):
            guide = str(REPO / planned.guide) if planned.guide else "llm"
            environ = dict(ENV_ID=planned.env_id, METHODS=planned.method, SEEDS=planned.seed, GUIDES=guide)
            (run,) = sweep.matrix(sweep.read_settings({"RUNS_DIR": str(tmp_path / "runs"), **{k: str(v) for k, v in environ.items()}}))
            assert run.name == planned.name


def test_each_method_is_its_trainers_default_exp_name():
    for method, (script, guided) in sweep.METHODS.items():
        assert default_exp_name(script, guided) == method


def test_each_run_starts_its_methods_trainer_with_the_method_as_exp_name_and_its_guides_flags(repo, tmp_path, guide):
    (repo / "camel_sac.py").write_text("")
    s = settings(repo, tmp_path, SEEDS="7", TOTAL_TIMESTEPS=5000, METHODS="td3 camel_td3 camel_plus_td3 sac camel_sac camel_plus_td3_no_ma_em",
                 GUIDES=f"{guide} random", EXTRA_ARGS="--eval-frequency 1000", PYTHON="/usr/bin/python3")  # fmt: skip
    commands = {run.name: sweep.plan(run, s) for run in sweep.matrix(s)}
    assert {action for action, _ in commands.values()} == {"start"}
    expected = {  # run name: (trainer, method, the guide's and the method's flags)
        "td3": ("camel_td3.py", "td3", []), "sac": ("camel_sac.py", "sac", []),
        "camel_td3_guide": ("camel_td3.py", "camel_td3", ["--llm-policy", str(guide)]),
        "camel_td3_random": ("camel_td3.py", "camel_td3", ["--random-guide"]),
        "camel_plus_td3_guide": ("camel_plus_td3.py", "camel_plus_td3", ["--llm-policy", str(guide)]),
        "camel_sac_random": ("camel_sac.py", "camel_sac", ["--random-guide"]),
        "camel_plus_td3_no_ma_em_guide": ("camel_plus_td3.py", "camel_plus_td3_no_ma_em", ["--llm-policy", str(guide), *NO_MA_EM]),
        "camel_plus_td3_no_ma_em_random": ("camel_plus_td3.py", "camel_plus_td3_no_ma_em", ["--random-guide", *NO_MA_EM]),
    }  # fmt: skip
    for exp, (script, method, flags) in expected.items():
        name = f"Hopper-v4__{exp}__7"
        assert commands[name][1] == ["/usr/bin/python3", str(repo / script), "--env-id", "Hopper-v4", "--seed", "7", "--exp-name", method,
                                     "--run-name", name, "--total-timesteps", "5000", *flags, "--torch-threads", "1", "--eval-frequency", "1000"]  # fmt: skip
    assert len(commands) == 10  # camel_sac and camel_td3 with the guide file too


def test_files_inside_the_repository_are_passed_relative_to_it_when_runs_start_there(repo, tmp_path):
    (repo / "policies" / "tuned").mkdir()
    (repo / "policies" / "tuned" / "hopper.py").write_text(GUIDE)
    (repo / "experts").mkdir()
    (repo / "experts" / "Hopper-v4.cleanrl_model").write_bytes(b"model")
    environ = dict(SEEDS="1", METHODS="camel_td3", GUIDES=f"llm tuned={repo / 'policies' / 'tuned' / 'hopper.py'} expert")
    inside = sweep.read_settings({"RUNS_DIR": str(repo / "runs"), **environ}, repo=repo)
    assert [g.flags for g in inside.guides] == [("--llm-policy", "policies/hopper.py"), ("--llm-policy", "policies/tuned/hopper.py"),
                                                ("--expert-model", "experts/Hopper-v4.cleanrl_model")]  # fmt: skip
    # runs that start elsewhere (RUNS_DIR outside the repository) get absolute paths, which resolve from there
    outside = settings(repo, tmp_path, **environ)
    assert [g.flags[1] for g in outside.guides] == [str(repo / "policies/hopper.py"), str(repo / "policies/tuned/hopper.py"),
                                                    str(repo / "experts/Hopper-v4.cleanrl_model")]  # fmt: skip


def test_per_env_scripts_give_the_llm_guide_the_envs_shipped_file(tmp_path):
    result = run_script(SCRIPTS / "walker2d.sh", "--dry-run", SEEDS="1", METHODS="camel_td3", RUNS_DIR=tmp_path / "runs")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1].split()[1] == "Walker2d-v4__camel_td3__1"
    assert f"--llm-policy {REPO}/policies/walker2d.py" in result.stdout.splitlines()[1]


def test_torch_threads_default_to_one_per_run_and_pass_through_when_set(repo, tmp_path):
    (run,) = sweep.matrix(s := settings(repo, tmp_path, SEEDS="1", METHODS="td3"))
    assert sweep.plan(run, s)[1][-2:] == ["--torch-threads", "1"]
    (run,) = sweep.matrix(s := settings(repo, tmp_path, SEEDS="1", METHODS="td3", TORCH_THREADS=4))
    assert sweep.plan(run, s)[1][-2:] == ["--torch-threads", "4"]


def test_finished_runs_are_skipped_checkpointed_runs_resumed_by_their_trainer_and_others_started(repo, tmp_path):
    runs = tmp_path / "runs"
    for name, file in [("Hopper-v4__td3__1", "finished.json"), ("Hopper-v4__camel_plus_td3__1", "checkpoint.pt"),
                       ("Hopper-v4__camel_plus_td3__2", "log.txt")]:  # fmt: skip
        (runs / name).mkdir(parents=True)
        (runs / name / file).write_text("")  # a log alone is no run
    s = settings(repo, tmp_path, SEEDS="1 2", METHODS="td3 camel_plus_td3", PYTHON="python3")
    plans = [(run.name, *sweep.plan(run, s)) for run in sweep.matrix(s)]
    assert [(name, action) for name, action, _ in plans] == [
        ("Hopper-v4__td3__1", "skip"), ("Hopper-v4__camel_plus_td3__1", "resume"),
        ("Hopper-v4__td3__2", "start"), ("Hopper-v4__camel_plus_td3__2", "start")]  # fmt: skip
    assert plans[1][2] == ["python3", str(repo / "camel_plus_td3.py"), "--resume", "runs/Hopper-v4__camel_plus_td3__1", "--torch-threads", "1"]


def test_a_folder_that_holds_a_finished_run_of_another_guide_file_or_method_is_refused(tmp_path, guide):
    folder = tmp_path / "runs" / "Hopper-v4__camel_td3_guide__1"
    folder.mkdir(parents=True)
    ours = {"path": str(guide), "sha256": hashlib.sha256(guide.read_bytes()).hexdigest()}
    environ = dict(SEEDS="1", METHODS="camel_td3", GUIDES=guide, RUNS_DIR=tmp_path / "runs")
    for record, refused in [({"exp_name": "camel_td3", "guide_file": ours}, None), ({"exp_name": "camel_td3"}, None),  # older runs pass
                            ({"exp_name": "camel_td3", "guide_file": {**ours, "sha256": "0" * 64}}, "with guide file"),
                            ({"exp_name": "camel_plus_td3", "guide_file": ours}, "of camel_plus_td3, not camel_td3")]:  # fmt: skip
        (folder / "finished.json").write_text(json.dumps(record))
        result = run_script(SCRIPTS / "hopper.sh", "--dry-run", cwd=tmp_path, **environ)
        if refused is None:
            assert result.returncode == 0 and result.stdout.splitlines()[1].startswith("skip    Hopper-v4__camel_td3_guide__1 (finished: ")
        else:
            assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and result.stdout == ""
            assert result.stderr.startswith(f"error: runs/{folder.name} holds a finished run {refused}")
    (folder / "finished.json").write_text(json.dumps({"exp_name": "camel_td3", "guide_file": {**ours, "sha256": "0" * 64}}))
    assert "give this guide a name of its own (NAME=FILE.py) or the sweep another RUNS_DIR" in run_script(SCRIPTS / "hopper.sh", **environ).stderr


def test_two_guides_with_one_name_are_refused_before_anything_runs(repo, tmp_path, guide):
    other = tmp_path / "other" / "guide.py"
    other.parent.mkdir()
    other.write_text(GUIDE)
    with pytest.raises(sweep.UsageError, match=rf"^error: two runs would be named Hopper-v4__camel_td3_guide__1: camel_td3 with guide {guide} "
                                               rf"and camel_td3 with guide {other}; give a guide a name of its own with NAME=FILE.py$"):  # fmt: skip
        sweep.matrix(settings(repo, tmp_path, SEEDS="1", METHODS="camel_td3", GUIDES=f"{guide} {other}"))
    assert names(settings(repo, tmp_path, SEEDS="1", METHODS="camel_td3", GUIDES=f"{guide} mine={other}"))[1] == "Hopper-v4__camel_td3_mine__1"


def test_dry_run_prints_each_runs_plan_and_runs_nothing(tmp_path, guide):
    result = run_script(SCRIPTS / "hopper.sh", "--dry-run", SEEDS="1 2", METHODS="td3 camel_td3", GUIDES=guide, RUNS_DIR=tmp_path / "runs",
                        cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "== sweep Hopper-v4: 4 runs, 1000000 steps each, 1 at a time, into runs"
    assert [line.split()[:2] for line in lines[1:]] == [["start", f"Hopper-v4__{exp}__{seed}"] for seed in (1, 2) for exp in ("td3", "camel_td3_guide")]
    assert f"--llm-policy {guide}" in lines[2] and not (tmp_path / "runs").exists()


def test_print_matrix_is_one_run_name_per_line_and_count_agrees(tmp_path):
    environ = dict(SEEDS="1 2", METHODS="td3 camel_plus_td3", GUIDES="llm random", RUNS_DIR=tmp_path / "runs")
    matrix = run_script(SCRIPTS / "hopper.sh", "--print-matrix", **environ).stdout.splitlines()
    assert matrix == [f"Hopper-v4__{exp}__{seed}" for seed in (1, 2) for exp in ("td3", "camel_plus_td3", "camel_plus_td3_random")]
    assert run_script(SCRIPTS / "hopper.sh", "--count", **environ).stdout == "6\n"


# ---------------------------------------------------------------------------------------------------------
# Expert lookup, settings' checks
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("place", ["experts/Hopper-v4.cleanrl_model", "experts/Hopper-v4/td3_continuous_action.cleanrl_model"])
def test_expert_is_found_where_train_expert_or_the_documented_hf_download_puts_it(repo, tmp_path, place):
    assert sweep.find_expert(repo, "Hopper-v4") is None
    (repo / place).parent.mkdir(parents=True, exist_ok=True)
    (repo / place).write_bytes(b"model")
    s = settings(repo, tmp_path, METHODS="camel_td3", GUIDES="expert")
    assert s.expert_model == str(repo / place) and s.guides[0].flags == ("--expert-model", str(repo / place))


def test_a_method_needs_its_trainer_in_the_checkout(repo, tmp_path):
    with pytest.raises(sweep.UsageError, match=r"^error: method camel_sac needs camel_sac.py, which this checkout does not have$"):
        settings(repo, tmp_path, METHODS="td3 camel_sac")
    (repo / "camel_sac.py").write_text("")
    assert names(settings(repo, tmp_path, METHODS="sac camel_sac", SEEDS="1")) == ["Hopper-v4__sac__1", "Hopper-v4__camel_sac__1"]


def test_methods_without_a_guide_need_no_guide(repo, tmp_path):
    """TD3 alone runs on an env the project ships no guide for, whatever GUIDES says."""
    assert names(settings(repo, tmp_path, ENV_ID="HalfCheetah-v4", METHODS="td3", GUIDES="expert", SEEDS="1")) == ["HalfCheetah-v4__td3__1"]


@pytest.mark.parametrize("environ, message", [
    ({"METHODS": "td3 camel"}, "unknown method 'camel' \\(known: td3 camel_td3 camel_plus_td3 sac camel_sac; a guided one also with _no_ma_em"),
    ({"METHODS": "td3_no_ma_em"}, "unknown method 'td3_no_ma_em'"),
    ({"METHODS": "td3 td3"}, "METHODS names a method twice: td3 td3"),
    ({"GUIDES": "lmm"}, "unknown guide 'lmm' \\(llm, expert, random, FILE.py or NAME=FILE.py\\)"),
    ({"GUIDES": "/nonexistent/guide.py"}, "GUIDES /nonexistent/guide.py: /nonexistent/guide.py: no such guide file"),
    ({"GUIDES": "mine=/nonexistent/g"}, "GUIDES mine=/nonexistent/g: /nonexistent/g: no such guide file"),
    ({"GUIDES": "random={guide}"}, "guide random=.*: its name 'random' must be letters and digits, joined by single _ . or -, and not llm, expert, random"),
    ({"GUIDES": "my__guide={guide}"}, "guide my__guide=.*: its name 'my__guide' must be letters and digits"),
    ({"GUIDES": "llm llm"}, "GUIDES names a guide twice"),
    ({"GUIDES": "expert"}, "GUIDES=expert needs an expert: none at experts/Hopper-v4.cleanrl_model"),
    ({"LLM_POLICY": "/nonexistent/guide.py"}, "LLM_POLICY /nonexistent/guide.py: no such guide file"),
    ({"ENV_ID": "HalfCheetah-v4"}, "GUIDES=llm needs LLM_POLICY, a guide file: the project ships none for HalfCheetah-v4 \\(policies/halfcheetah.py does not exist\\)"),
    ({"EXPERT_MODEL": "missing/Hopper-v4.cleanrl_model"}, "EXPERT_MODEL missing/Hopper-v4.cleanrl_model: no such file"),
    ({"WORKERS": "0"}, "WORKERS must be an integer of at least 1"),
    ({"SEEDS": "1 two"}, "SEEDS must be an integer"),
    ({"PROGRESS_EVERY": "soon"}, "PROGRESS_EVERY must be an integer of at least 0"),
    ({"RUNS_DIR": "/tmp/results"}, "RUNS_DIR=/tmp/results must be a folder named 'runs'"),
    ({"EXTRA_ARGS": "--seed 3"}, "EXTRA_ARGS gives --seed, which the sweep sets from SEEDS"),
    ({"EXTRA_ARGS": "--exp-name=mine"}, "EXTRA_ARGS gives --exp-name, which the sweep sets from METHODS and GUIDES, which name the run"),
    ({"EXTRA_ARGS": "--eval-frequency 1000 --no-masking-aware"}, "EXTRA_ARGS gives --no-masking-aware, which the sweep sets from METHODS \\(a method's _no_ma_em control\\)"),
    ({"EXTRA_ARGS": "--llm-policy x.py"}, "EXTRA_ARGS gives --llm-policy, which the sweep sets from GUIDES"),
    ({"EXTRA_ARGS": "--learning-starts '25000"}, "EXTRA_ARGS cannot be split into flags"),
    ({"CONDITIONS": "baseline camel"}, "CONDITIONS has left the sweep \\(one trainer per method now\\): use METHODS and GUIDES"),
    ({"VARIANT": "qbc_gwarm_noboot_cu2"}, "VARIANT has left the sweep"),
    ({"TRAINER": "sac"}, "TRAINER has left the sweep .* use METHODS \\(sac, camel_sac\\)"),
    ({"TUNED_POLICY": "policies/tuned/hopper.py"}, "TUNED_POLICY has left the sweep .* use GUIDES=tuned=FILE.py"),
])  # fmt: skip
def test_bad_settings_are_one_error_line_before_anything_runs(repo, tmp_path, guide, environ, message):
    with pytest.raises(sweep.UsageError, match="^error: " + message.format(guide=guide)):
        settings(repo, tmp_path, **{k: v.format(guide=guide) for k, v in environ.items()})


def test_bad_setting_on_the_command_line_exits_2_with_one_line_and_creates_nothing(tmp_path):
    result = run_script(SCRIPTS / "sweep.sh", METHODS="td3 camle", RUNS_DIR=tmp_path / "runs", PYTHON="false")
    assert result.returncode == 2 and result.stderr.startswith("error: unknown method 'camle'") and len(result.stderr.splitlines()) == 1
    assert result.stdout == "" and not (tmp_path / "runs").exists()


def test_failure_reason_is_the_last_error_line_of_the_latest_attempt():
    log = "=== 2025-01-01 start: ...\nerror: old attempt\n=== 2025-01-02 resume: ...\nstep 100\nerror: first\nwarning: x\nerror: the guide fell over\nbye\n"
    assert sweep.failure_reason(log) == "error: the guide fell over"
    traceback = "=== header\nTraceback (most recent call last):\n  File \"x\", line 1\nZeroDivisionError: division by zero\n\n"
    assert sweep.failure_reason(traceback) == "ZeroDivisionError: division by zero"
    assert sweep.failure_reason("=== header\n") == "no output"


# ---------------------------------------------------------------------------------------------------------
# Running, with a fake trainer that does to a run folder what the trainers do, at once
# ---------------------------------------------------------------------------------------------------------
FAKE_TRAINER = """\
#!{python}
import os, signal, sys, time
from pathlib import Path

trainer, argv = sys.argv[1], sys.argv[2:]
with open(os.environ["CALLS"], "a") as calls:
    calls.write(" ".join([Path(trainer).name, *argv]) + "\\n")
flags = dict(zip(argv, argv[1:]))
name = flags.get("--run-name") or flags["--resume"].removeprefix("runs/")
run = Path("runs") / name
run.mkdir(parents=True, exist_ok=True)
print("threads", os.environ.get("OMP_NUM_THREADS"), flush=True)
if hasattr(os, "sched_getaffinity"):  # the cores it may run on
    (run / "cores.txt").write_text(" ".join(map(str, sorted(os.sched_getaffinity(0)))))
print(f"{{name}}: 100/200 steps (50%) | sps 90", file=sys.stderr, flush=True)  # the trainer's progress line, in its log
if os.environ.get("TRAIN_UNTIL_STOPPED"):  # train until a signal, then save a checkpoint, as the trainers do
    received = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    print("training", flush=True)
    while not received:
        time.sleep(0.05)
    time.sleep(1.0)  # time for a second signal to arrive, were one sent
    (run / "checkpoint.pt").write_bytes(b"")
    (run / "signals.txt").write_text(" ".join(signal.Signals(s).name for s in received))
    sys.exit(130)
time.sleep(float(os.environ.get("TRAIN_SECONDS", "0")))
if (flags.get("--exp-name"), flags.get("--seed")) == ("camel_td3", "2"):
    print("error: the guide fell over", file=sys.stderr)
    sys.exit(1)
(run / "checkpoint.pt").unlink(missing_ok=True)
(run / "finished.json").write_text('{{"final_eval_return": 123.45}}')
"""


@pytest.fixture
def fake(tmp_path):
    """Settings that run the fake trainer in tmp_path/runs; `calls` lists the commands it got."""
    path = tmp_path / "fake_trainer"
    path.write_text(FAKE_TRAINER.format(python=sys.executable))
    path.chmod(0o755)
    calls = tmp_path / "calls.txt"
    return SimpleNamespace(environ={"PYTHON": str(path), "RUNS_DIR": str(tmp_path / "runs"), "CALLS": str(calls)}, runs=tmp_path / "runs",
                           calls=lambda: calls.read_text().splitlines() if calls.exists() else [])  # fmt: skip


def test_a_failed_run_is_reported_with_its_reason_and_the_others_go_on(fake, tmp_path):
    result = run_script(SCRIPTS / "sweep.sh", SEEDS="1 2 3", METHODS="td3 camel_td3", WORKERS=2, cwd=tmp_path, **fake.environ)
    assert result.returncode == 1
    assert "6 runs: 5 finished, 0 skipped (already finished), 1 failed, 0 interrupted, 0 not run" in result.stdout
    assert re.search(r"^\[sweep\] finished Hopper-v4__td3__1 after \d+ s: eval/episodic_return 123.5$", result.stdout, re.M)
    failed = [line for line in result.stdout.splitlines() if line.startswith("failed:")]
    assert failed == ["failed: Hopper-v4__camel_td3__2 (runs/Hopper-v4__camel_td3__2/log.txt): exit 1: error: the guide fell over"]
    assert len(list(fake.runs.glob("*/finished.json"))) == 5
    log = (fake.runs / "Hopper-v4__camel_td3__2" / "log.txt").read_text().splitlines()
    assert log[0].startswith("=== ") and " start on " in log[0] and "--exp-name camel_td3" in log[0]
    assert log[1:] == ["threads 1", "Hopper-v4__camel_td3__2: 100/200 steps (50%) | sps 90", "error: the guide fell over"]


def test_rerun_skips_finished_runs_retries_the_failed_one_and_resumes_a_checkpointed_one(fake):
    environ = dict(SEEDS="1 2", METHODS="camel_plus_td3 camel_td3", **fake.environ)
    run_script(SCRIPTS / "sweep.sh", **environ)
    first = len(fake.calls())
    (fake.runs / "Hopper-v4__camel_plus_td3__2" / "finished.json").unlink()
    (fake.runs / "Hopper-v4__camel_plus_td3__2" / "checkpoint.pt").write_bytes(b"")
    again = run_script(SCRIPTS / "sweep.sh", **environ)
    assert "4 runs: 1 finished, 2 skipped (already finished), 1 failed" in again.stdout
    assert fake.calls()[first:] == ["camel_plus_td3.py --resume runs/Hopper-v4__camel_plus_td3__2 --torch-threads 1",
                                    "camel_td3.py --env-id Hopper-v4 --seed 2 --exp-name camel_td3 --run-name Hopper-v4__camel_td3__2 "
                                    f"--total-timesteps 1000000 --llm-policy {REPO}/policies/hopper.py --torch-threads 1"]  # fmt: skip
    assert (fake.runs / "Hopper-v4__camel_td3__2" / "log.txt").read_text().count("=== ") == 2  # both attempts


def test_each_running_run_shows_its_latest_progress_line_once(fake):
    result = run_script(SCRIPTS / "sweep.sh", SEEDS="1", METHODS="td3", PROGRESS_EVERY=1, TRAIN_SECONDS=3.5, **fake.environ)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines().count("[sweep] Hopper-v4__td3__1: 100/200 steps (50%) | sps 90") == 1
    quiet = run_script(SCRIPTS / "sweep.sh", SEEDS="2", METHODS="td3", PROGRESS_EVERY=0, TRAIN_SECONDS=1.5, **fake.environ)
    assert quiet.returncode == 0 and "100/200 steps" not in quiet.stdout


def test_workers_run_each_on_its_own_core_and_a_lone_worker_is_left_unpinned(fake):
    cores = sweep.usable_cores()
    if len(cores) < 2:
        pytest.skip("needs two cores")
    result = run_script(SCRIPTS / "sweep.sh", SEEDS="1", METHODS="td3 camel_td3", WORKERS=2, TRAIN_SECONDS=1, **fake.environ)
    assert result.returncode == 0, result.stderr
    assert "2 at a time, each on its own core" in result.stdout.splitlines()[0]
    pinned = {(fake.runs / f"Hopper-v4__{m}__1" / "cores.txt").read_text() for m in ("td3", "camel_td3")}
    assert pinned == {str(cores[0]), str(cores[1])}
    assert f"[sweep] start Hopper-v4__td3__1 on core {cores[0]} -> " in result.stdout
    alone = run_script(SCRIPTS / "sweep.sh", SEEDS="2", METHODS="td3", WORKERS=1, **fake.environ)
    assert alone.returncode == 0 and (fake.runs / "Hopper-v4__td3__2" / "cores.txt").read_text() == " ".join(map(str, cores))


def start_sweep(fake, **environ):
    """The sweep as a terminal's foreground job: its own process group, Ctrl-C not ignored; returns it once two
    runs are training."""
    env = {k: v for k, v in os.environ.items() if k not in SETTING_NAMES}
    env.update(fake.environ, TRAIN_UNTIL_STOPPED="1", **environ)
    process = subprocess.Popen(["bash", str(SCRIPTS / "sweep.sh")], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline = time.time() + 120
    while len([p for p in fake.runs.glob("*/log.txt") if "training" in p.read_text()]) < 2:
        assert time.time() < deadline and process.poll() is None
        time.sleep(0.1)
    return process


@pytest.mark.parametrize("how", ["SIGTERM to the sweep", "Ctrl-C to its process group"])
def test_a_stop_reaches_each_running_run_once_and_the_sweep_exits_130(fake, how):
    process = start_sweep(fake, SEEDS="1", METHODS="td3 camel_td3 camel_plus_td3", WORKERS="2")
    try:
        if how == "SIGTERM to the sweep":
            process.send_signal(signal.SIGTERM)
        else:
            os.killpg(process.pid, signal.SIGINT)
        out, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, out
    assert "3 runs: 0 finished, 0 skipped (already finished), 0 failed, 2 interrupted, 1 not run" in out
    assert "interrupted: Hopper-v4__td3__1" in out and "checkpoint saved" in out and "not run: Hopper-v4__camel_plus_td3__1" in out
    expected = "SIGTERM" if how == "SIGTERM to the sweep" else "SIGINT"
    assert sorted(p.read_text() for p in fake.runs.glob("*/signals.txt")) == [expected, expected]  # once each, saved


def test_slurm_array_task_runs_its_entry_of_the_same_matrix(fake):
    environ = dict(SEEDS="1 2", METHODS="td3 camel_td3 camel_plus_td3", **fake.environ)
    matrix = run_script(SCRIPTS / "hopper.sh", "--print-matrix", **environ).stdout.splitlines()
    for task, name in enumerate(matrix):
        result = run_script(SCRIPTS / "slurm_sweep.sbatch", SCRIPTS / "hopper.sh", SLURM_ARRAY_TASK_ID=task, DRY_RUN=1, **environ)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-1].split()[:2] == ["start", name]
    outside = run_script(SCRIPTS / "slurm_sweep.sbatch", SCRIPTS / "hopper.sh", SLURM_ARRAY_TASK_ID=6, DRY_RUN=1, **environ)
    assert outside.returncode == 2 and "task 6 is outside the run matrix (0..5: 6 runs)" in outside.stderr
    # a real task runs exactly its own run, and its exit status is the run's
    assert run_script(SCRIPTS / "slurm_sweep.sbatch", SCRIPTS / "hopper.sh", SLURM_ARRAY_TASK_ID=5, **environ).returncode == 0
    assert [p.parent.name for p in fake.runs.glob("*/finished.json")] == ["Hopper-v4__camel_plus_td3__2"]
    failing = run_script(SCRIPTS / "slurm_sweep.sbatch", SCRIPTS / "hopper.sh", SLURM_ARRAY_TASK_ID=4, **environ)
    assert failing.returncode == 1 and "failed Hopper-v4__camel_td3__2" in failing.stdout
    assert "--torch-threads 1" in fake.calls()[-1]  # SLURM_CPUS_PER_TASK unset: one thread


def test_more_workers_than_cores_is_said_before_the_runs(tmp_path):
    cores = len(sweep.usable_cores())
    result = run_script(SCRIPTS / "sweep.sh", "--dry-run", METHODS="td3", WORKERS=cores + 1, RUNS_DIR=tmp_path / "runs")
    assert result.returncode == 0, result.stderr
    assert "each on its own core" not in result.stdout.splitlines()[0]
    assert result.stdout.splitlines()[1] == (f"note: WORKERS={cores + 1} on {cores} CPU cores: runs share cores, each slower, "
                                             "and the runs' speeds say nothing of the method's")  # fmt: skip
    fits = run_script(SCRIPTS / "sweep.sh", "--dry-run", METHODS="td3", WORKERS=1, RUNS_DIR=tmp_path / "runs")
    assert "note: WORKERS" not in fits.stdout


# ---------------------------------------------------------------------------------------------------------
# The scripts' headers: every example works when pasted; --help is the header
# ---------------------------------------------------------------------------------------------------------
SWEEP_COMMAND = re.compile(r"^(?:#\s+|\s+)((?:[A-Z_]+=(?:\"[^\"]*\"|\S+) )*scripts/(?:sweep|hopper|walker2d|ant)\.sh\b.*?)(?:\s+#.*)?$")


def header_examples(path):
    """The sweep commands of a script's header comment (or, for sweep.py, its docstring), without their comments."""
    text = path.read_text()
    header = text.split('"""')[1] if path.suffix == ".py" else "\n".join(itertools.takewhile(lambda line: line.startswith("#"), text.splitlines()[1:]))
    return [match[1] for line in header.splitlines() if (match := SWEEP_COMMAND.match(line))]


@pytest.mark.parametrize("script", ["sweep.py", "sweep.sh", "hopper.sh", "walker2d.sh", "ant.sh"])
def test_every_example_sweep_command_in_a_headers_works_when_pasted(tmp_path, script):
    examples = header_examples(SCRIPTS / script)
    assert len(examples) >= (2 if script == "sweep.sh" else 4)
    for example in examples:  # pasted in the repository, as a dry run into a folder of the test's
        result = subprocess.run(["bash", "-c", example], cwd=REPO, capture_output=True, text=True, timeout=120,
                                env={**{k: v for k, v in os.environ.items() if k not in SETTING_NAMES}, "DRY_RUN": "1",
                                     "RUNS_DIR": str(tmp_path / "runs")})  # fmt: skip
        assert result.returncode == 0 and result.stdout, f"{example}: {result.stderr}"
    assert not (tmp_path / "runs").exists()


def test_the_slurm_header_submits_one_task_per_run_and_its_try_line_picks_the_task(tmp_path):
    """The header's submission, with sbatch standing in as a function that prints its arguments."""
    header = [line[4:] for line in (SCRIPTS / "slurm_sweep.sbatch").read_text().splitlines() if line.startswith("#   ")]
    script = "sbatch() { echo sbatch \"$@\"; }\n" + "\n".join(header)
    env = {**{k: v for k, v in os.environ.items() if k not in SETTING_NAMES}, "RUNS_DIR": str(tmp_path / "runs")}
    result = subprocess.run(["bash", "-ec", script], cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "sbatch --array=0-14 scripts/slurm_sweep.sbatch scripts/hopper.sh" in lines  # 3 methods x 5 seeds
    assert lines[-1].split()[:2] == ["start", "Hopper-v4__td3__2"]  # task 3 of the same matrix, tried without Slurm


@pytest.mark.parametrize("script", ["quickstart.sh", "figures.sh", "train_expert.sh"])
def test_a_scripts_help_is_its_whole_header_comment(script):
    text = (SCRIPTS / script).read_text().splitlines()
    header = [line[2:] for line in itertools.takewhile(lambda line: line.startswith("#"), text[1:])]
    result = subprocess.run(["bash", str(SCRIPTS / script), "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.splitlines() == header and len(header) >= 5


def test_figures_of_your_own_runs_go_to_plots_and_leave_the_committed_results_alone(tmp_path):
    """RUNS=DIR alone draws into plots/, not over docs/results/ (and rewrites neither runs.md nor results.md's
    quotes); an argument is refused in one line, before anything is drawn."""
    committed = {p: p.stat().st_mtime_ns for p in (REPO / "docs").rglob("*.md")}
    result = subprocess.run(["bash", str(SCRIPTS / "figures.sh")], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "RUNS": str(tmp_path)})  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"figures of the runs in {tmp_path}, into plots/"
    assert "not drawn (no runs for them in" in result.stdout and "updated the tables" not in result.stdout
    assert {p: p.stat().st_mtime_ns for p in (REPO / "docs").rglob("*.md")} == committed
    wrong = subprocess.run(["bash", str(SCRIPTS / "figures.sh"), "runs/"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.strip() == "error: scripts/figures.sh takes no arguments: its settings are RUNS, OUT, FORMATS and PYTHON (see --help)"


# ---------------------------------------------------------------------------------------------------------
# A tiny real sweep: the paper's control and CAMEL-SAC, 150 steps each, 2 at a time
# ---------------------------------------------------------------------------------------------------------
def test_tiny_real_sweep_finishes_each_run_skips_them_on_rerun_and_refuses_an_edited_guide(tmp_path, guide):
    environ = dict(SEEDS="1", METHODS="camel_td3_no_ma_em camel_sac", GUIDES=guide, RUNS_DIR=tmp_path / "runs", TOTAL_TIMESTEPS=150,
                   WORKERS=2, EXTRA_ARGS="--learning-starts 100 --batch-size 32 --eval-episodes 1 --eval-frequency 100")  # fmt: skip
    first = run_script(SCRIPTS / "hopper.sh", **environ)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "2 runs: 2 finished, 0 skipped (already finished), 0 failed" in first.stdout
    for method, script in (("camel_td3_no_ma_em", "camel_td3.py"), ("camel_sac", "camel_sac.py")):
        run = tmp_path / "runs" / f"Hopper-v4__{method}_guide__1"
        finished = json.loads((run / "finished.json").read_text())
        assert (finished["exp_name"], finished["script"], finished["total_timesteps"]) == (method, script, 150)
        assert finished["guide_file"]["sha256"] == hashlib.sha256(guide.read_bytes()).hexdigest() and not (run / "checkpoint.pt").exists()
    assert "--no-masking-aware --no-epsilon-masking" in (tmp_path / "runs" / "Hopper-v4__camel_td3_no_ma_em_guide__1" / "log.txt").read_text()
    again = run_script(SCRIPTS / "hopper.sh", **environ)
    assert again.returncode == 0 and "2 runs: 0 finished, 2 skipped (already finished), 0 failed" in again.stdout
    guide.write_text(GUIDE.replace("np.zeros(3)", "np.ones(3) * 0.1"))  # the same file, another guide: its runs are not these
    edited = run_script(SCRIPTS / "hopper.sh", **environ)
    assert edited.returncode == 2 and "holds a finished run with guide file" in edited.stderr and edited.stdout == ""
