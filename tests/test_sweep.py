"""Specification of the sweep scheduler (scripts/sweep.py, behind scripts/sweep.sh, the per-env wrappers and the
Slurm array script): the run matrix, skip/resume/start from the files on disk, the command of each condition, the
expert lookup, the settings' checks, failure reports, and signals passed on to the runs. Runs are played by a
fake trainer (PYTHON=fake_trainer), so no test trains for real except the last, which runs camel_td3.py briefly."""

import importlib.util
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
spec = importlib.util.spec_from_file_location("sweep", SCRIPTS / "sweep.py")
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)

SETTING_NAMES = ["ENV_ID", "SEEDS", "CONDITIONS", "TOTAL_TIMESTEPS", "WORKERS", "TORCH_THREADS", "TRAINER", "LLM_POLICY",
                 "TUNED_POLICY", "EXPERT_MODEL", "EXTRA_ARGS", "VARIANT", "RUNS_DIR", "PYTHON", "DRY_RUN", "SLURM_ARRAY_TASK_ID", "SLURM_JOB_ID"]  # fmt: skip
GUIDE = "import numpy as np\ndef policy(obs):\n    return np.zeros(3)\n"


@pytest.fixture
def repo(tmp_path):
    """A checkout with camel_td3.py only (no camel_sac.py, no experts), for the settings that look into the repo."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "camel_td3.py").write_text("")
    return root


@pytest.fixture
def guide(tmp_path):
    path = tmp_path / "guide.py"
    path.write_text(GUIDE)
    return path


def settings(repo, tmp_path, **environ):
    return sweep.read_settings({"RUNS_DIR": str(tmp_path / "runs"), **{k: str(v) for k, v in environ.items()}}, repo=repo)


def run_script(script, *args, **environ):
    """Run a sweep entry point with the settings as environment variables; no inherited sweep setting leaks in."""
    env = {k: v for k, v in os.environ.items() if k not in SETTING_NAMES}
    env.update({k: str(v) for k, v in environ.items()})
    return subprocess.run(["bash", str(script), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


# ---------------------------------------------------------------------------------------------------------
# The run matrix and each run's command
# ---------------------------------------------------------------------------------------------------------
def test_matrix_has_every_condition_for_each_seed_seeds_outermost(repo, tmp_path):
    s = settings(repo, tmp_path, SEEDS="3 1", CONDITIONS="random baseline")
    assert [(run.condition.name, run.seed, run.name) for run in sweep.matrix(s)] == [
        ("random", 3, "Hopper-v4__random__3"), ("baseline", 3, "Hopper-v4__baseline__3"),
        ("random", 1, "Hopper-v4__random__1"), ("baseline", 1, "Hopper-v4__baseline__1")]  # fmt: skip


def test_default_conditions_are_the_papers_with_camel_and_expert_ones_when_their_guides_exist(repo, tmp_path, guide):
    names = lambda s: [c.name for c in s.conditions]  # noqa: E731
    assert names(settings(repo, tmp_path)) == ["baseline", "random", "random_no_ma_em"]
    assert names(settings(repo, tmp_path, LLM_POLICY=guide)) == ["baseline", "random", "random_no_ma_em", "camel", "camel_no_ma_em"]
    hub = settings(repo, tmp_path, EXPERT_MODEL="cleanrl/Hopper-v4-td3_continuous_action-seed1")
    assert names(hub)[-2:] == ["expert", "expert_no_ma_em"]


def test_each_condition_builds_its_trainer_command(repo, tmp_path, guide):
    own = tmp_path / "lean.py"
    own.write_text(GUIDE)
    s = settings(repo, tmp_path, SEEDS="7", TOTAL_TIMESTEPS=5000, LLM_POLICY=guide, EXPERT_MODEL="cleanrl/Hopper-v4-td3_continuous_action-seed1",
                 CONDITIONS=f"baseline camel camel_no_ma_em random random_no_ma_em expert lean={own}", EXTRA_ARGS="--eval-frequency 1000",
                 PYTHON="/usr/bin/python3")  # fmt: skip
    commands = {run.condition.name: sweep.plan(run, s) for run in sweep.matrix(s)}
    assert {action for action, _ in commands.values()} == {"start"}
    start = ["/usr/bin/python3", str(repo / "camel_td3.py"), "--env-id", "Hopper-v4", "--seed", "7"]
    tail = ["--torch-threads", "1", "--eval-frequency", "1000"]
    guides = {
        "baseline": [], "camel": ["--llm-policy", str(guide)], "random": ["--random-guide"],
        "camel_no_ma_em": ["--llm-policy", str(guide), "--no-masking-aware", "--no-epsilon-masking"],
        "random_no_ma_em": ["--random-guide", "--no-masking-aware", "--no-epsilon-masking"],
        "expert": ["--expert-model", "cleanrl/Hopper-v4-td3_continuous_action-seed1"], "lean": ["--llm-policy", str(own)],
    }  # fmt: skip
    for name, flags in guides.items():
        assert commands[name][1] == start + ["--exp-name", name, "--run-name", f"Hopper-v4__{name}__7", "--total-timesteps", "5000",
                                             "--paper", *flags, *tail]  # names say how a run differs from the paper's CAMEL


def test_camel_tuned_runs_the_tuned_guide_and_camel_the_llm_written_one(repo, tmp_path, guide):
    tuned = tmp_path / "tuned.py"
    tuned.write_text(GUIDE)
    s = settings(repo, tmp_path, SEEDS="1", LLM_POLICY=guide, TUNED_POLICY=tuned, CONDITIONS="camel camel_tuned camel_tuned_no_ma_em")
    flags = {run.condition.name: sweep.plan(run, s)[1][13:-2] for run in sweep.matrix(s)}
    assert flags == {"camel": ["--llm-policy", str(guide)], "camel_tuned": ["--llm-policy", str(tuned)],
                     "camel_tuned_no_ma_em": ["--llm-policy", str(tuned), "--no-masking-aware", "--no-epsilon-masking"]}  # fmt: skip
    assert [c.name for c in settings(repo, tmp_path, TUNED_POLICY=tuned).conditions] == ["baseline", "random", "random_no_ma_em"]
    with pytest.raises(sweep.UsageError, match="condition camel_tuned needs TUNED_POLICY, a guide file such as policies/tuned/hopper.py"):
        settings(repo, tmp_path, CONDITIONS="camel_tuned")


def test_files_inside_the_repository_are_passed_relative_to_it_when_runs_start_there(repo, tmp_path):
    (repo / "policies" / "tuned").mkdir(parents=True)
    (repo / "policies" / "tuned" / "hopper.py").write_text(GUIDE)
    (repo / "policies" / "poor").mkdir()
    (repo / "policies" / "poor" / "lean.py").write_text(GUIDE)
    (repo / "experts").mkdir()
    (repo / "experts" / "Hopper-v4.cleanrl_model").write_bytes(b"model")
    environ = dict(SEEDS="1", TUNED_POLICY=repo / "policies" / "tuned" / "hopper.py",
                   CONDITIONS=f"camel_tuned expert lean={repo / 'policies' / 'poor' / 'lean.py'}")  # fmt: skip
    inside = sweep.read_settings({"RUNS_DIR": str(repo / "runs"), **{k: str(v) for k, v in environ.items()}}, repo=repo)
    assert [c.flags for c in inside.conditions] == [("--llm-policy", "policies/tuned/hopper.py"),
                                                    ("--expert-model", "experts/Hopper-v4.cleanrl_model"),
                                                    ("--llm-policy", "policies/poor/lean.py")]  # fmt: skip
    # runs that start elsewhere (RUNS_DIR outside the repository) get absolute paths, which resolve from there
    outside = settings(repo, tmp_path, **environ)
    assert [c.flags[1] for c in outside.conditions] == [str(repo / "policies/tuned/hopper.py"), str(repo / "experts/Hopper-v4.cleanrl_model"),
                                                        str(repo / "policies/poor/lean.py")]  # fmt: skip


def test_per_env_scripts_give_camel_tuned_its_tuned_guide(tmp_path):
    result = run_script(SCRIPTS / "walker2d.sh", "--dry-run", SEEDS="1", CONDITIONS="camel_tuned", RUNS_DIR=tmp_path / "runs")
    assert result.returncode == 0, result.stderr
    assert f"--llm-policy {REPO}/policies/tuned/walker2d.py" in result.stdout.splitlines()[1]


def test_torch_threads_default_to_one_per_run_and_pass_through_when_set(repo, tmp_path):
    (run,) = sweep.matrix(s := settings(repo, tmp_path, SEEDS="1", CONDITIONS="baseline"))
    assert sweep.plan(run, s)[1][-2:] == ["--torch-threads", "1"]
    (run,) = sweep.matrix(s := settings(repo, tmp_path, SEEDS="1", CONDITIONS="baseline", TORCH_THREADS=4))
    assert sweep.plan(run, s)[1][-2:] == ["--torch-threads", "4"]


def test_finished_runs_are_skipped_checkpointed_runs_resumed_and_others_started(repo, tmp_path):
    runs = tmp_path / "runs"
    for name, file in [("Hopper-v4__baseline__1", "finished.json"), ("Hopper-v4__random__1", "checkpoint.pt"), ("Hopper-v4__random__2", "log.txt")]:
        (runs / name).mkdir(parents=True)
        (runs / name / file).write_text("")  # a log alone is no run
    s = settings(repo, tmp_path, SEEDS="1 2", CONDITIONS="baseline random", PYTHON="python3")
    plans = [(run.name, *sweep.plan(run, s)) for run in sweep.matrix(s)]
    assert [(name, action) for name, action, _ in plans] == [
        ("Hopper-v4__baseline__1", "skip"), ("Hopper-v4__random__1", "resume"),
        ("Hopper-v4__baseline__2", "start"), ("Hopper-v4__random__2", "start")]  # fmt: skip
    assert plans[1][2] == ["python3", str(repo / "camel_td3.py"), "--resume", "runs/Hopper-v4__random__1", "--torch-threads", "1"]


def test_dry_run_prints_each_runs_plan_and_runs_nothing(tmp_path, guide):
    result = run_script(SCRIPTS / "hopper.sh", "--dry-run", SEEDS="1 2", CONDITIONS="baseline camel", LLM_POLICY=guide, RUNS_DIR=tmp_path / "runs")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("== sweep Hopper-v4: 2 conditions x 2 seeds, 1000000 steps each, trainer camel_td3.py")
    assert [line.split()[:4] for line in lines[1:]] == [["start", c, "seed", s] for s in "12" for c in ("baseline", "camel")]
    assert f"--llm-policy {guide}" in lines[2] and not (tmp_path / "runs").exists()


def test_variant_runs_each_condition_under_its_own_name_with_extra_args(repo, tmp_path, guide):
    s = settings(repo, tmp_path, SEEDS="1", CONDITIONS="camel camel_no_ma_em", LLM_POLICY=guide, VARIANT="fullactor",
                 EXTRA_ARGS="--actor-full-bounds-share 0.5", PYTHON="python3")  # fmt: skip
    (plain, no_ma_em) = sweep.matrix(s)
    assert plain.name == "Hopper-v4__camel_fullactor__1" and no_ma_em.name == "Hopper-v4__camel_fullactor_no_ma_em__1"
    assert sweep.plan(plain, s)[1] == [
        "python3", str(repo / "camel_td3.py"), "--env-id", "Hopper-v4", "--seed", "1", "--exp-name", "camel_fullactor",
        "--run-name", "Hopper-v4__camel_fullactor__1", "--total-timesteps", "1000000", "--paper", "--llm-policy", str(guide),
        "--torch-threads", "1", "--actor-full-bounds-share", "0.5"]  # fmt: skip
    (tmp_path / "runs/Hopper-v4__camel__1").mkdir(parents=True)
    (tmp_path / "runs/Hopper-v4__camel__1/finished.json").write_text("{}")  # the plain run does not stand in for the variant
    assert sweep.plan(plain, s)[0] == "start"
    (run,) = sweep.matrix(settings(repo, tmp_path, SEEDS="1", CONDITIONS="random", VARIANT="distill_1", TRAINER="td3"))
    assert run.exp_name == "random_distill_1"


def test_a_variant_of_camel_plus_levers_brings_their_flags_and_sac_runs_get_no_paper_flag(repo, tmp_path, guide):
    baseline, run = sweep.matrix(s := settings(repo, tmp_path, SEEDS="1", CONDITIONS="baseline camel", LLM_POLICY=guide,
                                               VARIANT="qbc_gwarm_noboot_cu2"))  # fmt: skip
    assert run.exp_name == "camel_qbc_gwarm_noboot_cu2"  # CAMEL+, camel_td3.py's default
    assert sweep.plan(run, s)[1][12:-2] == ["--paper", "--guide-bc-coef", "0.4", "--warmup-actions", "guide",
                                            "--critic-updates-per-step", "2", "--llm-policy", str(guide)]  # fmt: skip
    assert baseline.exp_name == "baseline" and sweep.plan(baseline, s)[1][12:-2] == ["--paper"]  # no guide: levers do nothing
    (run,) = sweep.matrix(s := settings(repo, tmp_path, SEEDS="1", CONDITIONS="camel", LLM_POLICY=guide, VARIANT="qbc_ls25k"))
    assert sweep.plan(run, s)[1][12:-2] == ["--paper", "--llm-policy", str(guide)]  # not only levers: EXTRA_ARGS gives its flags
    (repo / "camel_sac.py").write_text("")
    (run,) = sweep.matrix(s := settings(repo, tmp_path, SEEDS="1", CONDITIONS="camel", LLM_POLICY=guide, TRAINER="sac"))
    assert sweep.plan(run, s)[1][12:-2] == ["--llm-policy", str(guide)]  # camel_sac.py has no CAMEL+ levers

def test_several_variants_run_in_one_pool_seed_by_seed_and_plain_is_the_condition_as_it_is(repo, tmp_path, guide):
    s = settings(repo, tmp_path, SEEDS="1 2", CONDITIONS="baseline camel", LLM_POLICY=guide, VARIANT="qbc_gwarm_noboot plain gwarm")
    runs = sweep.matrix(s)
    assert [(run.exp_name, run.seed) for run in runs] == [(name, seed) for seed in (1, 2) for name in
                                                          ("baseline", "camel_qbc_gwarm_noboot", "camel", "camel_gwarm")]  # fmt: skip
    flags = {run.exp_name: sweep.plan(run, s)[1][12:-2] for run in runs}
    assert flags["baseline"] == ["--paper"]  # the levers leave TD3 as it is: it runs once per seed
    assert flags["camel"] == ["--paper", "--llm-policy", str(guide)]
    assert flags["camel_gwarm"] == ["--paper", "--warmup-actions", "guide", "--llm-policy", str(guide)]
    assert [run.exp_name for run in sweep.matrix(settings(repo, tmp_path, SEEDS="1", CONDITIONS="camel", LLM_POLICY=guide, VARIANT="plain"))] == ["camel"]


def test_variant_dry_run_and_print_matrix_show_its_names_and_flags(tmp_path, guide):
    environ = dict(SEEDS="1 2", CONDITIONS="camel", LLM_POLICY=guide, RUNS_DIR=tmp_path / "runs", VARIANT="tfb",
                   EXTRA_ARGS="--target-full-bounds", TOTAL_TIMESTEPS=100000, PYTHON="python3")  # fmt: skip
    assert run_script(SCRIPTS / "hopper.sh", "--print-matrix", **environ).stdout.splitlines() == ["camel_tfb 1", "camel_tfb 2"]
    lines = run_script(SCRIPTS / "hopper.sh", "--dry-run", **environ).stdout.splitlines()[1:]
    assert lines[0] == (f"start   camel_tfb        seed 1    python3 {REPO}/camel_td3.py --env-id Hopper-v4 --seed 1 --exp-name camel_tfb "
                        f"--run-name Hopper-v4__camel_tfb__1 --total-timesteps 100000 --paper --llm-policy {guide} --torch-threads 1 "
                        "--target-full-bounds")  # fmt: skip


def test_print_matrix_and_count_agree(tmp_path, guide):
    environ = dict(SEEDS="1 2", CONDITIONS="baseline random camel", LLM_POLICY=guide, RUNS_DIR=tmp_path / "runs")
    matrix = run_script(SCRIPTS / "hopper.sh", "--print-matrix", **environ).stdout.splitlines()
    assert matrix == ["baseline 1", "random 1", "camel 1", "baseline 2", "random 2", "camel 2"]
    assert run_script(SCRIPTS / "hopper.sh", "--count", **environ).stdout == "6\n"


# ---------------------------------------------------------------------------------------------------------
# Expert lookup, trainer choice, settings' checks
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("place", ["experts/Hopper-v4.cleanrl_model", "experts/Hopper-v4/td3_continuous_action.cleanrl_model"])
def test_expert_is_found_where_train_expert_or_the_documented_hf_download_puts_it(repo, tmp_path, place):
    assert sweep.find_expert(repo, "Hopper-v4") is None
    (repo / place).parent.mkdir(parents=True, exist_ok=True)
    (repo / place).write_bytes(b"model")
    s = settings(repo, tmp_path)
    assert s.expert_model == str(repo / place) and [c.name for c in s.conditions][-2:] == ["expert", "expert_no_ma_em"]


def test_trainer_sac_runs_camel_sac_under_its_own_run_names_and_needs_the_file(repo, tmp_path):
    with pytest.raises(sweep.UsageError, match=r"^error: TRAINER=sac needs camel_sac.py, which this checkout does not have"):
        settings(repo, tmp_path, TRAINER="sac")
    (repo / "camel_sac.py").write_text("")
    s = settings(repo, tmp_path, TRAINER="sac", SEEDS="1", CONDITIONS="baseline")
    (run,) = sweep.matrix(s)
    command = sweep.plan(run, s)[1]
    assert command[1] == str(repo / "camel_sac.py") and run.name == "Hopper-v4__sac_baseline__1" and "sac_baseline" in command


@pytest.mark.parametrize("environ, message", [
    ({"CONDITIONS": "baseline camle"}, "unknown condition 'camle' \\(known: baseline camel camel_tuned random expert"),
    ({"CONDITIONS": "camel_tuned=/tmp/x.py"}, "NAME in NAME=FILE.py must be .* not a built-in condition"),
    ({"CONDITIONS": "camel", "TUNED_POLICY": "/nonexistent/tuned.py"}, "TUNED_POLICY /nonexistent/tuned.py: no such guide file"),
    ({"CONDITIONS": "camel"}, "condition camel needs LLM_POLICY"),
    ({"CONDITIONS": "camel", "LLM_POLICY": "/nonexistent/guide.py"}, "LLM_POLICY /nonexistent/guide.py: no such guide file"),
    ({"CONDITIONS": "expert"}, "condition expert needs an expert: none at experts/Hopper-v4.cleanrl_model"),
    ({"EXPERT_MODEL": "missing/Hopper-v4.cleanrl_model"}, "EXPERT_MODEL missing/Hopper-v4.cleanrl_model: no such file"),
    ({"CONDITIONS": "mine=/nonexistent/guide.py"}, "/nonexistent/guide.py: no such guide file"),
    ({"CONDITIONS": "baseline baseline"}, "names a condition twice"),
    ({"WORKERS": "0"}, "WORKERS must be an integer of at least 1"),
    ({"SEEDS": "1 two"}, "SEEDS must be an integer"),
    ({"TRAINER": "ppo"}, "TRAINER must be one of td3, sac"),
    ({"RUNS_DIR": "/tmp/results"}, "must be a folder named 'runs'"),
    ({"VARIANT": "full__actor"}, "VARIANT 'full__actor' must be letters and digits, joined by single _ . or -"),
    ({"VARIANT": "full actor"}, "VARIANT 'full actor': several variants must each be made of CAMEL\\+ levers' names .* full takes its flags from EXTRA_ARGS"),
    ({"VARIANT": "qbc_gwarm_noboot ls25k"}, "ls25k takes its flags from EXTRA_ARGS, which would go to every run: sweep it on its own"),
    ({"VARIANT": "qbc_gwarm_noboot plain qbc_gwarm_noboot"}, "VARIANT names a variant twice"),
    ({"VARIANT": "qbc_gwarm_noboot prop"}, "prop \\(guide proposal\\) has left camel_td3.py"),
    ({"VARIANT": "qbc_gwarm"}, "the guide bootstrap \\(which qbc brings unless noboot follows\\) has left camel_td3.py; its runs were "
                               "made with commit [0-9a-f]{7} or before. CAMEL\\+ is VARIANT=qbc_gwarm_noboot_cu2"),
    ({"VARIANT": "boot_gwarm"}, "the guide bootstrap .* has left camel_td3.py"),
    ({"VARIANT": "gwarm plain", "CONDITIONS": "camel camel_gwarm=/etc/hostname", "LLM_POLICY": "/etc/hostname"},
     "two conditions of CONDITIONS and VARIANT would both be named camel_gwarm: rename the NAME=FILE.py one"),
])  # fmt: skip
def test_bad_settings_are_one_error_line_before_anything_runs(repo, tmp_path, environ, message):
    with pytest.raises(sweep.UsageError, match=message):
        settings(repo, tmp_path, **environ)


def test_bad_setting_on_the_command_line_exits_2_with_one_line_and_creates_nothing(tmp_path):
    result = run_script(SCRIPTS / "sweep.sh", CONDITIONS="baseline camle", RUNS_DIR=tmp_path / "runs", PYTHON="false")
    assert result.returncode == 2 and result.stderr.startswith("error: unknown condition 'camle'") and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_failure_reason_is_the_last_error_line_of_the_latest_attempt():
    log = "=== 2025-01-01 start: ...\nerror: old attempt\n=== 2025-01-02 resume: ...\nstep 100\nerror: first\nwarning: x\nerror: the guide fell over\nbye\n"
    assert sweep.failure_reason(log) == "error: the guide fell over"
    traceback = "=== header\nTraceback (most recent call last):\n  File \"x\", line 1\nZeroDivisionError: division by zero\n\n"
    assert sweep.failure_reason(traceback) == "ZeroDivisionError: division by zero"
    assert sweep.failure_reason("=== header\n") == "no output"


# ---------------------------------------------------------------------------------------------------------
# Running, with a fake trainer that does to a run folder what camel_td3.py does, instantly
# ---------------------------------------------------------------------------------------------------------
FAKE_TRAINER = """\
#!{python}
import os, signal, sys, time
from pathlib import Path
from types import SimpleNamespace

trainer, argv = sys.argv[1], sys.argv[2:]
with open(os.environ["CALLS"], "a") as calls:
    calls.write(" ".join([Path(trainer).name, *argv]) + "\\n")
flags = dict(zip(argv, argv[1:]))
name = flags.get("--run-name") or flags["--resume"].removeprefix("runs/")
run = Path("runs") / name
run.mkdir(parents=True, exist_ok=True)
print("step 100/200 threads", os.environ.get("OMP_NUM_THREADS"), flush=True)
if os.environ.get("TRAIN_UNTIL_STOPPED"):  # train until a signal, then save a checkpoint, as camel_td3.py does
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
if (flags.get("--exp-name"), flags.get("--seed")) == ("random", "2"):
    print("error: the random guide fell over", file=sys.stderr)
    sys.exit(1)
(run / "checkpoint.pt").unlink(missing_ok=True)
(run / "finished.json").write_text("{{}}")
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


def test_a_failed_run_is_reported_with_its_reason_and_the_others_go_on(fake):
    result = run_script(SCRIPTS / "sweep.sh", SEEDS="1 2 3", CONDITIONS="baseline random", WORKERS=2, **fake.environ)
    assert result.returncode == 1
    assert "6 runs: 5 finished, 0 skipped (already finished), 1 failed, 0 interrupted, 0 not run" in result.stdout
    failed = [line for line in result.stdout.splitlines() if line.startswith("failed:")]
    assert failed == [f"failed: random seed 2 ({fake.runs}/Hopper-v4__random__2/log.txt): exit 1: error: the random guide fell over"]
    assert len(list(fake.runs.glob("*/finished.json"))) == 5
    log = (fake.runs / "Hopper-v4__random__2" / "log.txt").read_text().splitlines()
    assert log[0].startswith("=== ") and " start on " in log[0] and "--exp-name random" in log[0]
    assert log[1:] == ["step 100/200 threads 1", "error: the random guide fell over"]


def test_rerun_skips_finished_runs_retries_the_failed_one_and_resumes_a_checkpointed_one(fake):
    environ = dict(SEEDS="1 2", CONDITIONS="baseline random", **fake.environ)
    run_script(SCRIPTS / "sweep.sh", **environ)
    first = len(fake.calls())
    (fake.runs / "Hopper-v4__baseline__2" / "finished.json").unlink()
    (fake.runs / "Hopper-v4__baseline__2" / "checkpoint.pt").write_bytes(b"")
    again = run_script(SCRIPTS / "sweep.sh", **environ)
    assert "4 runs: 1 finished, 2 skipped (already finished), 1 failed" in again.stdout
    assert fake.calls()[first:] == ["camel_td3.py --resume runs/Hopper-v4__baseline__2 --torch-threads 1",
                                    "camel_td3.py --env-id Hopper-v4 --seed 2 --exp-name random --run-name Hopper-v4__random__2 "
                                    "--total-timesteps 1000000 --paper --random-guide --torch-threads 1"]  # fmt: skip
    assert (fake.runs / "Hopper-v4__random__2" / "log.txt").read_text().count("=== ") == 2  # both attempts


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
def test_a_stop_reaches_each_running_run_once_and_the_sweep_exits_130(fake, guide, how):
    process = start_sweep(fake, SEEDS="1", CONDITIONS="baseline random camel", LLM_POLICY=str(guide), WORKERS="2")
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
    assert "interrupted: baseline seed 1" in out and "checkpoint saved" in out and "not run: camel seed 1" in out
    expected = "SIGTERM" if how == "SIGTERM to the sweep" else "SIGINT"
    assert sorted(p.read_text() for p in fake.runs.glob("*/signals.txt")) == [expected, expected]  # once each, saved


def test_slurm_array_task_runs_its_entry_of_the_same_matrix(fake, guide):
    environ = dict(SEEDS="1 2", CONDITIONS="baseline random camel", LLM_POLICY=guide, **fake.environ)
    matrix = run_script(SCRIPTS / "hopper.sh", "--print-matrix", **environ).stdout.splitlines()
    for task, entry in enumerate(matrix):
        result = run_script(SCRIPTS / "slurm_sweep.sbatch", SCRIPTS / "hopper.sh", SLURM_ARRAY_TASK_ID=task, DRY_RUN=1, **environ)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-1].split()[:4] == ["start", entry.split()[0], "seed", entry.split()[1]]
    outside = run_script(SCRIPTS / "slurm_sweep.sbatch", SCRIPTS / "hopper.sh", SLURM_ARRAY_TASK_ID=6, DRY_RUN=1, **environ)
    assert outside.returncode == 2 and "task 6 is outside the run matrix (0..5: 6 runs)" in outside.stderr
    # a real task runs exactly its own run, and its exit status is the run's
    assert run_script(SCRIPTS / "slurm_sweep.sbatch", SCRIPTS / "hopper.sh", SLURM_ARRAY_TASK_ID=5, **environ).returncode == 0
    assert [p.parent.name for p in fake.runs.glob("*/finished.json")] == ["Hopper-v4__camel__2"]
    failing = run_script(SCRIPTS / "slurm_sweep.sbatch", SCRIPTS / "hopper.sh", SLURM_ARRAY_TASK_ID=4, **environ)
    assert failing.returncode == 1 and "failed random seed 2" in failing.stdout
    assert "--torch-threads 1" in fake.calls()[-1]  # SLURM_CPUS_PER_TASK unset: one thread


# ---------------------------------------------------------------------------------------------------------
# A tiny real sweep: 2 conditions x 1 seed x 150 steps of camel_td3.py, 2 at a time
# ---------------------------------------------------------------------------------------------------------
def test_tiny_real_sweep_finishes_each_run_and_skips_them_on_rerun(tmp_path, guide):
    environ = dict(SEEDS="1", CONDITIONS="baseline camel", LLM_POLICY=guide, RUNS_DIR=tmp_path / "runs", TOTAL_TIMESTEPS=150, WORKERS=2,
                   EXTRA_ARGS="--learning-starts 100 --batch-size 32 --eval-episodes 1 --eval-frequency 100")  # fmt: skip
    first = run_script(SCRIPTS / "hopper.sh", **environ)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "2 runs: 2 finished, 0 skipped (already finished), 0 failed" in first.stdout
    for name in ("Hopper-v4__baseline__1", "Hopper-v4__camel__1"):
        run = tmp_path / "runs" / name
        assert json.loads((run / "finished.json").read_text())["total_timesteps"] == 150 and not (run / "checkpoint.pt").exists()
    again = run_script(SCRIPTS / "hopper.sh", **environ)
    assert again.returncode == 0 and "2 runs: 0 finished, 2 skipped (already finished), 0 failed" in again.stdout


def test_a_variant_naming_a_retired_lever_is_refused_in_one_line(repo, tmp_path, guide):
    with pytest.raises(sweep.UsageError, match=r"^error: VARIANT prop_gwarm: prop \(guide proposal\) has left camel_td3.py; its runs "
                                               r"were made with commit 6abd027$"):  # fmt: skip
        sweep.matrix(settings(repo, tmp_path, SEEDS="1", CONDITIONS="camel", LLM_POLICY=guide, VARIANT="prop_gwarm"))


def test_a_variant_naming_critic_layer_norm_is_refused_with_the_commit_that_ran_it(repo, tmp_path, guide):
    with pytest.raises(sweep.UsageError, match=r"^error: VARIANT qbc_gwarm_noboot_cu2_ln: ln \(critic layer norm\) has left "
                                               r"camel_td3.py; its runs were made with commit 95415d5$"):  # fmt: skip
        sweep.matrix(settings(repo, tmp_path, SEEDS="1", CONDITIONS="camel", LLM_POLICY=guide, VARIANT="qbc_gwarm_noboot_cu2_ln"))


def test_the_probe_script_confirms_cu2_beside_camel_plus_on_seeds_16_to_20():
    env = {**os.environ, "DRY_RUN": "1", "ENVS": "hopper"}
    confirm = subprocess.run(["bash", str(REPO / "scripts" / "probe.sh")], capture_output=True, text=True, env=env, timeout=120)
    assert confirm.returncode == 0, confirm.stderr
    assert confirm.stdout.count("== sweep") == 1  # one pool: no core waits for a condition's last seed
    starts = [line.split() for line in confirm.stdout.splitlines() if line.startswith("start")]
    assert [(words[1], words[3]) for words in starts] == [(v, str(s)) for s in range(16, 21) for v in ["camel_qbc_gwarm_noboot",
                                                                                                       "camel_qbc_gwarm_noboot_cu2"]]
    flags = {words[1]: " ".join(words[5:]) for words in starts}
    assert "--guide-bc-coef 0.4 --warmup-actions guide --llm-policy" in flags["camel_qbc_gwarm_noboot"]
    assert "--guide-bc-coef 0.4 --warmup-actions guide --critic-updates-per-step 2 --llm-policy" in flags["camel_qbc_gwarm_noboot_cu2"]
    wrong = subprocess.run(["bash", str(REPO / "scripts" / "probe.sh"), "cu2"], capture_output=True, text=True, env=env, timeout=120)
    assert wrong.returncode == 2 and wrong.stderr.strip() == ("error: scripts/probe.sh takes no arguments: its settings are SEEDS, ENVS "
                                                              "and those of scripts/sweep.sh (see --help)")


@pytest.mark.parametrize("script", ["probe.sh", "quickstart.sh", "figures.sh", "train_expert.sh"])
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
    assert wrong.stderr.strip() == "error: scripts/figures.sh takes no arguments: its settings are RUNS, OUT and PYTHON (see --help)"


def test_more_workers_than_cores_is_said_before_the_runs(tmp_path):
    workers = (os.cpu_count() or 1) + 1
    result = run_script(SCRIPTS / "sweep.sh", "--dry-run", CONDITIONS="baseline", WORKERS=workers, RUNS_DIR=tmp_path / "runs")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == (f"note: WORKERS={workers} on {os.cpu_count()} CPU cores: runs share cores, each slower, "
                                             "and the runs' speeds say nothing of the method's")  # fmt: skip
    fits = run_script(SCRIPTS / "sweep.sh", "--dry-run", CONDITIONS="baseline", WORKERS=1, RUNS_DIR=tmp_path / "runs")
    assert "note: WORKERS" not in fits.stdout


@pytest.mark.parametrize("variant", ["qbc_gwarm_noboot_cu2", "plain prop_gwarm"])
def test_camel_plus_levers_on_the_sac_trainer_are_refused_not_run_as_the_paper(repo, tmp_path, variant):
    (repo / "camel_sac.py").write_text("")
    lever = variant.split()[-1]
    with pytest.raises(sweep.UsageError, match=rf"^error: VARIANT {lever} names CAMEL\+ levers, which camel_sac.py does not have "
                                               r"\(it trains the paper's CAMEL on SAC\): leave VARIANT out, or use TRAINER=td3$"):  # fmt: skip
        settings(repo, tmp_path, TRAINER="sac", VARIANT=variant)
    assert [c.name for c in settings(repo, tmp_path, TRAINER="sac", VARIANT="ls25k", CONDITIONS="baseline").conditions] == ["baseline_ls25k"]
