"""The benchmark harness (benchmarks/benchmark.py): how it measures training steps/s, and that it runs
end to end on a tiny configuration and writes its table."""

import importlib.util
import json
import os
import shlex
import shutil
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

    # torch's generic kernels, as a user holds the libraries below the CPU's instruction set: the table must say so
    kernel_env = {k: v for k, v in os.environ.items() if k not in benchmark.KERNEL_VARIABLES} | {"ATEN_CPU_CAPABILITY": "default"}
    child = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=kernel_env)

    assert child.returncode == 0, child.stdout + child.stderr
    results = json.loads((output / "results.json").read_text())
    assert results["ours"]["cpu_capability"] == "DEFAULT" and results["machine"]["kernel_variables"] == {"ATEN_CPU_CAPABILITY": "default"}
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
    simd = results["machine"]["cpu_simd"]
    assert simd == benchmark.cpu_simd() and f"{results['machine']['cpu']} ({' '.join(simd)})" in table
    assert "torch " + results["ours"]["torch"] + " (DEFAULT kernels)" in table
    assert "kernels held below the CPU's by ATEN_CPU_CAPABILITY=default in every run" in table


def test_each_variant_is_compared_with_cleanrls_script_for_its_own_algorithm():
    runs = [{"variant": v, "threads": 1, "steps_per_second": sps}
            for v, sps in [("td3", 120), ("sac", 60), ("cleanrl", 100), ("cleanrl-sac", 40), ("td3", 140)]]
    rows = {r["variant"]: r for r in benchmark.summarise(runs, "td3", {"td3": "cleanrl", "sac": "cleanrl-sac"})}
    assert rows["td3"]["median"] == 130 and rows["td3"]["vs_cleanrl"] == pytest.approx(1.3)
    assert rows["sac"]["vs_cleanrl"] == pytest.approx(1.5) and rows["sac"]["vs_baseline"] == pytest.approx(60 / 130)


def test_td3_variants_are_compared_with_cleanrls_jax_td3_too_and_sac_variants_are_not():
    runs = [{"variant": v, "threads": 1, "steps_per_second": sps}
            for v, sps in [("td3", 120), ("sac", 60), ("cleanrl", 100), ("cleanrl-sac", 40), ("cleanrl-jax-td3", 240)]]
    cleanrl_rows = {"td3": "cleanrl", "sac": "cleanrl-sac", "cleanrl": "cleanrl", "cleanrl-jax-td3": "cleanrl"}
    jax_rows = {name: "cleanrl-jax-td3" for name in ["td3", "cleanrl", "cleanrl-jax-td3"]}
    rows = {r["variant"]: r for r in benchmark.summarise(runs, "td3", cleanrl_rows, jax_rows)}
    # "vs CleanRL" stays the ratio to CleanRL's PyTorch TD3, for the JAX row too
    assert rows["td3"]["vs_cleanrl"] == pytest.approx(1.2) and rows["cleanrl-jax-td3"]["vs_cleanrl"] == pytest.approx(2.4)
    assert rows["td3"]["vs_cleanrl_jax"] == pytest.approx(0.5) and rows["cleanrl"]["vs_cleanrl_jax"] == pytest.approx(100 / 240)
    assert rows["sac"]["vs_cleanrl_jax"] is None and rows["sac"]["vs_cleanrl"] == pytest.approx(1.5)


FAKE_CLEANRL = """import json, os, sys
from torch.utils.tensorboard import SummaryWriter

# stands in for one of CleanRL's scripts: logs charts/SPS every 100 steps as if it ran at RATE steps/s
RATE = {rate}
VENV = {venv!r}  # the stand-in venv whose python must run this script (None: a plain python, no stand-in venv)
if os.environ.get("CAMEL_FAKE_VENV") != VENV:
    sys.exit(f"run by {{sys.executable}} (venv {{os.environ.get('CAMEL_FAKE_VENV')}}), not by venv {{VENV}}'s python")
with open("affinity.json", "w") as f:  # the CPUs this run may use, for the --pin-cores test
    json.dump(sorted(os.sched_getaffinity(0)), f)
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


def test_benchmark_runs_cleanrls_td3_and_sac_beside_our_trainers_and_skips_jax_in_one_line_without_its_venv(tmp_path):
    checkout = fake_checkout(tmp_path / "cleanrl", {"td3_continuous_action.py": (100, None), "sac_continuous_action.py": (50, None),
                                                    "td3_continuous_action_jax.py": (200, "jax")})  # fmt: skip
    output = tmp_path / "results"
    no_cache = tmp_path / "empty-cache"  # the default JAX venv, ~/.cache/camel/cleanrl-jax-venv, is looked up here
    env = dict(os.environ, XDG_CACHE_HOME=str(no_cache))
    command = [
        sys.executable, str(REPO / "benchmarks" / "benchmark.py"), "--warmup-steps", "100", "--settle-steps", "0",
        "--train-steps", "200", "--repeats", "1", "--guide-calls", "0", "--cleanrl", str(checkout),
        "--cleanrl-python", sys.executable, "--variants", "td3=--batch-size 32", "sac=camel_sac.py --batch-size 32",
        "--reference-variant", "td3", "--output-dir", str(output),
    ]  # fmt: skip

    child = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)

    assert child.returncode == 0, child.stdout + child.stderr
    results = json.loads((output / "results.json").read_text())
    rows = {row["variant"]: row for row in results["summary"]}
    assert list(rows) == ["td3", "sac", "cleanrl", "cleanrl-sac"]
    assert rows["cleanrl"]["median"] == pytest.approx(100) and rows["cleanrl-sac"]["median"] == pytest.approx(50)
    assert rows["td3"]["vs_cleanrl"] == pytest.approx(rows["td3"]["median"] / 100)
    assert rows["sac"]["vs_cleanrl"] == pytest.approx(rows["sac"]["median"] / 50)
    table = (output / "results.md").read_text()
    assert "(CleanRL's sac_continuous_action.py)" in table and "(CleanRL's td3_continuous_action.py)" in table
    assert table_row(table, "td3")["vs CleanRL"] == f"{rows['td3']['median'] / 100:.2f}"
    # no JAX venv where the default looks: CleanRL's JAX TD3 is skipped, said in one line with the command that makes it
    messages = [line for line in child.stderr.splitlines() if "cleanrl-jax-td3" in line]
    default_python = no_cache / "camel" / "cleanrl-jax-venv" / "bin" / "python"
    assert len(messages) == 1 and messages[0].startswith("skipping cleanrl-jax-td3"), messages
    assert str(default_python) in messages[0] and f"setup_cleanrl.sh --jax {checkout}" in messages[0]
    assert str(default_python) in results["cleanrl_jax_skipped"] and results["cleanrl_jax_venv"] is None
    assert "vs CleanRL JAX" not in table and "cleanrl-jax-td3 not run: no JAX venv" in table
    assert "runs not pinned to cores" in table and all(not run["command"].startswith("taskset") for run in results["runs"])


def fake_checkout(root, scripts):
    """A stand-in CleanRL checkout: {script name: (steps/s, venv that must run it)}."""
    (root / "cleanrl").mkdir(parents=True)
    for name, (rate, venv) in scripts.items():
        (root / "cleanrl" / name).write_text(FAKE_CLEANRL.format(rate=rate, venv=venv))
    return root


def fake_jax_venv(root):
    """A stand-in for CleanRL's JAX venv: its bin/python is our interpreter, marked CAMEL_FAKE_VENV=jax (so that
    the fake JAX script can check who runs it), with stub jax, jaxlib, flax and optax modules for the probe."""
    for module in ["jax", "jaxlib", "flax", "optax"]:
        (root / "stubs" / module).mkdir(parents=True)
        (root / "stubs" / module / "__init__.py").write_text('__version__ = "0.0-stub"\n\ndef default_backend():\n    return "cpu"\n')
    python = root / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nCAMEL_FAKE_VENV=jax PYTHONPATH="{root / "stubs"}:$PYTHONPATH" exec {shlex.quote(sys.executable)} "$@"\n')
    python.chmod(0o755)
    return python


def benchmark_command(checkout, output, *flags):
    """A tiny side-by-side of one TD3 variant with a stand-in checkout (the harness is under test, not the speed)."""
    return [
        sys.executable, str(REPO / "benchmarks" / "benchmark.py"), "--warmup-steps", "100", "--settle-steps", "0",
        "--train-steps", "200", "--repeats", "1", "--guide-calls", "0", "--cleanrl", str(checkout),
        "--cleanrl-python", sys.executable, "--variants", "td3=--batch-size 32", "--reference-variant", "td3",
        "--output-dir", str(output), *flags,
    ]  # fmt: skip


def table_row(table, variant):
    """The cells of a variant's row in results.md, by column name."""
    lines = table.splitlines()
    header = next(line for line in lines if line.startswith("| variant |"))
    row = next(line for line in lines if line.startswith(f"| {variant} |"))
    return dict(zip(header.strip("| ").split(" | "), row.strip("| ").split(" | ")))


@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset (util-linux) is not installed")
def test_cleanrls_jax_td3_runs_with_its_own_venvs_python_pinned_by_taskset_in_its_own_column(tmp_path):
    checkout = fake_checkout(tmp_path / "cleanrl", {"td3_continuous_action.py": (100, None),
                                                    "td3_continuous_action_jax.py": (200, "jax")})  # fmt: skip
    jax_python = fake_jax_venv(tmp_path / "jax-venv")
    output = tmp_path / "results"

    command = benchmark_command(checkout, output, "--cleanrl-jax-python", str(jax_python), "--pin-cores", "0", "--keep-runs")
    child = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=180)

    # the fake scripts exit with an error when run by the wrong python: each row ran with its own venv's
    assert child.returncode == 0, child.stdout + child.stderr
    results = json.loads((output / "results.json").read_text())
    try:
        runs = {run["variant"]: shlex.split(run["command"]) for run in results["runs"]}
        # every measured process under taskset, with its own python
        assert all(command[:3] == ["taskset", "-c", "0"] for command in runs.values())
        assert runs["cleanrl-jax-td3"][3:5] == [str(jax_python), str(checkout / "cleanrl" / "td3_continuous_action_jax.py")]
        assert runs["cleanrl"][3] == sys.executable and runs["td3"][3] == sys.executable
        # the same env, seed, warm-up and steps as the PyTorch row; no --cuda flag, which the JAX script does not have
        assert runs["cleanrl-jax-td3"][5:] == runs["cleanrl"][5:-1] and runs["cleanrl"][-1] == "--no-cuda"
        # and the pinning holds: CleanRL's (stand-in) scripts, JAX's included, could run on CPU 0 only
        folders = {run["variant"]: Path(run["folder"]) for run in results["runs"]}
        for variant in ["cleanrl", "cleanrl-jax-td3"]:
            assert json.loads((folders[variant] / "affinity.json").read_text()) == [0]
    finally:
        for run in results["runs"]:
            shutil.rmtree(run["folder"], ignore_errors=True)
    rows = {row["variant"]: row for row in results["summary"]}
    assert list(rows) == ["td3", "cleanrl", "cleanrl-jax-td3"]
    assert rows["cleanrl"]["median"] == pytest.approx(100) and rows["cleanrl-jax-td3"]["median"] == pytest.approx(200)
    # "vs CleanRL" still divides by CleanRL's PyTorch TD3; "vs CleanRL JAX" by the JAX one
    td3 = rows["td3"]["median"]
    assert rows["td3"]["vs_cleanrl"] == pytest.approx(td3 / 100) and rows["td3"]["vs_cleanrl_jax"] == pytest.approx(td3 / 200)
    assert results["cleanrl_jax_venv"]["jax"] == "0.0-stub" and results["cleanrl_jax_skipped"] is None
    assert results["settings"]["pin_cores"] == "0"
    table = (output / "results.md").read_text()
    cells = table_row(table, "td3")
    assert cells["vs CleanRL"] == f"{td3 / 100:.2f}" and cells["vs CleanRL JAX"] == f"{td3 / 200:.2f}"
    jax_cells = table_row(table, "cleanrl-jax-td3")
    assert jax_cells["steps/s (median)"] == "200" and jax_cells["vs CleanRL"] == "2.00" and jax_cells["vs CleanRL JAX"] == "1.00"
    assert "(CleanRL's td3_continuous_action_jax.py)" in table and "jax 0.0-stub" in table
    assert "every run pinned with `taskset -c 0`" in table and "here those of `taskset -c 0`" in table


def test_a_cleanrl_jax_python_that_is_not_there_stops_the_benchmark_before_any_run(tmp_path):
    # a missing --cleanrl-jax-python is a mistake, not a skip (the default venv's absence is one: the test above)
    checkout = fake_checkout(tmp_path / "cleanrl", {"td3_continuous_action.py": (100, None),
                                                    "td3_continuous_action_jax.py": (200, "jax")})  # fmt: skip
    missing = tmp_path / "nowhere" / "bin" / "python"
    command = benchmark_command(checkout, tmp_path / "results", "--cleanrl-jax-python", str(missing))
    child = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert child.returncode != 0 and f"--cleanrl-jax-python {missing} not found" in child.stderr
    assert "[1/" not in child.stdout
