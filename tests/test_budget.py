"""The user's budget (B1M): the time each method needs to reach TD3's return, from mean curves and steps per second
(numbers computed by hand), the 1M figure with the published references, and `python plot.py budget`, which reads
exported runs and writes the figure and the report: interval estimates and mean returns at the steps asked, the
published returns with their sources, and the time to TD3's return in hours at each trainer's measured speed."""

import contextlib
import hashlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import plot
from camel_utils.results.budget import (
    REFERENCES, REFERENCES_1M, Speeds, draw_budget_figure, first_step_reaching, mean_curve, method_speeds, scalars_markdown,
    time_to_return,
)  # fmt: skip
from camel_utils.results.export import export_text
from camel_utils.results.runs import Run

REPO = Path(__file__).resolve().parent.parent


def run(seed, points, method="td3"):
    steps, values = zip(*points)
    return Run("Hopper-v4", method, seed, f"{method}/{seed}", np.array(steps), np.array(values, dtype=float))


TD3 = [run(1, [(100, 0), (200, 10), (300, 20)]), run(2, [(100, 0), (200, 30), (300, 40)])]  # mean 0, 20, 30
FAST = [run(1, [(100, 10), (200, 40), (300, 50)], "camel"), run(2, [(100, 20), (200, 40), (300, 50)], "camel")]  # mean 15, 40, 50
SLOW = [run(1, [(100, 0), (200, 5), (300, 10)], "slow")]


def test_the_mean_curve_is_taken_on_the_steps_every_run_reached():
    shorter = [TD3[0], run(3, [(100, 4), (200, 6)])]
    steps, mean = mean_curve(shorter)
    assert steps.tolist() == [100, 200] and mean.tolist() == [2.0, 8.0]


def test_the_first_step_reaching_a_return_is_the_first_at_or_above_it():
    assert first_step_reaching(np.array([100, 200, 300]), np.array([15, 40, 50]), 20) == 200
    assert first_step_reaching(np.array([100, 200, 300]), np.array([15, 40, 50]), 15) == 100
    assert first_step_reaching(np.array([100, 200, 300]), np.array([15, 40, 50]), 51) is None


def test_time_to_tds_return_is_the_first_step_reaching_it_over_the_methods_speed():
    # TD3's mean at step 300 is 30; CAMEL's mean first reaches 30 at step 200, at 0.05 steps/s: 4000 s = 1.111 h;
    # TD3 itself reaches it at 300 (by definition), at 0.1 steps/s: 3000 s; the slow method never does
    target, times = time_to_return({"td3": TD3, "camel": FAST, "slow": SLOW}, "td3", 300, {"td3": 0.1, "camel": 0.05, "slow": 1.0})
    assert target == 30.0
    assert times["camel"] == (200, pytest.approx(4000 / 3600)) and times["td3"] == (300, pytest.approx(3000 / 3600))
    assert times["slow"] is None
    # at a step between evaluations, TD3's return is its latest evaluation before it (step 200: 20)
    target, times = time_to_return({"td3": TD3, "camel": FAST}, "td3", 250, {"td3": 1.0, "camel": 1.0})
    assert target == 20.0 and times["camel"][0] == 200
    with pytest.raises(ValueError, match="end at step 300, before 400"):
        time_to_return({"td3": TD3}, "td3", 400, {"td3": 1.0})


def test_the_scalars_of_a_method_below_the_reference_computed_by_hand():
    """docs/design.md's diagnosis table: masking ends at 0.5 × 400 = 200; evaluation episodes last at most 10 steps."""
    guided = {"llm_policy": "policies/hopper.py", "epsilon_fraction": "0.5", "total_timesteps": "400"}

    def runs(td3, camel, settings=guided):
        found = {"td3": [run(seed, points) for seed, points in zip((1, 2), td3)]} if td3 else {}
        found["camel"] = [run(seed, points, "camel")._replace(settings=settings) for seed, points in zip((1, 2), camel)]
        return found

    steps = (100, 200, 300, 400)
    scalars = {
        "eval/episodic_return": runs([list(zip(steps, (0, 10, 20, 30))), list(zip(steps, (0, 30, 40, 54)))],
                                     [list(zip(steps, (10, 40, 50, 20))), list(zip(steps, (20, 40, 50, 26)))]),
        "eval/episodic_length": runs([list(zip(steps, (5, 10, 7, 10))), list(zip(steps, (10,) * 4))],  # falls after 200: TD3 seed 1 at 300
                                     [list(zip(steps, (10, 4, 10, 9))), list(zip(steps, (10,) * 4))]),  # CAMEL seed 1 at 400 (200 is not after)
        "charts/episodic_return": runs([[(100, 1), (400, 3)], [(100, 3), (400, 5)]], [[(100, 7), (400, 9)], [(100, 9), (400, 11)]]),
        "losses/qf1_values": runs([[(200, 2), (400, 4)]] * 2, [[(200, 6), (400, 8)]] * 2),
        "charts/masked_fraction": runs([[(0, 0), (400, 0)]] * 2, [[(0, 1.0), (200, 0.5), (400, 0)]] * 2),
        "charts/guide_bc_rows": runs(None, [[(200, 0.25), (400, 0.125)]] * 2),
    }  # fmt: skip
    table = scalars_markdown("Hopper-v4", scalars, ["td3", "camel"], {"td3": "TD3", "camel": "CAMEL"}.get, [200, 400], 10)
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1:] for line in table.splitlines()[2:]}
    assert table.startswith("| Hopper-v4, mean over seeds 1, 2 | TD3 | CAMEL |\n|---|---|---|\n")
    assert rows["return without the mask at 200 / 400"] == ["20 / 42", "40 / 23 |"]
    assert rows["return without the mask at 400 (per seed)"] == ["42 (30, 54)", "23 (20, 26) |"]
    # fewer than 10 evaluations: all of them, 15 and 31 for TD3, 30 and 34 for CAMEL
    assert rows["return without the mask over the last 10 evaluations, 100-400 (per seed)"] == ["23 (15, 31)", "32 (30, 34) |"]
    assert rows["steps per evaluation episode at 400, of 10 (per seed)"] == ["10, 10", "9, 10 |"]
    assert rows["evaluations after masking ends (200) with an episode cut short by a fall, of 2 (per seed)"] == [
        "1, 0; the last at 300", "1, 0; the last at 400 |"]  # fmt: skip
    assert rows["training episodes' return (`charts/episodic_return`) at 200 / 400"] == ["2 / 4", "8 / 10 |"]
    assert rows["the critics' Q (`losses/qf1_values`) at 200 / 400"] == ["2 / 4", "6 / 8 |"]
    assert rows["masked share (`charts/masked_fraction`) at 200 / 400"] == ["0 / 0", "0.5 / 0 |"]
    assert rows["share of a batch's rows in guide BC (`charts/guide_bc_rows`) at 200 / 400"] == ["not logged", "0.25 / 0.125 |"]
    # trapezoids over 100-400, / 300: TD3 4500 and 9700 (15 and 32.3), CAMEL 10500 and 11300 (35 and 37.7)
    assert rows["return without the mask averaged over training, 100-400 (area under the curve) [range]"] == ["24 [15, 32]", "36 [35, 38] |"]
    assert len(rows) == 10

    without_bc = dict(scalars, **{"charts/guide_bc_rows": {}})  # where no method logged guide BC, its row is left out
    assert "guide BC" not in scalars_markdown("Hopper-v4", without_bc, ["td3", "camel"], str, [200, 400], 10)
    unequal = dict(without_bc)
    unequal["eval/episodic_return"] = runs([list(zip(steps, (0,) * 4))] * 2, [list(zip(steps, (0,) * 4))] * 2, dict(guided, epsilon_fraction="0.25"))
    unequal["eval/episodic_return"]["camel"][1] = unequal["eval/episodic_return"]["camel"][1]._replace(settings=guided)
    with pytest.raises(ValueError, match=r"end their masking at different steps: \[100, 200\]"):
        scalars_markdown("Hopper-v4", unequal, ["td3", "camel"], str, [200, 400], 10)
    unguided = dict(without_bc, **{"eval/episodic_return": runs(None, [list(zip(steps, (0,) * 4))] * 2, {**guided, "llm_policy": "None"})})
    with pytest.raises(ValueError, match=r"^none of the runs has a guide, so none ends masking"):
        scalars_markdown("Hopper-v4", unguided, ["camel"], str, [200, 400], 10)


def test_the_references_name_their_sources_and_the_paper_envs():
    for returns, source in REFERENCES_1M.values():
        assert set(returns) == {"Hopper-v4", "Walker2d-v4", "Ant-v4"} and "arXiv" in source
    assert REFERENCES["DR.Q"].returns == {"Hopper-v4": 2504, "Walker2d-v4": 6422, "Ant-v4": 8138}
    assert "Ant-v4" not in REFERENCES["CleanRL's TD3"].returns and "training episodes" in REFERENCES["CleanRL's TD3"].source
    assert {reference.step for reference in REFERENCES.values()} == {1_000_000}


def test_the_budget_figure_is_written_with_a_panel_per_env(tmp_path):
    groups = {("Hopper-v4", "td3"): TD3, ("Hopper-v4", "camel"): FAST, ("Ant-v4", "td3"): [run(1, [(100, 5), (1_000_000, 900)])]}
    paths = [tmp_path / "budget.png", tmp_path / "budget.svg", tmp_path / "budget.pdf"]
    draw_budget_figure(groups, ["Hopper-v4", "Ant-v4"], ["td3", "camel"], {"td3": "TD3", "camel": "paper's CAMEL"}, paths)
    first = [path.read_bytes() for path in paths]
    draw_budget_figure(groups, ["Hopper-v4", "Ant-v4"], ["td3", "camel"], {"td3": "TD3", "camel": "paper's CAMEL"}, paths)
    assert [path.read_bytes() for path in paths] == first  # undated: a redraw of the same runs leaves the files as they were
    from matplotlib.image import imread

    image = imread(paths[0])
    assert image.shape[1] > image.shape[0] * 1.5  # two panels side by side
    svg = paths[1].read_text()
    assert "MR.Q at 1M, published" in svg and "TD7 at 1M, published" in svg and "TD3 (1-2 seeds)" in svg


def test_a_variant_measured_at_several_thread_counts_gives_its_one_thread_speed():
    rows = {"td3": [{"variant": "td3", "threads": 1, "median": 80.0}, {"variant": "td3", "threads": 2, "median": 120.0}]}
    assert method_speeds(Speeds("bench.json", "CPU", "today", rows), ["td3"]) == {"td3": 80.0}
    with pytest.raises(ValueError, match="no benchmark variant stands for method 'sac'"):
        method_speeds(Speeds("bench.json", "CPU", "today", rows), ["sac"])


# ---- python plot.py budget, on exported run files written as `python plot.py export` writes them
GUIDES = {"Hopper-v4": "policies/hopper.py", "Walker2d-v4": "policies/walker2d.py"}
EVERY_100K = list(range(100_000, 1_000_001, 100_000))
# each method's return at step t, by seed: TD3 2t/1000 (+200 for seed 22), the paper's CAMEL 3t/1000 + 100 (+200),
# CAMEL+ t/1000; the same on both envs, where Walker2d-v4's CAMEL+ seed 22 is under way at 500k
CURVES = {"td3": (2, [0, 200]), "camel_td3": (3, [100, 300]), "camel_plus_td3": (1, [0, 0])}
SPEEDS = {"machine": {"cpu": "Test CPU 9000", "date": "2026-12-01 10:00 UTC"},
          "summary": [{"variant": "td3", "threads": 1, "median": 100.0}, {"variant": "camel", "threads": 1, "median": 50.0},
                      {"variant": "camel-plus", "threads": 1, "median": 25.0}, {"variant": "cleanrl", "threads": 1, "median": 60.0}]}  # fmt: skip


def write_exported_run(folder, env_id, method, seed, points, finished=True):
    """One exported run file (camel-run/1), as `python plot.py export` and scripts/queue.py write it: a run under way
    has "finished": null and names its guide only by its --llm-policy."""
    run_name = f"{env_id}__{method}__{seed}"
    guide = GUIDES[env_id] if method != "td3" else None
    hyperparameters = {"exp_name": method, "seed": str(seed), "env_id": env_id, "total_timesteps": "1000000",
                       "learning_starts": "5000", "llm_policy": guide or "None", "eval_frequency": "100000"}  # fmt: skip
    record = {"format": "camel-run/1", "run_name": run_name, "env_id": env_id, "condition": method, "seed": seed,
              "total_timesteps": 1_000_000, "finished": None, "hyperparameters": hyperparameters, "binned": {},
              "curves": {"eval/episodic_return": [[s, float(v)] for s, v in points]}}  # fmt: skip
    if finished:
        sha256 = hashlib.sha256((REPO / guide).read_bytes()).hexdigest() if guide else None
        record["finished"] = {"run_name": run_name, "env_id": env_id, "exp_name": method, "seed": seed, "total_timesteps": 1_000_000,
                              "final_eval_return": float(points[-1][1]), "guide_file": {"path": guide, "sha256": sha256} if guide else None}  # fmt: skip
        if (env_id, method, seed) != ("Hopper-v4", "td3", 22):  # one run from before runs recorded their CPU
            record["finished"]["cpu"] = {21: "CPU A", 22: "CPU B"}[seed]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{run_name}.json").write_text(export_text(record))


def write_b1m(folder):
    for env_id in GUIDES:
        for method, (slope, offsets) in CURVES.items():
            for seed, offset in zip((21, 22), offsets):
                under_way = env_id == "Walker2d-v4" and method == "camel_plus_td3" and seed == 22
                steps = [s for s in EVERY_100K if s <= 500_000] if under_way else EVERY_100K
                write_exported_run(folder, env_id, method, seed, [(s, slope * s / 1000 + offset) for s in steps], not under_way)
    return folder


def run_budget(runs_dirs, output_dir, **flags):
    """plot.py budget's (exit status, what it printed, what it said on stderr), with 200 bootstrap resamples."""
    args = plot.BudgetArgs(runs_dirs=tuple(str(d) for d in runs_dirs), output_dir=str(output_dir), bootstrap_resamples=200, **flags)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = plot.budget(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The report of the synthetic B1M runs with --speeds and --include-unfinished: (output folder, its Markdown, stdout)."""
    root = tmp_path_factory.mktemp("budget")
    speeds = root / "bench.json"
    speeds.write_text(json.dumps(SPEEDS))
    code, out, err = run_budget([write_b1m(root / "B1M")], root / "out", speeds=str(speeds), include_unfinished=True)
    assert code == 0, err
    return root / "out", (root / "out" / "budget.md").read_text(), out


def section(markdown, title):
    """{(first cell, second cell): the other cells} of the table under the heading that starts with `title`."""
    text = markdown[markdown.index(f"### {title}") :]
    text = text[: text.index("\n### ", 1)] if "\n### " in text[1:] else text
    rows = [[c.strip() for c in row.strip().strip("|").split("|")] for row in text.splitlines() if row.startswith("| ")]
    return {tuple(cells[:2]): cells[2:] for cells in rows[1:]}


def estimate(cell):
    """The point of a cell "point [low, high]"."""
    return float(re.fullmatch(r"(-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\]", cell).group(1))


TD3_LABEL, CAMEL_LABEL, PLUS_LABEL = "TD3", "paper's CAMEL, LLM-written guide", "CAMEL+, LLM-written guide"


def test_budget_writes_the_figure_and_the_report_and_prints_it(report):
    folder, markdown, printed = report
    assert sorted(p.name for p in folder.iterdir()) == ["budget.md", "budget.pdf", "budget.png", "budget.svg"]
    assert markdown in printed
    assert "marked at 1M: MR.Q's and TD7's published mean returns" in markdown


def test_budget_gives_the_mean_return_at_each_step(report):
    rows = section(report[1], "Mean return")
    # TD3 at 300k: seed 21 2 * 300 = 600, seed 22 600 + 200 = 800: mean 700; CAMEL+ on Walker2d-v4 at 1M: only seed 21
    assert rows[(TD3_LABEL, "Hopper-v4")] == ["300.0 [200.0, 400.0] (n=2)", "700.0 [600.0, 800.0] (n=2)", "2100.0 [2000.0, 2200.0] (n=2)"]
    assert rows[(PLUS_LABEL, "Walker2d-v4")][2] == "1000.0 [1000.0, 1000.0] (n=1)"


def test_budget_names_the_cpu_model_of_each_run(report):
    rows = section(report[1], "Machines")
    assert rows[(TD3_LABEL, "Walker2d-v4")] == ["21: CPU A, 22: CPU B"]
    assert rows[(TD3_LABEL, "Hopper-v4")] == ["21: CPU A, 22: not recorded"]
    assert rows[(PLUS_LABEL, "Walker2d-v4")] == ["21: CPU A, 22: under way"]


def test_budget_gives_the_interval_estimates_at_each_step_once_every_run_reached_it(report):
    markdown = report[1]
    assert "### Interval estimates at 100k, 300k and 1M steps: IQM and mean, P(X > TD3)" in markdown
    rows = {}
    text = markdown[markdown.index("### Interval estimates") : markdown.index("### Mean return")]
    for row in [r for r in text.splitlines() if r.startswith("| ")][1:]:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        rows[(cells[0], cells[1], cells[2])] = cells[3:]
    # Hopper-v4 at 1M: TD3's returns 2000 and 2200, normalised (R - 18) / (2693 - 18); 2 runs: the IQM is their mean
    hopper = rows[(TD3_LABEL, "Hopper-v4", "1M")]
    assert hopper[0] == "2" and estimate(hopper[1]) == pytest.approx(((2000 - 18) / 2675 + (2200 - 18) / 2675) / 2, abs=0.005)
    # every CAMEL run above every TD3 run, every CAMEL+ run below: P = 1 and 0 in every resample
    assert rows[(CAMEL_LABEL, "Hopper-v4", "1M")][3] == "1.00 [1.00, 1.00]"
    assert rows[(PLUS_LABEL, "Hopper-v4", "1M")][3] == "0.00 [0.00, 0.00]"
    # aggregated over the two envs at 300k, where every run is (Walker2d-v4: (R - 3) / 6037)
    td3 = rows[(TD3_LABEL, "aggregate (2 envs)", "300k")]
    assert td3[0] == "4" and estimate(td3[2]) == pytest.approx((682 / 2675 + 697 / 6037) / 2, abs=0.005)
    # Walker2d-v4 at 1M: CAMEL+'s seed 22 is at 500k, so no estimates there and no aggregate; the cell says how many
    assert rows[(PLUS_LABEL, "Walker2d-v4", "1M")][:2] == ["1 of 2¹", "—"]
    assert rows[(TD3_LABEL, "Walker2d-v4", "1M")][0] == "2 of 2¹"
    assert not any(key[1].startswith("aggregate (") and key[2] == "1M" for key in rows)
    assert "¹ Seeds of the condition that reached the step" in markdown


def test_time_to_tds_return_is_in_hours_at_each_trainers_speed(report):
    rows = section(report[1], "Time to TD3's return")
    # Hopper-v4, TD3's mean at 300k is 700: TD3 reaches it at 300k (300,000 / 100 steps/s / 3600 = 0.83 h), the paper's
    # CAMEL (mean 3t/1000 + 200) at 200k (200,000 / 50 / 3600 = 1.11 h), CAMEL+ (t/1000) at 700k (700,000 / 25 / 3600 = 7.78 h)
    assert rows[("Hopper-v4", "TD3 at 300k")] == ["700.0", "300k steps, 0.83 h", "200k steps, 1.11 h", "700k steps, 7.78 h"]
    # TD3's mean at 1M is 2100: the paper's CAMEL first at 700k (3.89 h); CAMEL+ ends at 1000 below it
    assert rows[("Hopper-v4", "TD3 at 1M")] == ["2100.0", "1M steps, 2.78 h", "700k steps, 3.89 h", "not reached by 1M"]
    # on Walker2d-v4 CAMEL+'s mean curve ends at 500k, where its seed 22 is
    assert rows[("Walker2d-v4", "TD3 at 300k")][3] == "not reached by 500k"
    markdown = report[1]
    assert "| TD3 (100.0 steps/s) | paper's CAMEL, LLM-written guide (50.0 steps/s) | CAMEL+, LLM-written guide (25.0 steps/s) |" in markdown
    assert "bench.json (benchmarks/benchmark.py, measured side by side on Test CPU 9000" in markdown


def test_the_published_returns_are_listed_with_their_sources(report):
    rows = section(report[1], "Published returns")
    assert rows[("DR.Q", "2504")] == ["6422", "1M", REFERENCES["DR.Q"].source]
    assert rows[("CleanRL's TD3", "3135")][:2] == ["4058", "1M"]
    assert {name for name, _ in rows} == {"MR.Q", "TD7", "DR.Q", "CleanRL's TD3"}


def test_a_target_the_reference_has_not_reached_is_said_in_one_line(tmp_path):
    runs = write_b1m(tmp_path / "B1M")
    (tmp_path / "bench.json").write_text(json.dumps(SPEEDS))
    code, _, err = run_budget([runs], tmp_path / "out", speeds=str(tmp_path / "bench.json"), target_steps=(300_000, 2_000_000))
    assert code == 0, err
    rows = section((tmp_path / "out" / "budget.md").read_text(), "Time to TD3's return")
    assert rows[("Hopper-v4", "TD3 at 2M")][:2] == ["—", "not every TD3 seed has reached 2M (all have reached 1M)"]


def test_runs_under_way_are_left_out_unless_asked_for(tmp_path):
    code, printed, _ = run_budget([write_b1m(tmp_path / "B1M")], tmp_path / "out")
    assert code == 0
    assert "left out 1 run not finished" in printed
    rows = section((tmp_path / "out" / "budget.md").read_text(), "Mean return")
    assert rows[(PLUS_LABEL, "Walker2d-v4")][0] == "100.0 [100.0, 100.0] (n=1)"  # seed 21 alone
    assert "### Time to" not in (tmp_path / "out" / "budget.md").read_text()  # no --speeds, no time to a return


@pytest.mark.parametrize("problem", ["missing folder", "no runs", "speeds without a variant", "speeds not a benchmark", "no reference"])
def test_bad_input_is_one_error_line_and_exit_1(tmp_path, problem):
    runs = tmp_path / "B1M"
    if problem == "no runs":
        runs.mkdir()
    elif problem != "missing folder":
        write_b1m(runs)
    speeds = tmp_path / "bench.json"
    summary = [row for row in SPEEDS["summary"] if row["variant"] != "camel-plus"]
    speeds.write_text("not json" if problem == "speeds not a benchmark" else json.dumps({**SPEEDS, "summary": summary}))
    flags = {"speeds": str(speeds)} if problem.startswith("speeds") else {}
    if problem == "no reference":
        flags["reference"] = "sac"
    code, _, err = run_budget([runs], tmp_path / "out", **flags)
    assert code == 1
    assert len(err.splitlines()) == 1 and err.startswith("error: ")
    expected = {"missing folder": "B1M: no such folder", "no runs": "no runs with eval/episodic_return under",
                "speeds without a variant": "no one speed of variant 'camel-plus' (camel_plus_td3): it measured td3, camel, cleanrl",
                "speeds not a benchmark": "not a benchmarks/benchmark.py result", "no reference": "--reference sac: no runs of it"}  # fmt: skip
    assert expected[problem] in err
    assert not (tmp_path / "out" / "budget.md").exists()


def test_the_command_line_runs_budget_as_a_subcommand(tmp_path):
    runs = write_b1m(tmp_path / "B1M")
    (tmp_path / "bench.json").write_text(json.dumps(SPEEDS))
    command = [sys.executable, "plot.py", "budget", str(runs), "--speeds", str(tmp_path / "bench.json"), "--include-unfinished",
               "--output-dir", str(tmp_path / "out"), "--name", "b1m", "--steps", "300000", "--bootstrap-resamples", "200"]  # fmt: skip
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["b1m.md", "b1m.pdf", "b1m.png", "b1m.svg"]
    assert "### Interval estimates at 300k steps" in (tmp_path / "out" / "b1m.md").read_text()
    result = subprocess.run(command + ["--output-dir", str(tmp_path / "png"), "--formats", "png"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and sorted(p.name for p in (tmp_path / "png").iterdir()) == ["b1m.md", "b1m.png"]
    result = subprocess.run(command + ["--output-dir", str(tmp_path / "none"), "--formats", "none"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and sorted(p.name for p in (tmp_path / "none").iterdir()) == ["b1m.md"]
    assert (tmp_path / "none" / "b1m.md").read_text() == (tmp_path / "png" / "b1m.md").read_text()
    result = subprocess.run([sys.executable, "plot.py", "budget", str(tmp_path / "absent")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"error: {tmp_path / 'absent'}: no such folder")
    result = subprocess.run(command + ["--formats", "gif"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stderr == "error: --formats gif: each of png, svg, pdf, at least one, or none alone for the tables without a figure\n"
