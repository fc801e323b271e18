"""The benchmark harness (benchmarks/benchmark.py): how it measures training steps/s, and that it runs
end to end on a tiny configuration and writes its table."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from torch.utils.tensorboard import SummaryWriter

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("benchmark", REPO / "benchmarks" / "benchmark.py")
benchmark = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(benchmark)

GUIDE = """import numpy as np


def policy(obs):
    return np.clip(-0.8 * np.asarray(obs)[2:5], -1.0, 1.0)
"""


def write_sps_events(folder, points):
    """charts/SPS events at (step, wall_time) points, as both training scripts log them."""
    writer = SummaryWriter(str(folder))
    for step, wall_time in points:
        writer.add_scalar("charts/SPS", 0, step, walltime=wall_time)
    writer.close()


def test_steps_per_second_is_read_from_event_wall_times_after_warmup(tmp_path):
    # a slow start (imports, warm-up, first updates) up to step 500, then 200 steps/s
    points = [(step, 1000.0 + step / 1000) for step in range(0, 500, 100)]
    points += [(step, 2000.0 + (step - 500) / 200) for step in range(500, 2001, 100)]
    write_sps_events(tmp_path / "runs" / "Hopper-v4__x__1__0", points)

    window = benchmark.measure_window(str(tmp_path), from_step=500)

    assert (window.first_step, window.last_step) == (500, 2000)
    assert window.seconds == pytest.approx(7.5, abs=1e-3)
    assert window.steps_per_second == pytest.approx(200, rel=1e-3)


def test_steps_per_second_starts_at_the_first_event_at_or_after_the_measured_step(tmp_path):
    # CleanRL logs only after learning starts: its first event can lie past from_step
    write_sps_events(tmp_path, [(step, step / 100) for step in range(2100, 3001, 100)])

    window = benchmark.measure_window(str(tmp_path), from_step=2050)

    assert (window.first_step, window.last_step) == (2100, 3000)
    assert window.steps_per_second == pytest.approx(100, rel=1e-3)


def test_a_run_without_enough_events_is_an_error_not_a_number(tmp_path):
    write_sps_events(tmp_path, [(0, 0.0), (100, 1.0), (200, 2.0)])

    with pytest.raises(ValueError, match="fewer than two"):
        benchmark.measure_window(str(tmp_path), from_step=200)
    with pytest.raises(ValueError, match="no TensorBoard event file"):
        benchmark.measure_window(str(tmp_path / "empty"), from_step=0)


def test_variants_are_named_flag_sets_with_the_guide_filled_in(tmp_path):
    guide = str(tmp_path / "guide.py")

    variants = benchmark.parse_variants(["baseline=", "camel-compile=--llm-policy {guide} --compile"], guide)

    assert [(v.name, v.flags) for v in variants] == [("baseline", []), ("camel-compile", ["--llm-policy", guide, "--compile"])]
    with pytest.raises(SystemExit, match="NAME=FLAGS"):
        benchmark.parse_variants(["--compile"], guide)
    with pytest.raises(SystemExit, match="distinct"):
        benchmark.parse_variants(["a=", "a=--compile"], guide)
    with pytest.raises(SystemExit, match="not cleanrl or cleanrl-sac"):
        benchmark.parse_variants(["cleanrl-sac=camel_sac.py"], guide)


def test_a_variant_that_names_camel_sac_runs_the_sac_trainer(tmp_path):
    guide = str(tmp_path / "guide.py")
    sac, td3 = benchmark.parse_variants(["sac-camel=camel_sac.py --llm-policy {guide}", "camel=--llm-policy {guide}"], guide)
    assert sac == ("sac-camel", ["camel_sac.py", "--llm-policy", guide], "camel_sac.py") and td3.trainer == "camel_td3.py"
    args = benchmark.Args()
    sac_command, td3_command = (benchmark.camel_command(args, v, seed=1, threads=1, total_steps=100) for v in (sac, td3))
    assert sac_command[1] == str(benchmark.REPO / "camel_sac.py") and td3_command[1] == str(benchmark.REPO / "camel_td3.py")
    assert sac_command[2:] == td3_command[2:] and sac_command[-2:] == ["--llm-policy", guide]


def test_replay_buffer_size_of_a_million_step_ant_run_is_computed_without_allocating_it():
    memory = benchmark.replay_buffer_memory("Ant-v4", 1_000_000)

    obs, action = 27, 8
    assert (memory["obs_dim"], memory["action_dim"]) == (obs, action)
    assert memory["dtypes"] == ["float32"]
    # obs, next obs, action, reward, done and the bounds (low, high) of s and of s', in float32
    assert memory["bytes"] == 1_000_000 * 4 * (2 * obs + action + 1 + 1 + 4 * action)


def test_benchmark_runs_end_to_end_and_writes_the_table(tmp_path):
    guide = tmp_path / "guide.py"
    guide.write_text(GUIDE)
    output = tmp_path / "results"
    small = "--batch-size 32"  # the harness is under test here, not the speed
    command = [
        sys.executable, str(REPO / "benchmarks" / "benchmark.py"), "--warmup-steps", "100", "--settle-steps", "0",
        "--train-steps", "200", "--repeats", "1", "--guide-policy", str(guide), "--guide-calls", "200",
        "--variants", f"baseline={small}", f"camel={small} --llm-policy {{guide}} --no-epsilon-masking",
        "--output-dir", str(output),
    ]  # fmt: skip

    child = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    assert child.returncode == 0, child.stdout + child.stderr
    results = json.loads((output / "results.json").read_text())
    assert [(row["variant"], row["threads"]) for row in results["summary"]] == [("baseline", 1), ("camel", 1)]
    for run in results["runs"]:
        assert (run["first_step"], run["last_step"]) == (100, 300)
        assert run["steps_per_second"] > 0
    assert results["summary"][1]["vs_baseline"] == pytest.approx(
        results["summary"][1]["median"] / results["summary"][0]["median"]
    )
    assert results["guide"]["safe_policy_us"] > 0 and results["guide"]["share_of"] == "camel"
    assert results["memory"]["env_id"] == "Ant-v4"
    table = (output / "results.md").read_text()
    assert "| baseline |" in table and "| camel |" in table and "Guide cost" in table and "Replay buffer" in table
    assert os.path.basename(str(guide)) in table


def test_each_variant_is_compared_with_cleanrls_script_for_its_own_algorithm():
    runs = [{"variant": v, "threads": 1, "steps_per_second": sps}
            for v, sps in [("td3", 120), ("sac", 60), ("cleanrl", 100), ("cleanrl-sac", 40), ("td3", 140)]]
    rows = {r["variant"]: r for r in benchmark.summarise(runs, "td3", {"td3": "cleanrl", "sac": "cleanrl-sac"})}
    assert rows["td3"]["median"] == 130 and rows["td3"]["vs_cleanrl"] == pytest.approx(1.3)
    assert rows["sac"]["vs_cleanrl"] == pytest.approx(1.5) and rows["sac"]["vs_baseline"] == pytest.approx(60 / 130)


FAKE_CLEANRL = """import sys
from torch.utils.tensorboard import SummaryWriter

# stands in for one of CleanRL's scripts: logs charts/SPS every 100 steps as if it ran at RATE steps/s
RATE = {rate}
if "--help" in sys.argv:
    print("usage: [--cuda | --no-cuda]")
    sys.exit(0)
argv = sys.argv[1:]
total, start = (int(argv[argv.index(flag) + 1]) for flag in ("--total-timesteps", "--learning-starts"))
writer = SummaryWriter("runs/fake")
for step in range(start, total, 100):
    writer.add_scalar("charts/SPS", RATE, step, walltime=1000.0 + step / RATE)
writer.close()
"""


def test_benchmark_runs_cleanrls_td3_and_sac_beside_our_trainers(tmp_path):
    checkout = tmp_path / "cleanrl"
    (checkout / "cleanrl").mkdir(parents=True)
    for name, rate in [("td3_continuous_action.py", 100), ("sac_continuous_action.py", 50)]:
        (checkout / "cleanrl" / name).write_text(FAKE_CLEANRL.format(rate=rate))
    output = tmp_path / "results"
    command = [
        sys.executable, str(REPO / "benchmarks" / "benchmark.py"), "--warmup-steps", "100", "--settle-steps", "0",
        "--train-steps", "200", "--repeats", "1", "--guide-calls", "0", "--cleanrl", str(checkout),
        "--cleanrl-python", sys.executable, "--variants", "td3=--batch-size 32", "sac=camel_sac.py --batch-size 32",
        "--reference-variant", "td3", "--output-dir", str(output),
    ]  # fmt: skip

    child = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=180)

    assert child.returncode == 0, child.stdout + child.stderr
    results = json.loads((output / "results.json").read_text())
    rows = {row["variant"]: row for row in results["summary"]}
    assert list(rows) == ["td3", "sac", "cleanrl", "cleanrl-sac"]
    assert rows["cleanrl"]["median"] == pytest.approx(100) and rows["cleanrl-sac"]["median"] == pytest.approx(50)
    assert rows["td3"]["vs_cleanrl"] == pytest.approx(rows["td3"]["median"] / 100)
    assert rows["sac"]["vs_cleanrl"] == pytest.approx(rows["sac"]["median"] / 50)
    table = (output / "results.md").read_text()
    assert "(CleanRL's sac_continuous_action.py)" in table and "(CleanRL's td3_continuous_action.py)" in table
