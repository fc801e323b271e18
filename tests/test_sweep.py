"""scripts/sweep.sh, the per-env wrappers and the Slurm array script: the run matrix, skip/resume/start, parallel
workers, failure reports, and a tiny real sweep that plot.py then reads."""

import os
import signal
import subprocess
import textwrap
import time

import pytest

import plot

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP, HOPPER = os.path.join(REPO, "scripts", "sweep.sh"), os.path.join(REPO, "scripts", "hopper.sh")
SLURM = os.path.join(REPO, "scripts", "slurm_sweep.sbatch")
TINY = "--learning-starts 100 --batch-size 32 --eval-episodes 1 --eval-frequency 100"


@pytest.fixture
def guide(tmp_path):
    path = tmp_path / "guide.py"
    path.write_text("import numpy as np\ndef policy(obs):\n    return np.zeros(3)\n")
    return path


def sweep(script, *args, cwd=REPO, **settings):
    """Run a sweep script with the settings as environment variables; no inherited sweep settings leak in."""
    names = ["ENV_ID", "SEEDS", "CONDITIONS", "TOTAL_TIMESTEPS", "WORKERS", "TORCH_THREADS", "LLM_POLICY",
             "EXPERT_MODEL", "EXTRA_ARGS", "RUNS_DIR", "PYTHON", "DRY_RUN", "SLURM_ARRAY_TASK_ID"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in names}
    env.update({k: str(v) for k, v in settings.items()})
    return subprocess.run(["bash", script, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def plan_lines(result):
    """The dry run's per-run lines: (action, condition, seed, command)."""
    lines = []
    for line in result.stdout.splitlines():
        if line.split()[0] in ("start", "resume", "skip"):
            action, condition, _, seed, command = line.split(None, 4)
            lines.append((action, condition, int(seed), command))
    return lines


@pytest.fixture
def fake_python(tmp_path):
    """A stand-in for the interpreter that does what camel_td3.py does to a run folder, instantly: it records its
    arguments, finishes runs (finished.json), and fails 'random' seed 2 with an error line."""
    path = tmp_path / "fake_python"
    path.write_text(textwrap.dedent("""\
        #!/usr/bin/env bash
        shift  # camel_td3.py's path
        echo "$*" >> "$CALLS"
        name="" cond="" seed=""
        while [[ $# -gt 0 ]]; do
            case "$1" in
                --run-name) name="$2"; shift ;;
                --resume) name="${2#runs/}"; shift ;;
                --exp-name) cond="$2"; shift ;;
                --seed) seed="$2"; shift ;;
            esac
            shift
        done
        echo "step 100/200"
        if [[ "$cond $seed" == "random 2" ]]; then echo "error: the random guide fell over" >&2; exit 1; fi
        mkdir -p "runs/$name" && rm -f "runs/$name/checkpoint.pt" && echo '{}' > "runs/$name/finished.json"
        """))  # fmt: skip
    path.chmod(0o755)
    return path


def calls(tmp_path):
    path = tmp_path / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


# ---- The run matrix
def test_dry_run_prints_the_run_matrix_and_runs_nothing(tmp_path, guide):
    result = sweep(HOPPER, "--dry-run", SEEDS="1 2", CONDITIONS="baseline random camel", LLM_POLICY=guide,
                   RUNS_DIR=tmp_path / "runs", TOTAL_TIMESTEPS=5000)  # fmt: skip
    assert result.returncode == 0, result.stderr
    plan = plan_lines(result)
    assert [(a, c, s) for a, c, s, _ in plan] == [("start", c, s) for s in (1, 2) for c in ("baseline", "random", "camel")]
    for action, condition, seed, command in plan:
        assert f"--env-id Hopper-v4 --seed {seed} --exp-name {condition} --run-name Hopper-v4__{condition}__{seed}" in command
        assert "--total-timesteps 5000" in command
    assert "--random-guide" in plan[1][3] and f"--llm-policy {guide}" in plan[2][3]
    assert "--random-guide" not in plan[0][3] and "--llm-policy" not in plan[0][3]
    assert not (tmp_path / "runs").exists()


def test_default_conditions_are_the_papers_with_expert_ones_when_an_expert_is_given(tmp_path, guide):
    without = sweep(HOPPER, "--print-matrix", SEEDS="1", LLM_POLICY=guide, RUNS_DIR=tmp_path / "runs")
    assert without.stdout.split() == "baseline 1 random 1 random_no_ma_em 1 camel 1 camel_no_ma_em 1".split()
    hub = sweep(HOPPER, "--print-matrix", SEEDS="1", LLM_POLICY=guide, RUNS_DIR=tmp_path / "runs",
                EXPERT_MODEL="cleanrl/Hopper-v4-td3_continuous_action-seed1")  # fmt: skip
    assert hub.stdout.split()[-4:] == ["expert", "1", "expert_no_ma_em", "1"]


def test_no_ma_em_conditions_turn_off_masking_aware_and_epsilon_masking(tmp_path, guide):
    result = sweep(HOPPER, "--dry-run", SEEDS="1", CONDITIONS="camel camel_no_ma_em random_no_ma_em", LLM_POLICY=guide,
                   RUNS_DIR=tmp_path / "runs")  # fmt: skip
    commands = {condition: command for _, condition, _, command in plan_lines(result)}
    assert "--no-masking-aware" not in commands["camel"]
    assert f"--llm-policy {guide} --no-masking-aware --no-epsilon-masking" in commands["camel_no_ma_em"]
    assert "--random-guide --no-masking-aware --no-epsilon-masking" in commands["random_no_ma_em"]


def test_parallel_workers_give_each_run_one_torch_thread(tmp_path):
    one = sweep(SWEEP, "--dry-run", CONDITIONS="baseline", SEEDS="1", RUNS_DIR=tmp_path / "runs")
    four = sweep(SWEEP, "--dry-run", CONDITIONS="baseline", SEEDS="1", RUNS_DIR=tmp_path / "runs", WORKERS=4)
    assert "--torch-threads" not in plan_lines(one)[0][3]
    assert plan_lines(four)[0][3].endswith("--torch-threads 1")


def test_dry_run_shows_finished_runs_skipped_and_checkpointed_runs_resumed(tmp_path):
    runs = tmp_path / "runs"
    (runs / "Hopper-v4__baseline__1").mkdir(parents=True)
    (runs / "Hopper-v4__baseline__1" / "finished.json").write_text("{}")
    (runs / "Hopper-v4__random__1").mkdir()
    (runs / "Hopper-v4__random__1" / "checkpoint.pt").write_bytes(b"")
    (runs / "Hopper-v4__random__2").mkdir()
    (runs / "Hopper-v4__random__2" / "log.txt").write_text("error: failed before\n")  # a log alone is no run
    result = sweep(SWEEP, "--dry-run", SEEDS="1 2", CONDITIONS="baseline random", RUNS_DIR=runs)
    assert [(a, c, s) for a, c, s, _ in plan_lines(result)] == [
        ("skip", "baseline", 1), ("resume", "random", 1), ("start", "baseline", 2), ("start", "random", 2)]  # fmt: skip
    assert plan_lines(result)[1][3].endswith("camel_td3.py --resume runs/Hopper-v4__random__1")


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"CONDITIONS": "baseline camle"}, "error: unknown condition 'camle'"),
        ({"CONDITIONS": "camel", "LLM_POLICY": "/nonexistent/guide.py"}, "LLM_POLICY /nonexistent/guide.py does not exist"),
        ({"CONDITIONS": "camel"}, "condition camel needs LLM_POLICY"),
        ({"CONDITIONS": "expert"}, "condition expert needs EXPERT_MODEL"),
        ({"CONDITIONS": "baseline", "WORKERS": "0"}, "WORKERS must be a positive integer"),
        ({"CONDITIONS": "baseline", "SEEDS": "1 two"}, "SEEDS must be integers"),
        ({"CONDITIONS": "baseline", "RUNS_DIR": "/tmp/results"}, "must be a folder named 'runs'"),
    ],
)
def test_bad_settings_are_refused_before_anything_runs(tmp_path, settings, message):
    settings = {"RUNS_DIR": tmp_path / "runs", "PYTHON": "false", **settings}
    result = sweep(SWEEP, **settings)
    assert result.returncode == 2
    assert message in result.stderr and result.stderr.startswith("error: ")
    assert not (tmp_path / "runs").exists()


# ---- Running: skip, resume, failures (with a stand-in interpreter, so only the sweep's own logic is timed)
def test_failed_run_is_reported_with_condition_seed_and_reason_and_others_go_on(tmp_path, fake_python):
    runs = tmp_path / "runs"
    result = sweep(SWEEP, SEEDS="1 2 3", CONDITIONS="baseline random", WORKERS=2, RUNS_DIR=runs, PYTHON=fake_python,
                   CALLS=tmp_path / "calls.txt")  # fmt: skip
    assert result.returncode == 1
    assert "6 runs: 5 finished, 0 skipped (already finished), 1 failed" in result.stdout
    failed = [line for line in result.stdout.splitlines() if line.startswith("failed:")]
    assert failed == [f"failed: random seed 2 ({runs}/Hopper-v4__random__2/log.txt): exit 1: error: the random guide fell over"]
    assert len(list(runs.glob("*/finished.json"))) == 5
    assert "error: the random guide fell over" in (runs / "Hopper-v4__random__2" / "log.txt").read_text()


def test_rerun_retries_only_the_failed_run(tmp_path, fake_python):
    settings = dict(SEEDS="1 2", CONDITIONS="baseline random", RUNS_DIR=tmp_path / "runs", PYTHON=fake_python,
                    CALLS=tmp_path / "calls.txt")  # fmt: skip
    sweep(SWEEP, **settings)
    first = len(calls(tmp_path))
    again = sweep(SWEEP, **settings)
    assert "4 runs: 0 finished, 3 skipped (already finished), 1 failed" in again.stdout
    assert len(calls(tmp_path)) == first + 1 and "--exp-name random" in calls(tmp_path)[-1]
    assert (tmp_path / "runs" / "Hopper-v4__random__2" / "log.txt").read_text().count("=== ") == 2  # both attempts


def test_run_with_a_checkpoint_is_resumed_not_restarted(tmp_path, fake_python):
    run = tmp_path / "runs" / "Hopper-v4__baseline__1"
    run.mkdir(parents=True)
    (run / "checkpoint.pt").write_bytes(b"")
    result = sweep(SWEEP, SEEDS="1", CONDITIONS="baseline", RUNS_DIR=tmp_path / "runs", PYTHON=fake_python,
                   CALLS=tmp_path / "calls.txt")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert calls(tmp_path) == ["--resume runs/Hopper-v4__baseline__1"]
    assert (run / "finished.json").exists()


def test_slurm_array_task_runs_its_entry_of_the_same_matrix(tmp_path, guide, fake_python):
    settings = dict(SEEDS="1 2", CONDITIONS="baseline random camel", LLM_POLICY=guide, RUNS_DIR=tmp_path / "runs")
    matrix = sweep(HOPPER, "--print-matrix", **settings).stdout.splitlines()
    assert sweep(HOPPER, "--count", **settings).stdout.strip() == str(len(matrix)) == "6"
    for task, entry in enumerate(matrix):
        result = sweep(SLURM, HOPPER, SLURM_ARRAY_TASK_ID=task, DRY_RUN=1, **settings)
        assert result.returncode == 0, result.stderr
        condition, seed = entry.split()
        assert plan_lines(result) == [("start", condition, int(seed), plan_lines(result)[0][3])]
    outside = sweep(SLURM, HOPPER, SLURM_ARRAY_TASK_ID=6, DRY_RUN=1, **settings)
    assert outside.returncode == 2 and "task 6 is outside the run matrix (0..5: 6 runs)" in outside.stderr
    # a real task (with the stand-in interpreter) runs exactly its own run, and its exit status is the run's
    result = sweep(SLURM, HOPPER, SLURM_ARRAY_TASK_ID=5, PYTHON=fake_python, CALLS=tmp_path / "calls.txt", **settings)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [p.parent.name for p in (tmp_path / "runs").glob("*/finished.json")] == ["Hopper-v4__camel__2"]
    failing = sweep(SLURM, HOPPER, SLURM_ARRAY_TASK_ID=4, PYTHON=fake_python, CALLS=tmp_path / "calls.txt", **settings)
    assert failing.returncode == 1 and "failed random seed 2" in failing.stdout


def test_ctrl_c_stops_the_sweep_and_reports_runs_interrupted_with_a_checkpoint(tmp_path, guide):
    slow_python = tmp_path / "slow_python"  # trains until a Ctrl-C or SIGTERM, then saves a checkpoint, as camel_td3.py
    slow_python.write_text(textwrap.dedent("""\
        #!/usr/bin/env bash
        while [[ $# -gt 0 && "$1" != --run-name ]]; do shift; done
        mkdir -p "runs/$2"
        trap 'touch "runs/$2/checkpoint.pt"; exit 130' INT TERM
        echo training
        while true; do sleep 0.1; done
        """))  # fmt: skip
    slow_python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("SEEDS", "CONDITIONS", "WORKERS")}
    env.update(SEEDS="1", CONDITIONS="baseline random camel", LLM_POLICY=str(guide), WORKERS="2",
               RUNS_DIR=str(tmp_path / "runs"), PYTHON=str(slow_python))  # fmt: skip
    sweep_process = subprocess.Popen(  # a terminal's foreground job: its own process group, Ctrl-C not ignored
        ["bash", SWEEP], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    try:
        deadline = time.time() + 60
        while len([p for p in (tmp_path / "runs").glob("*/log.txt") if "training" in p.read_text()]) < 2:
            assert time.time() < deadline and sweep_process.poll() is None
            time.sleep(0.1)
        os.killpg(sweep_process.pid, signal.SIGINT)  # Ctrl-C
        out, _ = sweep_process.communicate(timeout=60)
    finally:
        if sweep_process.poll() is None:
            os.killpg(sweep_process.pid, signal.SIGKILL)
    assert sweep_process.returncode == 130
    assert "3 runs: 0 finished, 0 skipped (already finished), 0 failed, 2 interrupted, 1 not run" in out
    assert "interrupted: baseline seed 1" in out and "checkpoint saved" in out and "not run: camel seed 1" in out
    assert len(list((tmp_path / "runs").glob("*/checkpoint.pt"))) == 2


# ---- A tiny real sweep: 2 conditions x 2 seeds x 150 steps of camel_td3.py, 2 at a time
@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    (root / "guide.py").write_text("import numpy as np\ndef policy(obs):\n    return np.zeros(3)\n")
    settings = dict(SEEDS="1 2", CONDITIONS="baseline camel", LLM_POLICY=root / "guide.py", RUNS_DIR=root / "runs",
                    TOTAL_TIMESTEPS=150, WORKERS=2, EXTRA_ARGS=TINY)  # fmt: skip
    first = sweep(HOPPER, **settings)
    snapshot = sorted((p.name, p.stat().st_mtime_ns) for p in (root / "runs").rglob("*") if p.is_file())
    again = sweep(HOPPER, **settings)
    return root / "runs", first, again, snapshot


def test_tiny_real_sweep_writes_a_finished_run_per_condition_and_seed(tiny_sweep):
    runs, first, _, _ = tiny_sweep
    assert first.returncode == 0, first.stdout + first.stderr
    assert "4 runs: 4 finished, 0 skipped (already finished), 0 failed" in first.stdout
    names = sorted(p.parent.name for p in runs.glob("*/finished.json"))
    assert names == ["Hopper-v4__baseline__1", "Hopper-v4__baseline__2", "Hopper-v4__camel__1", "Hopper-v4__camel__2"]
    for name in names:
        assert "finished " + name in (runs / name / "log.txt").read_text()
        assert not (runs / name / "checkpoint.pt").exists()


def test_sweep_skips_finished_runs_on_rerun(tiny_sweep):
    runs, _, again, snapshot = tiny_sweep
    assert again.returncode == 0, again.stdout + again.stderr
    assert "4 runs: 0 finished, 4 skipped (already finished), 0 failed" in again.stdout
    assert sorted((p.name, p.stat().st_mtime_ns) for p in runs.rglob("*") if p.is_file()) == snapshot


def test_plot_reads_the_sweeps_runs(tiny_sweep, tmp_path):
    runs = tiny_sweep[0]
    assert plot.main(plot.Args(runs_dir=str(runs), output_dir=str(tmp_path), steps=[100, 150], bootstrap_samples=200)) == 0
    table = (tmp_path / "results.md").read_text()
    assert "| baseline | 1 2 |" in table and "| camel | 1 2 |" in table and "(n=2)" in table
