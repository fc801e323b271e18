"""plot.py: reading runs from TensorBoard event files, aligning them on steps, the table's numbers, the figure,
and what it says about empty or partial runs folders."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from torch.utils.tensorboard import SummaryWriter

import plot

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_run(runs_dir, name, points, tag="eval/episodic_return", hyperparameters=None, purge_step=None):
    """A run folder with one event file holding `points` [(step, value)], as camel_td3.py logs them."""
    writer = SummaryWriter(os.path.join(runs_dir, name), purge_step=purge_step)
    if hyperparameters:
        rows = "\n".join(f"|{k}|{v}|" for k, v in hyperparameters.items())
        writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{rows}")
    for step, value in points:
        writer.add_scalar(tag, value, step)
    writer.close()


def line(steps, slope, offset=0.0):
    return [(s, offset + slope * s) for s in steps]


@pytest.fixture
def sweep_runs(tmp_path):
    """Hopper-v4: baseline, 3 seeds evaluated every 1000 steps to 4000; camel, 2 seeds evaluated every 500 steps
    to 4000; random, 3 seeds of which seed 3 stopped at 2000."""
    runs = tmp_path / "runs"
    every_1000, every_500 = [1000, 2000, 3000, 4000], list(range(500, 4001, 500))
    for seed, offset in [(1, 0.0), (2, 10.0), (3, 20.0)]:
        write_run(runs, f"Hopper-v4__baseline__{seed}", line(every_1000, 0.01, offset))  # 10..40, 20..50, 30..60
    write_run(runs, "Hopper-v4__camel__1", line(every_500, 1 / 50))  # step / 50
    write_run(runs, "Hopper-v4__camel__2", line(every_500, 1 / 25))  # step / 25
    write_run(runs, "Hopper-v4__random__1", line(every_1000, 0.0, 5.0))
    write_run(runs, "Hopper-v4__random__2", line(every_1000, 0.0, 7.0))
    write_run(runs, "Hopper-v4__random__3", line([1000, 2000], 0.0, 100.0))
    return runs


def run_plot(runs_dir, output_dir, *flags):
    args = plot.Args(runs_dir=str(runs_dir), output_dir=str(output_dir), bootstrap_samples=4000)
    for flag, value in zip(flags[::2], flags[1::2]):
        setattr(args, flag, value)
    return plot.main(args)


def table_rows(output_dir):
    """{condition: [cells]} from results.md."""
    rows = {}
    for row in (output_dir / "results.md").read_text().splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if row.startswith("| ") and cells[0] != "condition":
            rows[cells[0]] = cells[1:]
    return rows


def test_table_reports_mean_ci_and_seed_count_at_each_step(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "steps", [1000, 2500, 4000]) == 0
    rows = table_rows(tmp_path / "out")
    # by hand: baseline at 1000 is 10, 20, 30; at 2500 the most recent evaluation (2000) is 20, 30, 40; at 4000
    # 40, 50, 60. With 3 seeds a resample takes one seed 3 times with chance 1/27 = 3.7% > 2.5%, so the 95%
    # percentile bootstrap interval of the mean runs from the smallest to the largest seed.
    assert rows["baseline"][:4] == ["1 2 3", "20.0 [10.0, 30.0] (n=3)", "30.0 [20.0, 40.0] (n=3)", "50.0 [40.0, 60.0] (n=3)"]
    # camel: step / 50 and step / 25; with 2 seeds (chance 1/4 per end) the interval is again [min, max]
    assert rows["camel"][:4] == ["1 2", "30.0 [20.0, 40.0] (n=2)", "75.0 [50.0, 100.0] (n=2)", "120.0 [80.0, 160.0] (n=2)"]


def test_runs_of_different_lengths_are_aligned_on_steps_not_index(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "steps", [2000, 3000]) == 0
    rows = table_rows(tmp_path / "out")
    # random seed 3 stopped at 2000: it is in the 2000 cell and left out of the 3000 one
    assert rows["random"][1:3] == ["37.3 [5.0, 100.0] (n=3)", "6.0 [5.0, 7.0] (n=2)"]
    # camel is evaluated every 500 steps and the baseline every 1000: both are read at step 3000, not at index 3
    assert rows["camel"][2].startswith("90.0 ") and rows["baseline"][2].startswith("40.0 ")


def test_step_that_no_run_reached_is_left_out_with_a_note(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "steps", [4000, 8000, 1_000_000]) == 0
    assert table_rows(tmp_path / "out")["baseline"] == ["1 2 3", "50.0 [40.0, 60.0] (n=3)", "4k (1.00x)"]
    assert "No run reached 8k, 1M steps" in (tmp_path / "out" / "results.md").read_text()


def test_sample_efficiency_ratio_is_first_step_reaching_baseline_final_return(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "steps", [4000]) == 0
    rows = table_rows(tmp_path / "out")
    # baseline's final return: mean at 4000 = 50. camel's mean is 0.03 * step: 45 at 1500, 60 at 2000 -> 2000 / 4000
    assert rows["camel"][-1] == "2k (0.50x)"
    assert rows["baseline"][-1] == "4k (1.00x)"
    # random's common steps end at 2000 (seed 3 stopped) and its mean never reaches 50 there
    assert rows["random"][-1] == "not reached by 2k"
    assert "baseline's final return is 50.0 at 4k steps" in (tmp_path / "out" / "results.md").read_text()


def test_figure_is_written_as_png_and_svg(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out") == 0
    for ext in ("png", "svg"):
        assert (tmp_path / "out" / f"returns.{ext}").stat().st_size > 1000


def test_conditions_flag_selects_and_orders_conditions(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "conditions", ("camel", "baseline"), "steps", [4000]) == 0
    assert list(table_rows(tmp_path / "out")) == ["camel", "baseline"]


def test_bootstrap_interval_matches_normal_approximation_for_many_seeds():
    values = np.random.default_rng(3).normal(100.0, 20.0, size=40)
    low, high = plot.bootstrap_ci(values, samples=20_000, confidence=0.95, seed=0)
    half_width = 1.96 * values.std() / np.sqrt(len(values))  # the bootstrap's spread of the mean is std / sqrt(n)
    assert low == pytest.approx(values.mean() - half_width, abs=0.1 * half_width)
    assert high == pytest.approx(values.mean() + half_width, abs=0.1 * half_width)
    assert plot.bootstrap_ci(values, 20_000, 0.95, seed=0) == (low, high)  # seeded: reproducible


def test_resumed_run_keeps_only_points_logged_after_the_purge(tmp_path):
    run = tmp_path / "runs" / "Hopper-v4__camel__1"
    write_run(tmp_path / "runs", run.name, [(s, 1.0) for s in range(100, 1001, 100)])  # interrupted process
    time.sleep(1.1)  # event file names hold the time in seconds
    write_run(tmp_path / "runs", run.name, [(s, 2.0) for s in range(600, 1201, 100)], purge_step=600)  # --resume
    steps, values, _ = plot.read_events(str(run), "eval/episodic_return")
    assert steps.tolist() == list(range(100, 1201, 100))
    assert values.tolist() == [1.0] * 5 + [2.0] * 7


def test_run_restarted_from_scratch_in_its_folder_keeps_its_newest_points(tmp_path):
    run = tmp_path / "runs" / "Hopper-v4__camel__1"
    write_run(tmp_path / "runs", run.name, [(s, 1.0) for s in range(100, 1001, 100)])  # killed before a checkpoint
    time.sleep(1.1)
    write_run(tmp_path / "runs", run.name, [(s, 2.0) for s in range(100, 501, 100)])  # started again, no purge
    steps, values, _ = plot.read_events(str(run), "eval/episodic_return")
    assert steps.tolist() == [100, 200, 300, 400, 500] and values.tolist() == [2.0] * 5


def test_run_identity_comes_from_logged_hyperparameters_or_folder_name(tmp_path):
    runs = tmp_path / "runs"
    write_run(runs, "my-run", [(1000, 1.0)], hyperparameters={"env_id": "Ant-v4", "exp_name": "camel", "seed": 7})
    write_run(runs, "Walker2d-v4__baseline__3__1700000000", [(1000, 1.0)])  # CleanRL's default name
    write_run(runs, "no-idea", [(1000, 1.0)])
    found, notes = plot.load_runs(str(runs), "eval/episodic_return")
    assert sorted((r.env_id, r.condition, r.seed) for r in found) == [("Ant-v4", "camel", 7), ("Walker2d-v4", "baseline", 3)]
    assert any("no-idea" in note and "left out" in note for note in notes)


def test_partial_runs_dir_says_what_is_found_and_missing(tmp_path, capsys):
    runs = tmp_path / "runs"
    write_run(runs, "Hopper-v4__camel__1", line([1000, 2000], 0.01))
    write_run(runs, "Hopper-v4__camel__2", line([1000], 0.01))
    write_run(runs, "Hopper-v4__random__1", line([1000, 2000], 0.0))
    (runs / "Hopper-v4__baseline__1").mkdir()
    (runs / "Hopper-v4__baseline__1" / "log.txt").write_text("error: something went wrong\n")
    assert run_plot(runs, tmp_path / "out", "conditions", ("baseline", "camel", "random"), "steps", [1000, 2000]) == 0
    out = capsys.readouterr().out
    assert "Hopper-v4__baseline__1: no eval/episodic_return yet (not finished" in out
    assert "no runs of condition 'baseline'" in out
    assert "Hopper-v4: no 'baseline' runs, so no sample-efficiency ratio" in out
    assert "Hopper-v4 random: seed 2 (other conditions have it)" in out
    assert "Hopper-v4 camel seed 2: stops at 1k steps, others reach 2k" in out
    assert table_rows(tmp_path / "out")["camel"][1:4] == ["10.0 [10.0, 10.0] (n=2)", "20.0 [20.0, 20.0] (n=1)", "no baseline runs"]


@pytest.mark.parametrize("make", ["missing", "empty", "no_eval"])
def test_nothing_to_plot_is_one_error_line_and_exit_1(tmp_path, capsys, make):
    runs = tmp_path / "runs"
    if make != "missing":
        runs.mkdir()
    if make == "no_eval":
        write_run(runs, "Hopper-v4__camel__1", [(100, 1.0)], tag="charts/episodic_return")
    assert run_plot(runs, tmp_path / "out") == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert not (tmp_path / "out" / "returns.png").exists()


def test_command_line_on_empty_runs_dir_exits_1_without_traceback(tmp_path):
    (tmp_path / "runs").mkdir()
    result = subprocess.run([sys.executable, "plot.py", str(tmp_path / "runs"), "--output-dir", str(tmp_path / "out")],
                            cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: no runs with eval/episodic_return under")
