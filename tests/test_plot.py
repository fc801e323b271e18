"""plot.py and camel_utils/results/: reading runs from TensorBoard event files and exported files, aligning them on steps,
the table's numbers, which baseline each condition is compared with, which runs are shown, the figure's names and
styles, the export, and the command line. The statistics alone are in test_results_stats.py, the names in
test_conditions.py."""

import glob
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
from torch.utils.tensorboard import SummaryWriter

import plot
from camel_utils.results import export as export_module
from camel_utils.results import stats
from camel_utils.results.figures import BAND_NOTE, COLORS, condition_colors
from camel_utils.results.guides import GuideLine, guide_lines
from camel_utils.results.provenance import GuideFile, guide_kind
from camel_utils.results.runs import Run, load_runs, read_events
from camel_utils.results.tables import QUOTED_TABLE, quote_tables

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_run(runs_dir, name, points, tag="eval/episodic_return", hyperparameters=None, purge_step=None,
              finished=None, extra=None, guide=None):  # fmt: skip
    """A run folder with one event file holding `points` [(step, value)] of `tag` and `extra` {tag: points}, as
    the trainers log them, and with finished.json when `finished` (by default when the name is a run's,
    {env_id}__{exp_name}__{seed}); `guide` (path, sha256): the guide file it logged (--llm-policy) and recorded."""
    parts = name.split("__")
    finished = len(parts) >= 3 and parts[2].isdigit() if finished is None else finished
    if guide is not None:
        hyperparameters = {**(hyperparameters or {}), "llm_policy": guide[0]}
    writer = SummaryWriter(os.path.join(runs_dir, name), purge_step=purge_step)
    if hyperparameters:
        rows = "\n".join(f"|{k}|{v}|" for k, v in hyperparameters.items())
        writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{rows}")
    for step, value in points:
        writer.add_scalar(tag, value, step)
    for other_tag, other_points in (extra or {}).items():
        for step, value in other_points:
            writer.add_scalar(other_tag, value, step)
    writer.close()
    if finished:
        env_id, exp_name, seed = parts[:3]
        summary = {"run_name": name, "env_id": env_id, "exp_name": exp_name, "seed": int(seed),
                   "total_timesteps": points[-1][0], "final_eval_return": points[-1][1], "guide_calls": None,
                   "guide_failures": 0}  # fmt: skip
        if guide is not None:
            summary["guide_file"] = {"path": guide[0], "sha256": guide[1]}
        (runs_dir / name / "finished.json").write_text(json.dumps(summary))


def exported_run(folder, env_id, condition, seed, points, guide=None, finished=True, run_name=None):
    """An exported run file (camel-run/1) as scripts/queue.py writes them: `guide` (path, sha256) the guide file
    its finished.json recorded (and its --llm-policy), `finished` False for a run under way ("finished": null)."""
    run_name = run_name or f"{env_id}__{condition}__{seed}"
    record = {"format": "camel-run/1", "run_name": run_name, "env_id": env_id, "condition": condition, "seed": seed,
              "total_timesteps": points[-1][0], "finished": None,
              "hyperparameters": {"exp_name": condition, "seed": str(seed), "env_id": env_id, "llm_policy": guide[0] if guide else "None"},
              "binned": {}, "curves": {"eval/episodic_return": [[s, v] for s, v in points]}}  # fmt: skip
    if finished:
        record["finished"] = {"run_name": run_name, "env_id": env_id, "exp_name": condition, "seed": seed,
                              "guide_file": {"path": guide[0], "sha256": guide[1]} if guide else None}  # fmt: skip
    os.makedirs(folder, exist_ok=True)
    (folder / f"{run_name}.json").write_text(json.dumps(record))


def committed_sha256(path):
    """The sha256 of a file as committed (HEAD), by git itself."""
    shown = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=REPO, capture_output=True, check=True)
    return hashlib.sha256(shown.stdout).hexdigest()


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
    """plot.py's main with these flags (name, value, ...), 200 bootstrap resamples unless given: enough to test it."""
    runs_dirs = tuple(str(d) for d in runs_dir) if isinstance(runs_dir, (list, tuple)) else (str(runs_dir),)
    args = plot.Args(runs_dirs=runs_dirs, output_dir=str(output_dir), guide_returns=None, bootstrap_resamples=200)
    for flag, value in zip(flags[::2], flags[1::2]):
        setattr(args, flag, value)
    return plot.main(args)


def table_rows(output_dir, name="results"):
    """{condition label: [cells]} from the env tables of the table file (the last env's where several have the label)."""
    rows = {}
    text = (output_dir / f"{name}.md").read_text()
    for row in text[text.index("\n### ", text.index("### Interval estimates") + 1):].splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if row.startswith("| ") and cells[0] != "condition":
            rows[cells[0]] = cells[1:]
    return rows


def run(seed, steps, values, condition="camel"):
    return Run("Hopper-v4", condition, seed, f"seed{seed}", np.array(steps), np.array(values, dtype=float))


# ---- Seeds of one condition must be one experiment
def test_a_condition_whose_seeds_differ_in_an_algorithm_setting_is_an_error(tmp_path, capsys):
    runs = tmp_path / "runs"
    write_run(runs, "Hopper-v4__camel__1", line([1000, 2000], 0.01), hyperparameters={"learning_starts": "25000", "seed": "1"})
    write_run(runs, "Hopper-v4__camel__2", line([1000, 2000], 0.01), hyperparameters={"learning_starts": "25000", "seed": "2"})
    write_run(runs, "Hopper-v4__camel__3", line([1000, 2000], 0.01), hyperparameters={"learning_starts": "5000", "seed": "3"})
    assert run_plot(runs, tmp_path / "out") == 1
    err = capsys.readouterr().err
    assert "the Hopper-v4 runs of 'camel' were run with different settings: --learning-starts 25000 (seed 1 2), 5000 (seed 3)" in err
    assert "keep one setting's seeds with --seeds camel=A-B" in err
    assert not (tmp_path / "out").exists()  # nothing drawn from the mix
    assert run_plot(runs, tmp_path / "out", "seeds", ["camel=1-2"]) == 0  # what the error offers works


def test_seeds_that_differ_only_in_bookkeeping_or_in_unlogged_settings_plot_together(tmp_path):
    # the same guide file (its sha256) from two checkouts is one guide, whatever its path
    runs, guide = tmp_path / "runs", "c" * 64
    write_run(runs, "Hopper-v4__camel__1", line([1000, 2000], 0.01), guide=("/a/hopper.py", guide),
              hyperparameters={"learning_starts": "5000", "torch_threads": "1"})  # fmt: skip
    write_run(runs, "Hopper-v4__camel__2", line([1000, 2000], 0.02), guide=("/b/hopper.py", guide),
              hyperparameters={"learning_starts": "5000", "torch_threads": "0", "distill_coef": "0.0"})  # fmt: skip
    write_run(runs, "Hopper-v4__camel__3", line([1000, 2000], 0.03), guide=("/a/hopper.py", guide), hyperparameters={"learning_starts": "5000"})
    assert run_plot(runs, tmp_path / "out") == 0
    assert table_rows(tmp_path / "out")["paper's CAMEL, guide hopper.py"][-4] == "1: 20.0, 2: 40.0, 3: 60.0"
    # exported runs are checked the same way: the exports of these seeds, one edited to another setting
    assert plot.export(plot.ExportArgs(runs_dir=str(runs), to=str(tmp_path / "export"))) == 0
    assert run_plot(tmp_path / "export", tmp_path / "out2") == 0
    exported = tmp_path / "export" / "Hopper-v4__camel__1.json"
    record = json.loads(exported.read_text())
    record["hyperparameters"]["learning_starts"] = "25000"
    exported.write_text(json.dumps(record))
    assert run_plot(tmp_path / "export", tmp_path / "out3") == 1


def test_a_condition_uses_the_guide_of_the_condition_it_varies_and_each_guide_is_one_dashed_line():
    guides = {"Hopper-v4": {"camel_tuned": 2542.1, "lean": 75.6, "expert": 3044.8}}
    shown = ["baseline", "camel_tuned_ls25k", "camel", "sac_camel_tuned", "camel_tuned_ls25k_no_ma_em", "lean_ls25k", "random_no_ma_em"]
    # the tuned guide is drawn once, in the colour of the first shown condition that uses it; the LLM-written guide
    # (camel) has no entry here, and baseline and random have none
    assert guide_lines(guides, "Hopper-v4", shown) == [
        GuideLine("camel_tuned", "camel_tuned_ls25k", 2542.1), GuideLine("lean", "lean_ls25k", 75.6)]  # fmt: skip
    # in the guide's own colour when the condition at its defaults is shown
    assert guide_lines(guides, "Hopper-v4", ["camel_tuned_ls25k", "camel_tuned"])[0].condition == "camel_tuned"
    assert guide_lines(guides, "Hopper-v4", ["expert_ls25k_no_ma_em"]) == [GuideLine("expert", "expert_ls25k_no_ma_em", 3044.8)]
    assert guide_lines(guides, "Walker2d-v4", shown) == []
    # two different guides with the same return keep a line each; a condition's own entry wins over the one it varies
    guides = {"Hopper-v4": {"camel": 1000.0, "standstill": 1000.0, "camel_tuned": 900.0}}
    assert [(g.entry, g.value) for g in guide_lines(guides, "Hopper-v4", ["camel", "standstill", "camel_tuned"])] == [
        ("camel", 1000.0), ("standstill", 1000.0), ("camel_tuned", 900.0)]


# ---- What differs is never one line: guide files, runs under way
def test_two_runs_of_one_method_and_seed_with_different_guides_are_two_conditions_each_named_by_its_guide(tmp_path, capsys):
    """Issue 52's reproduction: two CAMEL+ runs of seed 24 in one folder, one with the hand-written tuned guide and one
    with the LLM-written one, were "Found 1 runs": one kept, labelled "LLM-written guide"."""
    runs = tmp_path / "L100"
    exported_run(runs, "Hopper-v4", "camel_plus_td3", 24, [(5000, 100.0), (10_000, 700.0)],
                 guide=("policies/hopper.py", committed_sha256("policies/hopper.py")))  # fmt: skip
    exported_run(runs, "Hopper-v4", "camel_plus_td3", 24, [(5000, 300.0), (10_000, 2000.0)],
                 guide=("policies/tuned/hopper.py", "1" * 64), run_name="Hopper-v4__camel_plus_td3_hopper__24")  # fmt: skip
    found = load_runs([str(runs)], "eval/episodic_return")
    assert sorted(run.guide.path for run in found.runs) == ["policies/hopper.py", "policies/tuned/hopper.py"]
    assert run_plot(runs, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert "found 2 runs" in out
    assert "camel_plus_td3@llm" in out and "camel_plus_td3@tuned" in out  # each a condition of its own
    rows = table_rows(tmp_path / "out")
    assert rows["CAMEL+, LLM-written guide"][-4] == "24: 700.0"
    assert rows["CAMEL+, hand-written guide (tuned)"][-4] == "24: 2000.0"
    legend = svg_texts(tmp_path / "out" / "results.svg")
    assert legend.count("CAMEL+, LLM-written guide") == 1 and legend.count("CAMEL+, hand-written guide (tuned)") == 1


def test_seeds_of_one_label_with_different_guide_files_are_refused_in_one_line(tmp_path, capsys):
    runs = tmp_path / "runs"
    for seed, sha in [(1, "a" * 64), (2, "a" * 64), (3, "b" * 64)]:  # the tuned guide edited between seeds 2 and 3
        exported_run(runs, "Hopper-v4", "camel_plus_td3", seed, [(1000, 1.0), (2000, 2.0)], guide=("policies/tuned/hopper.py", sha))
    assert run_plot(runs, tmp_path / "out") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "error: the Hopper-v4 runs of 'camel_plus_td3' (CAMEL+, hand-written guide (tuned)) ran with different guide files: "
        "policies/tuned/hopper.py (sha256 aaaaaaaa, seed 1 2), policies/tuned/hopper.py (sha256 bbbbbbbb, seed 3).")  # fmt: skip
    assert not (tmp_path / "out").exists()  # nothing drawn from the mix
    # what the line offers works: one file's seeds, or a label of its own for one file
    assert run_plot(runs, tmp_path / "a", "seeds", ["camel_plus_td3=1-2"]) == 0
    assert run_plot(runs, tmp_path / "b", "label", ["camel_plus_td3@bbbbbbbb=CAMEL+, tuned guide as edited"]) == 0
    assert list(table_rows(tmp_path / "b")) == ["CAMEL+, hand-written guide (tuned)", "CAMEL+, tuned guide as edited"]
    assert table_rows(tmp_path / "b")["CAMEL+, tuned guide as edited"][-4] == "3: 2.0"


def test_runs_under_way_are_left_out_unless_asked_for(tmp_path, capsys):
    runs = tmp_path / "L100"
    hopper = "policies/hopper.py"
    exported_run(runs, "Hopper-v4", "td3", 24, [(5000, 10.0), (10_000, 20.0)])
    exported_run(runs, "Hopper-v4", "camel_plus_td3", 24, [(5000, 40.0), (10_000, 90.0)], guide=(hopper, committed_sha256(hopper)))
    exported_run(runs, "Hopper-v4", "td3", 25, [(5000, 30.0)], finished=False)
    exported_run(runs, "Hopper-v4", "camel_td3", 24, [(5000, 50.0)], guide=(hopper, None), finished=False)  # no sha256 yet
    assert run_plot(runs, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert ('note: left out 2 runs not finished (no finished.json; exported with "finished": null): Hopper-v4__camel_td3__24.json, '
            "Hopper-v4__td3__25.json; --include-unfinished shows them") in out.splitlines()  # fmt: skip
    assert "found 2 runs" in out
    assert list(table_rows(tmp_path / "out")) == ["TD3", "CAMEL+, LLM-written guide"]
    assert run_plot(runs, tmp_path / "all", "include_unfinished", True) == 0
    # the run under way recorded no sha256 of its guide: it takes the one the finished run recorded for the same file
    assert list(table_rows(tmp_path / "all")) == ["TD3", "paper's CAMEL, LLM-written guide", "CAMEL+, LLM-written guide"]
    assert table_rows(tmp_path / "all")["TD3"][-4] == "24: 10.0, 25: 30.0"  # at 5k, the last step every run reached


def test_a_guide_is_called_llm_written_only_where_its_provenance_says_so(tmp_path):
    hopper = committed_sha256("policies/hopper.py")
    assert guide_kind(GuideFile("policies/hopper.py", hopper)) == ("llm", "LLM-written guide")
    # the shipped path with other bytes (an edited copy), or with none recorded: named by its path
    assert guide_kind(GuideFile("policies/hopper.py", "0" * 64)).label == "guide policies/hopper.py (not the committed file)"
    assert guide_kind(GuideFile("policies/hopper.py", None)).label == "guide policies/hopper.py (sha256 not recorded)"
    # a candidate under policies/llm/ with its provenance record, as committed
    candidate = "policies/llm/Hopper-v4/round1_candidate4.py"
    assert guide_kind(GuideFile(candidate, committed_sha256(candidate))).label == "LLM-written guide"
    # the hand-written guides by their folder, any other file by its name
    assert guide_kind(GuideFile("policies/tuned/hopper.py", "1" * 64)) == ("tuned", "hand-written guide (tuned)")
    assert guide_kind(GuideFile("policies/poor/walker2d_lean.py", "2" * 64)) == ("poor_lean", "hand-written poor guide (lean)")
    assert guide_kind(GuideFile("policies/candidates/hopper/selected.py", "3" * 64)) == ("selected", "guide selected.py")
    # a file put under policies/llm/ without the record generate_policy.py keeps of an answer is not LLM-written
    folder = tmp_path / "policies" / "llm" / "Hopper-v4"
    folder.mkdir(parents=True)
    (folder / "provenance.json").write_text("{}")
    (folder / "mine.py").write_text("def policy(obs):\n    return obs[:3]\n")
    assert guide_kind(GuideFile("policies/llm/Hopper-v4/mine.py", "4" * 64), repo=tmp_path).label == "guide mine.py"
    (folder / "mine.json").write_text(json.dumps({"code_file": "mine.py"}))  # with the record: LLM-written if committed
    assert guide_kind(GuideFile("policies/llm/Hopper-v4/mine.py", "4" * 64), repo=tmp_path).label.endswith("(not the committed file)")


# ---- The interval estimates of docs/preregistration.md
def interval_rows(output_dir, name="results"):
    """{(condition label, env): [step, runs, IQM, mean, P(X > baseline)]} from the interval estimates' table."""
    text = (output_dir / f"{name}.md").read_text()
    section = text[text.index("### Interval estimates") : text.index("\n### ", text.index("### Interval estimates") + 1)]
    rows = [[c.strip() for c in row.strip().strip("|").split("|")] for row in section.splitlines() if row.startswith("| ")]
    return {(cells[0], cells[1]): cells[2:] for cells in rows[1:]}


def estimate(cell):
    """(point, low, high) of a cell "point [low, high]"."""
    point, low, high = re.fullmatch(r"(-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\]", cell).groups()
    return float(point), float(low), float(high)


def test_a_method_with_one_run_in_an_env_gets_its_point_and_no_ci(tmp_path):
    # normalised scores by hand: TD3 0.1 and 0.3 on each env, CAMEL one run of 0.5 on each (R = 18 + 2675 * score,
    # 3 + 6037 * score): one run shows no spread from seed to seed, so no interval is given for it
    runs = tmp_path / "runs"
    for env_id, (low, high) in {"Hopper-v4": (18.0, 2693.0), "Walker2d-v4": (3.0, 6040.0)}.items():
        for condition, values in {"baseline": [0.1, 0.3], "camel": [0.5]}.items():
            for seed, score in enumerate(values, start=1):
                exported_run(runs, env_id, condition, seed, [(1000, low), (2000, low + score * (high - low))])
    assert run_plot(runs, tmp_path / "out") == 0
    rows = interval_rows(tmp_path / "out")
    camel = "paper's CAMEL, LLM-written guide"
    for env in ("Hopper-v4", "Walker2d-v4", "aggregate (2 envs)"):
        assert rows[(camel, env)][2:] == ["0.50 (one run: no CI)", "0.50 (one run: no CI)", "1.00 (one run: no CI)"]
        point, low, high = estimate(rows[("TD3", env)][3])  # two runs: a CI
        assert point == 0.2 and low < point < high
    assert "(one run: no CI): a method with one run in an env" in (tmp_path / "out" / "results.md").read_text()


def test_the_table_opens_with_iqm_mean_and_probability_of_improvement_of_normalised_scores(tmp_path):
    runs = tmp_path / "runs"
    # normalised final scores, by hand: Hopper-v4 TD3 0.1, 0.3 and CAMEL 0.5, 0.7; Walker2d-v4 TD3 0.2, 0.4 and CAMEL 0.6,
    # 0.8; as returns R = R_random + score * (R_ref - R_random): Hopper-v4 18 + 2675 * score, Walker2d-v4 3 + 6037 * score
    scores = {("Hopper-v4", "baseline"): [0.1, 0.3], ("Hopper-v4", "camel"): [0.5, 0.7],
              ("Walker2d-v4", "baseline"): [0.2, 0.4], ("Walker2d-v4", "camel"): [0.6, 0.8]}  # fmt: skip
    for (env_id, condition), values in scores.items():
        low, high = {"Hopper-v4": (18.0, 2693.0), "Walker2d-v4": (3.0, 6040.0)}[env_id]
        for seed, score in enumerate(values, start=1):
            exported_run(runs, env_id, condition, seed, [(1000, low), (2000, low + score * (high - low))])
    assert run_plot(runs, tmp_path / "out") == 0
    rows = interval_rows(tmp_path / "out")
    # per env: 2 runs, floor(2 / 4) = 0 cut, so the IQM is the mean: TD3 on Hopper-v4 (0.1 + 0.3) / 2 = 0.2
    assert rows[("TD3", "Hopper-v4")][:2] == ["2k", "2"]
    assert estimate(rows[("TD3", "Hopper-v4")][2])[0] == estimate(rows[("TD3", "Hopper-v4")][3])[0] == 0.2
    assert estimate(rows[("paper's CAMEL, LLM-written guide", "Walker2d-v4")][3])[0] == 0.7
    # aggregated: TD3's 4 scores 0.1 0.2 0.3 0.4, one cut at each end: IQM (0.2 + 0.3) / 2 = 0.25; mean (0.2 + 0.3) / 2
    # = 0.25; CAMEL's 0.5 0.6 0.7 0.8: 0.65 and 0.65
    td3, camel = rows[("TD3", "aggregate (2 envs)")], rows[("paper's CAMEL, LLM-written guide", "aggregate (2 envs)")]
    assert (td3[1], estimate(td3[2])[0], estimate(td3[3])[0]) == ("4", 0.25, 0.25)
    assert (estimate(camel[2])[0], estimate(camel[3])[0]) == (0.65, 0.65)
    for cell in td3[2:4] + camel[2:4]:
        point, low, high = estimate(cell)
        assert low <= point <= high
    # every CAMEL run above every TD3 run of its env: P(CAMEL > TD3) is 1 in each resample, on each env and aggregated
    assert camel[4] == rows[("paper's CAMEL, LLM-written guide", "Hopper-v4")][4] == "1.00 [1.00, 1.00]"
    assert td3[4] == "—"  # the baseline against itself
    text = (tmp_path / "out" / "results.md").read_text()
    assert "here Hopper-v4 18 and 2693, Walker2d-v4 3 and 6040" in text and "200 resamples, seed 0" in text
    # rliable's figures beside the others
    for name in ("results_intervals.png", "results_profile.png"):
        assert (tmp_path / "out" / name).stat().st_size > 1000


def test_an_env_without_normalisation_numbers_is_reported_in_returns_and_left_out_of_the_aggregate(tmp_path):
    runs = tmp_path / "runs"
    for env_id, finals in [("Hopper-v4", [1355.5, 1355.5]), ("HalfCheetah-v4", [100.0, 300.0])]:
        for seed, final in enumerate(finals, start=1):
            exported_run(runs, env_id, "baseline", seed, [(1000, 0.0), (2000, final)])
    assert run_plot(runs, tmp_path / "out") == 0
    rows = interval_rows(tmp_path / "out")
    assert rows[("TD3", "HalfCheetah-v4")][2] == "200.0 [100.0, 300.0]"  # its return: (100 + 300) / 2
    assert rows[("TD3", "Hopper-v4")][2] == "0.50 [0.50, 0.50]"  # (1355.5 - 18) / 2675
    assert not [key for key in rows if key[1].startswith("aggregate")]  # one env with the numbers: nothing to aggregate over
    assert "HalfCheetah-v4: the return, unnormalised" in (tmp_path / "out" / "results.md").read_text()
    # an entry's primary comparisons decide at 98.3%: --confidence
    assert run_plot(runs, tmp_path / "primary", "confidence", 0.983) == 0
    assert "| IQM [98.3% CI] | mean [98.3% CI] | P(X > TD3) [98.3% CI] |" in (tmp_path / "primary" / "results.md").read_text()


# ---- The table
def test_table_reports_mean_range_over_seeds_and_seed_count_at_each_step(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "steps", (1000, 2500, 4000)) == 0
    rows = table_rows(tmp_path / "out")
    # by hand: baseline at 1000 is 10, 20, 30; at 2500 the most recent evaluation (2000) is 20, 30, 40; at 4000
    # 40, 50, 60: the mean, then the lowest and the highest seed
    assert rows["TD3"][:3] == ["20.0 [10.0, 30.0] (n=3)", "30.0 [20.0, 40.0] (n=3)", "50.0 [40.0, 60.0] (n=3)"]
    # camel: step / 50 and step / 25
    assert rows["paper's CAMEL, LLM-written guide"][:3] == ["30.0 [20.0, 40.0] (n=2)", "75.0 [50.0, 100.0] (n=2)", "120.0 [80.0, 160.0] (n=2)"]
    text = (tmp_path / "out" / "results.md").read_text()
    assert text.startswith("Episodic return (unmasked evaluation): mean over seeds [range over seeds: lowest, highest]")
    estimates, env_tables = text.split("### Hopper-v4")
    assert "95% CI" in estimates  # the confidence intervals are the interval estimates'; the range over seeds claims none
    assert "CI" not in env_tables and "confidence" not in env_tables and "bootstrap" not in env_tables


def test_the_spread_is_the_range_over_seeds_whatever_their_number(tmp_path):
    # five seeds whose final returns are 0, 10, 20, 30, 1000: the range is [0, 1000] (a 95% bootstrap interval of
    # the mean would be far narrower: it is no longer the range from 5 seeds on), and so is each seed's mean over
    # training when every seed is flat
    runs = tmp_path / "runs"
    for seed, value in enumerate([0.0, 10.0, 20.0, 30.0, 1000.0], start=1):
        write_run(runs, f"Hopper-v4__baseline__{seed}", line([1000, 2000], 0.0, value))
    assert run_plot(runs, tmp_path / "out", "steps", (2000,)) == 0
    row = table_rows(tmp_path / "out")["TD3"]
    assert row[0] == "212.0 [0.0, 1000.0] (n=5)" and row[-1] == "212.0 [0.0, 1000.0]"


def test_table_gives_each_seeds_final_return(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "steps", (1000, 4000)) == 0
    rows = table_rows(tmp_path / "out")
    assert "| final return per seed (4k) |" in (tmp_path / "out" / "results.md").read_text()
    assert rows["TD3"][2] == "1: 40.0, 2: 50.0, 3: 60.0"
    assert rows["Random masking"][2] == "1: 5.0, 2: 7.0, 3: —"  # seed 3 stopped at 2000


def test_seeds_flag_keeps_only_the_named_seeds_of_its_condition(tmp_path, capsys):
    runs = tmp_path / "runs"
    for seed in (1, 2, 6, 7):
        write_run(runs, f"Hopper-v4__camel__{seed}", line([1000, 2000], 0.0, 100.0 * seed))
        write_run(runs, f"Hopper-v4__baseline__{seed}", line([1000, 2000], 0.0, float(seed)))
    assert run_plot(runs, tmp_path / "out", "steps", (2000,), "seeds", ["camel=6-7"]) == 0
    rows = table_rows(tmp_path / "out")
    # camel: seeds 6 and 7 (600, 700), not 1 and 2; the baseline keeps all four (1, 2, 6, 7: mean 4)
    assert rows["paper's CAMEL, LLM-written guide"][0] == "650.0 [600.0, 700.0] (n=2)"
    assert rows["TD3"][0] == "4.0 [1.0, 7.0] (n=4)"
    assert "note: 'camel': only seeds 6 7 (--seeds); left out seed 1 2" in capsys.readouterr().out
    assert run_plot(runs, tmp_path / "out2", "steps", (2000,), "seeds", ["camel=1,6"]) == 0
    assert table_rows(tmp_path / "out2")["paper's CAMEL, LLM-written guide"][0] == "350.0 [100.0, 600.0] (n=2)"


@pytest.mark.parametrize("flag", ["camel", "camel=", "camel=6-x", "=6", "camel=a"])
def test_seeds_flag_that_is_not_name_equals_seeds_is_one_error_line(sweep_runs, tmp_path, capsys, flag):
    assert run_plot(sweep_runs, tmp_path / "out", "seeds", [flag]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: --seeds {flag}: expected NAME=SEEDS") and err.count("\n") == 1


def test_table_tests_each_conditions_final_return_against_the_baselines(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "steps", (1000, 4000), "permutation_test", True) == 0
    rows = table_rows(tmp_path / "out")
    assert "| final return against TD3 |" in (tmp_path / "out" / "results.md").read_text()
    # by hand: finals TD3 40, 50, 60; camel 80, 160. Of the 10 ways to split the 5 pooled finals 2 + 3, only the
    # observed one has a difference of means >= 120 - 50 = 70, and every one is <= 70: p = 2 * min(1/10, 1) = 0.2
    assert rows["TD3"][3] == "—"
    assert rows["paper's CAMEL, LLM-written guide"][3] == "+70.0, p=0.200"
    # random: seed 3 stopped at 2000, so its finals are 5 and 7 (mean 6, 44 below TD3's), again the extreme split
    assert rows["Random masking"][3] == "-44.0, p=0.200"
    # without --permutation-test: the difference alone, the interval estimates above it being the headline
    assert run_plot(sweep_runs, tmp_path / "plain", "steps", (1000, 4000)) == 0
    assert table_rows(tmp_path / "plain")["paper's CAMEL, LLM-written guide"][3] == "+70.0"
    assert "p-value" not in (tmp_path / "plain" / "results.md").read_text()


def settings_runs(runs, condition, finals, learning_starts, total=2000):
    """Seeds of one condition, each at `learning_starts` and `total` steps, whose final returns are `finals`."""
    for seed, final in enumerate(finals, start=1):
        write_run(runs, f"Hopper-v4__{condition}__{seed}", [(1000, 0.0), (2000, final)],
                  hyperparameters={"learning_starts": learning_starts, "total_timesteps": total})  # fmt: skip


def test_a_condition_is_compared_with_the_baseline_run_at_its_learning_start(tmp_path):
    runs = tmp_path / "runs"
    settings_runs(runs, "baseline", [10.0, 20.0, 30.0], 5000)
    settings_runs(runs, "baseline_ls25k", [1.0, 2.0, 3.0], 25000)
    settings_runs(runs, "camel_tuned_ls25k", [4.0, 5.0, 6.0], 25000)
    settings_runs(runs, "camel_tuned", [40.0, 50.0, 60.0], 5000)
    # baseline_ls25k is not shown, but the data has it: the 25k condition is compared with it, not with the 5k TD3
    assert run_plot(runs, tmp_path / "out", "conditions", ("baseline", "camel_tuned", "camel_tuned_ls25k"), "permutation_test", True) == 0
    rows = table_rows(tmp_path / "out")
    # by hand: 5 - 2 = +3 (against the 5k TD3 it would be 5 - 20 = -15); every one of its 3 above every baseline
    # seed: 1 split of C(6, 3) = 20 at least as extreme, p = 2 / 20
    assert rows["paper's CAMEL, hand-written guide (tuned), learning from 25k"][-3] == "+3.0, p=0.100¹"
    assert rows["paper's CAMEL, hand-written guide (tuned)"][-3] == "+30.0, p=0.100"  # against TD3 itself, at the same settings
    text = (tmp_path / "out" / "results.md").read_text()
    assert ("¹ Against TD3, learning from 25k (baseline_ls25k), the baseline run at its training settings (learning_starts 25000), "
            "not TD3.") in text  # fmt: skip
    # steps to the final return of each: TD3's mean at 2k is 20, TD3, learning from 25k's is 2; neither CAMEL stays
    # above until 2k: its value at 1k is 0
    assert rows["paper's CAMEL, hand-written guide (tuned), learning from 25k"][-2] == "2k (1.00x)¹"
    assert "Steps to the final return of TD3, learning from 25k: its mean return at 2k steps is 2.0" in text


def test_a_condition_at_settings_no_baseline_shares_gets_no_p_value_and_a_footnote(tmp_path):
    runs = tmp_path / "runs"
    settings_runs(runs, "baseline", [10.0, 20.0, 30.0], 5000)
    settings_runs(runs, "camel_tuned_ls25k", [4.0, 5.0, 6.0], 25000)
    settings_runs(runs, "camel_tuned", [40.0, 50.0, 60.0], 5000, total=3000)  # a longer budget: not comparable either
    assert run_plot(runs, tmp_path / "out", "steps", (2000,)) == 0
    rows = table_rows(tmp_path / "out")
    assert list(rows) == ["TD3", "paper's CAMEL, hand-written guide (tuned)", "paper's CAMEL, hand-written guide (tuned), learning from 25k"]
    assert rows["paper's CAMEL, hand-written guide (tuned)"][-3:-1] == ["—¹", "—¹"]
    assert rows["paper's CAMEL, hand-written guide (tuned), learning from 25k"][-3:-1] == ["—²", "—²"]
    text = (tmp_path / "out" / "results.md").read_text()
    assert "¹ Not compared: its training settings (total_timesteps 3000) differ from those of TD3 (total_timesteps 2000)" in text
    assert ("² Not compared: its training settings (learning_starts 25000) differ from those of TD3 (learning_starts 5000), "
            "and these runs hold no TD3 run at its settings.") in text  # fmt: skip
    assert "p-value" not in text  # no comparison made, so no footnote on the test


def test_runs_of_different_lengths_are_aligned_on_steps_not_index(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "steps", (2000, 3000)) == 0
    rows = table_rows(tmp_path / "out")
    # random seed 3 stopped at 2000: it is in the 2000 cell and left out of the 3000 one
    assert rows["Random masking"][:2] == ["37.3 [5.0, 100.0] (n=3)", "6.0 [5.0, 7.0] (n=2)"]
    # camel is evaluated every 500 steps and the baseline every 1000: both are read at step 3000, not at index 3
    assert rows["paper's CAMEL, LLM-written guide"][1].startswith("90.0 ") and rows["TD3"][1].startswith("40.0 ")


def test_step_that_no_run_reached_is_left_out_with_a_note(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "steps", (4000, 8000, 1_000_000)) == 0
    assert table_rows(tmp_path / "out")["TD3"][0] == "50.0 [40.0, 60.0] (n=3)"
    assert "No run reached 8k, 1M steps" in (tmp_path / "out" / "results.md").read_text()


def test_default_table_steps_are_quarters_of_the_last_step_every_plotted_run_reached(tmp_path):
    runs = tmp_path / "runs"
    every_5000 = list(range(5000, 100_001, 5000))
    write_run(runs, "Hopper-v4__baseline__1", line(every_5000, 0.01))
    write_run(runs, "Hopper-v4__camel__1", line(every_5000[:12], 0.02))  # stops at 60k
    write_run(runs, "Hopper-v4__camel_td3__1__1700000000", line(every_5000 + [1_000_000], 0.02))
    assert run_plot(runs, tmp_path / "out", "conditions", ("baseline", "camel")) == 0
    # 25, 50, 75, 100% of 60k: 15k, 30k, 45k, 60k, all on the 5k grid; the 1M of the run not shown plays no part
    assert "| condition | 15k | 30k | 45k | 60k | final return per seed (60k) |" in (tmp_path / "out" / "results.md").read_text()
    # a horizon off the grid goes to the nearest evaluation step: 25% of 10k is 2.5k, between 0 and 5k -> 5k
    assert stats.default_steps([run(1, [5000, 10_000], [0, 0])]) == [5000, 10_000]
    assert stats.default_steps([run(1, list(range(1000, 18_001, 1000)), [0] * 18)]) == [4000, 9000, 13_000, 18_000]


# ---- Sample efficiency: steps to the baseline's final return, and the mean return over training
STEPS = [1000, 2000, 3000, 4000, 5000]
BASELINE = [run(1, STEPS, [1000, 500, 600, 900, 1100], "baseline"), run(2, STEPS, [1000, 300, 400, 700, 1300], "baseline")]
# the baseline's final return R is its mean at 5000: (1100 + 1300) / 2 = 1200, T = 5000


def two_seeds(mean):
    """Two seeds whose mean is `mean` (each 100 above or below it)."""
    return [run(1, STEPS, [m + 100 for m in mean]), run(2, STEPS, [m - 100 for m in mean])]


def test_curve_that_starts_high_and_dips_counts_from_where_it_stays_above():
    # above R at 1000 (an untrained agent that stands still), below at 2000, above from 3000 on
    reached, final_step, final_return = stats.sample_efficiency(BASELINE, two_seeds([1300, 800, 1250, 1300, 1400]))
    assert (final_step, final_return) == (5000, 1200.0)
    assert reached == 3000  # not 1000, where the mean first touched R


def test_curve_that_crosses_and_falls_back_counts_from_its_last_rise():
    assert stats.sample_efficiency(BASELINE, two_seeds([100, 1300, 900, 1250, 1300]))[0] == 4000
    assert stats.sample_efficiency(BASELINE, two_seeds([100, 1300, 1250, 1250, 1100]))[0] is None  # ends below R


def test_curve_that_never_reaches_the_baseline_final_return_is_not_reached():
    assert stats.sample_efficiency(BASELINE, two_seeds([100, 200, 300, 400, 500]))[0] is None
    assert stats.sample_efficiency(BASELINE, BASELINE)[0] == 5000  # the baseline reaches its own only at the end
    assert stats.sample_efficiency(BASELINE, two_seeds([1200] * 5))[0] == 1000  # "at or above"


def test_mean_over_training_is_the_trapezoid_area_over_the_steps():
    grid = np.array(STEPS)
    # by hand: (1300+800)/2 + (800+1250)/2 + (1250+1300)/2 + (1300+1400)/2 = 4700 per 1000 steps, over 4000 steps
    assert stats.mean_over_training(run(1, STEPS, [1300, 800, 1250, 1300, 1400]), grid) == pytest.approx(1175.0)
    # evaluated every 2000 steps, read on a 1000-step grid: its most recent evaluation holds in between
    # values 10, 10, 30, 30, 50: (10 + 20 + 30 + 40) / 4
    assert stats.mean_over_training(run(1, [1000, 3000, 5000], [10, 30, 50]), grid) == pytest.approx(25.0)
    assert stats.mean_over_training(run(1, [1000], [7.0]), np.array([1000])) == 7.0


def test_table_gives_both_efficiency_measures_against_the_baseline(tmp_path):
    runs = tmp_path / "runs"
    for condition, seeds in [("baseline", BASELINE), ("camel", two_seeds([1300, 800, 1250, 1300, 1400])),
                             ("random", two_seeds([100, 200, 300, 400, 500]))]:  # fmt: skip
        for r in seeds:
            write_run(runs, f"Hopper-v4__{condition}__{r.seed}", list(zip(r.steps.tolist(), r.values.tolist())))
    assert run_plot(runs, tmp_path / "out") == 0
    rows = table_rows(tmp_path / "out")
    # steps to TD3's final return (1200 at 5k), over 5k
    assert [rows[c][-2] for c in ("TD3", "paper's CAMEL, LLM-written guide", "Random masking")] == ["5k (1.00x)", "3k (0.60x)", "not reached"]
    # mean over training, each seed's, averaged; with 2 seeds the interval is [smaller, larger]
    assert rows["paper's CAMEL, LLM-written guide"][-1] == "1175.0 [1075.0, 1275.0]"
    assert rows["Random masking"][-1] == "300.0 [200.0, 400.0]"
    text = (tmp_path / "out" / "results.md").read_text()
    assert "Steps to the final return of TD3: its mean return at 5k steps is 1200.0" in text
    assert "the return averaged over steps 1k to 5k" in text


def test_comparison_columns_say_when_there_is_no_baseline(sweep_runs, tmp_path):
    # the baseline need not be shown to be compared with: it is in the data
    assert run_plot(sweep_runs, tmp_path / "out", "conditions", ("camel", "random"), "permutation_test", True) == 0
    # at 2k, the last step random seed 3 reached: camel 40 and 80, TD3 20, 30 and 40: +30; of the 10 ways to pick two of
    # {20, 30, 40, 40, 80}, the two with sum 120 (80 with either 40) differ by at least 30: p = 2 * 2 / 10
    assert table_rows(tmp_path / "out")["paper's CAMEL, LLM-written guide"][-3] == "+30.0, p=0.400"
    for path in sweep_runs.glob("Hopper-v4__baseline__*"):
        shutil.rmtree(path)
    assert run_plot(sweep_runs, tmp_path / "out", "conditions", ("camel", "random")) == 0
    assert table_rows(tmp_path / "out")["paper's CAMEL, LLM-written guide"][-3:-1] == ["—", "no TD3 runs"]


# ---- Which runs are shown
def test_every_condition_found_is_shown_and_one_the_labels_do_not_know_stands_for_itself(sweep_runs, tmp_path, capsys):
    write_run(sweep_runs, "Hopper-v4__camel_td3__1__1700000000", line([1000, 2000, 3000, 4000, 5000, 9000], 0.5))  # today's name
    write_run(sweep_runs, "Hopper-v4__camel_td3__2__1700000001", line([1000, 2000], 0.5))
    write_run(sweep_runs, "Hopper-v4__mytweak__1", line([1000, 2000], 0.5))
    for i in range(3):  # failed starts: a folder with a log only
        (sweep_runs / f"Hopper-v4__camel__{7 + i}").mkdir()
        (sweep_runs / f"Hopper-v4__camel__{7 + i}" / "log.txt").write_text("error: no such guide file\n")
    assert run_plot(sweep_runs, tmp_path / "out") == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: skipped 3 runs with no eval/episodic_return yet (3 not finished, 0 finished; a failed start says why in "
        "its log.txt): Hopper-v4__camel__7, Hopper-v4__camel__8, Hopper-v4__camel__9",
    ]
    # the baseline first, then the guides in camel_utils.conditions' order (today's camel_td3 beside the committed
    # runs' camel; it recorded no guide file, so its label names none), then the names it does not know, by name
    assert list(table_rows(tmp_path / "out")) == ["TD3", "Random masking", "paper's CAMEL", "paper's CAMEL, LLM-written guide", "mytweak"]
    assert table_rows(tmp_path / "out")["paper's CAMEL"][-4] == "1: 1000.0, 2: 1000.0"  # both seeds at 2k, the common last step


def test_a_first_run_plots_on_its_own(tmp_path):
    # a first run: camel_plus_td3.py names it after itself, runs/{env}__camel_plus_td3__{seed}__{time}, and records its guide
    runs = tmp_path / "runs"
    write_run(runs, "Hopper-v4__camel_plus_td3__1__1700000000", line([5000, 10_000, 15_000], 0.01),
              hyperparameters={"exp_name": "camel_plus_td3", "seed": "1", "env_id": "Hopper-v4"},
              guide=("policies/hopper.py", committed_sha256("policies/hopper.py")))  # fmt: skip
    result = subprocess.run([sys.executable, "plot.py", str(runs), "--output-dir", str(tmp_path / "out"), "--bootstrap-resamples", "200"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert list(table_rows(tmp_path / "out")) == ["CAMEL+, LLM-written guide"]
    assert table_rows(tmp_path / "out")["CAMEL+, LLM-written guide"][-4:-1] == ["1: 150.0", "—", "no TD3 runs"]
    assert "CAMEL+, LLM-written guide" in svg_texts(tmp_path / "out" / "results.svg")  # the legend names it


def test_named_or_labelled_conditions_are_shown(sweep_runs, tmp_path):
    write_run(sweep_runs, "Hopper-v4__camel_standstill__1", line([1000, 2000, 3000, 4000], 0.0, 3.0))
    assert run_plot(sweep_runs, tmp_path / "a", "conditions", ("camel_standstill", "baseline")) == 0
    assert list(table_rows(tmp_path / "a")) == ["camel_standstill", "TD3"]
    assert run_plot(sweep_runs, tmp_path / "b", "label", ["camel_standstill=paper's CAMEL, stand-still guide"]) == 0
    assert list(table_rows(tmp_path / "b")) == ["TD3", "Random masking", "paper's CAMEL, LLM-written guide", "paper's CAMEL, stand-still guide"]


def test_conditions_flag_selects_and_orders_conditions(sweep_runs, tmp_path):
    assert run_plot(sweep_runs, tmp_path / "out", "conditions", ("camel", "baseline"), "steps", (4000,)) == 0
    assert list(table_rows(tmp_path / "out")) == ["paper's CAMEL, LLM-written guide", "TD3"]


def test_partial_runs_dir_says_what_is_found_and_missing(tmp_path, capsys):
    runs = tmp_path / "runs"
    write_run(runs, "Hopper-v4__camel__1", line([1000, 2000], 0.01))
    write_run(runs, "Hopper-v4__camel__2", line([1000], 0.01))
    write_run(runs, "Hopper-v4__random__1", line([1000, 2000], 0.0))
    (runs / "Hopper-v4__baseline__1").mkdir()
    (runs / "Hopper-v4__baseline__1" / "log.txt").write_text("error: something went wrong\n")
    assert run_plot(runs, tmp_path / "out", "conditions", ("baseline", "camel", "random"), "steps", (1000, 2000)) == 0
    out = capsys.readouterr().out
    assert "skipped 1 run with no eval/episodic_return yet (1 not finished" in out
    assert "no runs of condition 'baseline'" in out
    assert "Hopper-v4: no 'baseline' runs, so no comparison with it" in out
    assert "Hopper-v4 random: seed 2 (other conditions have it)" in out
    assert "Hopper-v4 camel seed 2: stops at 1k steps, others reach 2k" in out
    assert table_rows(tmp_path / "out")["paper's CAMEL, LLM-written guide"][:2] == ["10.0 [10.0, 10.0] (n=2)", "20.0 [20.0, 20.0] (n=1)"]


@pytest.mark.parametrize("make", ["missing", "empty", "no_eval", "not_found"])
def test_nothing_to_plot_is_one_error_line_and_exit_1(tmp_path, capsys, make):
    runs = tmp_path / "runs"
    if make != "missing":
        runs.mkdir()
    if make == "no_eval":
        write_run(runs, "Hopper-v4__camel__1", [(100, 1.0)], tag="charts/episodic_return")
    if make == "not_found":  # runs, but none of the chosen condition
        write_run(runs, "Hopper-v4__camel_td3__1__1700000000", [(100, 1.0)])
    assert run_plot(runs, tmp_path / "out", *(("conditions", ("camel",)) if make == "not_found" else ())) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert not (tmp_path / "out" / "results.png").exists()


# ---- Reading runs
def test_resumed_run_keeps_only_points_logged_after_the_purge(tmp_path):
    run_dir = tmp_path / "runs" / "Hopper-v4__camel__1"
    write_run(tmp_path / "runs", run_dir.name, [(s, 1.0) for s in range(100, 1001, 100)])  # interrupted process
    time.sleep(1.1)  # event file names hold the time in seconds
    write_run(tmp_path / "runs", run_dir.name, [(s, 2.0) for s in range(600, 1201, 100)], purge_step=600)  # --resume
    steps, values = read_events(str(run_dir))[0]["eval/episodic_return"]
    assert steps.tolist() == list(range(100, 1201, 100))
    assert values.tolist() == [1.0] * 5 + [2.0] * 7


def test_run_restarted_from_scratch_in_its_folder_keeps_its_newest_points(tmp_path):
    run_dir = tmp_path / "runs" / "Hopper-v4__camel__1"
    write_run(tmp_path / "runs", run_dir.name, [(s, 1.0) for s in range(100, 1001, 100)])  # killed before a checkpoint
    time.sleep(1.1)
    write_run(tmp_path / "runs", run_dir.name, [(s, 2.0) for s in range(100, 501, 100)])  # started again, no purge
    steps, values = read_events(str(run_dir))[0]["eval/episodic_return"]
    assert steps.tolist() == [100, 200, 300, 400, 500] and values.tolist() == [2.0] * 5


def test_run_identity_comes_from_logged_hyperparameters_or_folder_name(tmp_path):
    runs = tmp_path / "runs"
    write_run(runs, "my-run", [(1000, 1.0)], hyperparameters={"env_id": "Ant-v4", "exp_name": "camel", "seed": 7})
    write_run(runs, "Walker2d-v4__baseline__3__1700000000", [(1000, 1.0)])  # CleanRL's default name
    write_run(runs, "no-idea", [(1000, 1.0)])
    found = load_runs([str(runs)], "eval/episodic_return")
    assert sorted((r.env_id, r.condition, r.seed) for r in found.runs) == [("Ant-v4", "camel", 7), ("Walker2d-v4", "baseline", 3)]
    assert [os.path.basename(p) for p in found.unidentified] == ["no-idea"]


# ---- The figure
def svg_texts(path):
    """The texts drawn in an SVG written by matplotlib (it names each text in a comment)."""
    return [html.unescape(text) for text in re.findall(r"<!-- (.*?) -->", path.read_text())]


@pytest.fixture
def paper_runs(tmp_path):
    """Two envs; Hopper-v4 with every built-in condition kind and a labelled one, Ant-v4 with two."""
    runs = tmp_path / "runs"
    for env_id, conditions in [("Hopper-v4", ["baseline", "camel", "expert", "random_no_ma_em", "camel_fullbounds"]),
                               ("Ant-v4", ["baseline", "camel"])]:  # fmt: skip
        for i, condition in enumerate(conditions):
            for seed in (1, 2):
                write_run(runs, f"{env_id}__{condition}__{seed}", line([1000, 2000, 3000], 0.01 * (i + 1), seed))
    guides = tmp_path / "guides.json"
    guides.write_text(json.dumps({"Hopper-v4": {"camel": 2542.0, "expert": 3100}, "Ant-v4": {"camel": 1350.5}}))
    return runs, guides


def test_figure_names_conditions_as_the_paper_and_axes_in_words(paper_runs, tmp_path):
    runs, guides = paper_runs
    flags = ("label", ["camel_fullbounds=paper's CAMEL, full bounds"], "guide_returns", str(guides), "name", "hopper")
    assert run_plot(runs, tmp_path / "out", *flags) == 0
    texts = svg_texts(tmp_path / "out" / "hopper.svg")
    legend = ["TD3", "Expert masking", "Random masking w/o MA EM", "paper's CAMEL, LLM-written guide", "paper's CAMEL, full bounds",
              "Guide's own return: LLM-written guide", "Guide's own return: expert agent", BAND_NOTE]  # fmt: skip
    for name in legend:
        assert texts.count(name) == 1, name  # one legend for the figure
    assert texts.count("Episodic return (unmasked evaluation)") == 2  # every panel its y-label
    assert texts.count("Environment steps") == 2
    assert not [t for t in texts if t in ("baseline", "camel", "eval/episodic_return")]  # no internal names
    for ext in ("png", "svg", "pdf", "md"):
        assert (tmp_path / "out" / f"hopper.{ext}").stat().st_size > 1000
    assert "Guide's own return (dashed in the figure): expert agent 3100.0, LLM-written guide 2542.0." in (
        tmp_path / "out" / "hopper.md").read_text()  # fmt: skip


def test_figure_draws_each_guides_return_as_a_dashed_line_in_its_conditions_colour(paper_runs, tmp_path):
    runs, guides = paper_runs
    assert run_plot(runs, tmp_path / "out", "guide_returns", str(guides), "envs", ("Ant-v4",)) == 0
    svg = (tmp_path / "out" / "results.svg").read_text()
    dashed = re.findall(r'(clip-path="[^"]*" )?style="fill: none; stroke-dasharray: [^;]*; stroke-dashoffset: 0; stroke: (#\w+)', svg)
    # CAMEL's guide: one dashed line in the panel (clipped to it) and its sample in the legend, in CAMEL's colour
    assert [(bool(clip), color) for clip, color in dashed] == [(True, COLORS["camel"]), (False, COLORS["camel"])]


def test_each_condition_keeps_its_colour_in_every_figure():
    one = condition_colors({"baseline", "camel", "camel_tuned"})
    other = condition_colors({"camel", "random", "expert_no_ma_em", "camel_standstill", "camel_fullbounds", "camel_tuned"})
    assert one["camel"] == other["camel"] == COLORS["camel"] and one["camel_tuned"] == other["camel_tuned"] == COLORS["camel_tuned"]
    assert COLORS["camel"] != COLORS["camel_tuned"]  # the LLM-written guide and the tuned one are told apart
    assert other["expert_no_ma_em"] == COLORS["expert"]  # the control: the same colour, dash-dotted
    assert condition_colors({"camel_standstill"})["camel_standstill"] == other["camel_standstill"]
    assert len(set(other.values())) == len(other)  # distinct within a figure


def test_a_guide_at_other_settings_takes_its_colour_unless_the_defaults_are_in_the_figure():
    alone = condition_colors({"baseline_ls25k", "camel_tuned_ls25k", "camel_tuned_ls25k_no_ma_em", "sac_camel_tuned"})
    assert alone["baseline_ls25k"] == COLORS["baseline"] and alone["camel_tuned_ls25k"] == COLORS["camel_tuned"]
    assert alone["camel_tuned_ls25k_no_ma_em"] == COLORS["camel_tuned"]
    beside = condition_colors({"baseline", "baseline_ls25k", "camel_tuned", "camel_tuned_ls25k"})
    assert beside["baseline"] == COLORS["baseline"] and beside["camel_tuned"] == COLORS["camel_tuned"]
    assert len(set(beside.values())) == 4  # the 25k runs in colours of their own


def test_a_sac_sweeps_runs_are_shown_by_default_under_sac_names(tmp_path, capsys):
    runs = tmp_path / "runs"
    for condition in ["baseline", "sac_baseline", "sac_camel_tuned", "sac_camel_tuned_no_ma_em"]:  # TRAINER=sac: sac_{condition}
        write_run(runs, f"Hopper-v4__{condition}__1", line([1000, 2000], 0.01))
    guides = tmp_path / "guides.json"
    guides.write_text(json.dumps({"Hopper-v4": {"camel_tuned": 2542.0}}))
    assert run_plot(runs, tmp_path / "out", "guide_returns", str(guides)) == 0
    assert list(table_rows(tmp_path / "out")) == ["TD3", "SAC", "CAMEL-SAC, hand-written guide (tuned)", "CAMEL-SAC, hand-written guide (tuned) w/o MA EM"]
    assert "Guide's own return (dashed in the figure): hand-written guide (tuned) 2542.0." in (tmp_path / "out" / "results.md").read_text()


def test_sweep_variants_keep_their_own_name_and_share_a_colour_with_their_control():
    # scripts/sweep.py's VARIANT names runs {guide}_{VARIANT} and {guide}_{VARIANT}_no_ma_em
    colors = condition_colors({"camel", "camel_fullactor", "camel_fullactor_no_ma_em", "camel_distill"})
    assert colors["camel_fullactor"] == colors["camel_fullactor_no_ma_em"] != colors["camel"]
    assert len({colors["camel"], colors["camel_fullactor"], colors["camel_distill"]}) == 3


def test_a_guides_return_is_drawn_for_the_runs_that_logged_its_file_whatever_their_name(tmp_path, capsys):
    """CAMEL+ runs (one name) with the LLM-written guide and with a poor guide: each group gets the line of the guide
    file its runs logged, measured under another name (standstill), and no note."""
    runs = tmp_path / "runs"
    for seed, guide in [(1, "policies/hopper.py"), (2, "policies/poor/hopper_standstill.py")]:
        write_run(runs, f"Hopper-v4__camel_plus_td3__{seed}", line([1000, 2000], 0.01), guide=(guide, committed_sha256(guide)))
    write_run(runs, "Hopper-v4__td3__1", line([1000, 2000], 0.01))
    guides = tmp_path / "guides.json"
    guides.write_text(json.dumps({"Hopper-v4": {"camel": {"return": 764.3, "guide": "policies/hopper.py"},
                                                "standstill": {"return": 999.2, "guide": "policies/poor/hopper_standstill.py"}}}))  # fmt: skip
    assert run_plot(runs, tmp_path / "out", "guide_returns", str(guides)) == 0
    assert "not drawn" not in capsys.readouterr().out
    assert ("Guide's own return (dashed in the figure): LLM-written guide 764.3, hand-written poor guide (standstill) 999.2."
            in (tmp_path / "out" / "results.md").read_text())  # fmt: skip


def test_a_guides_return_is_drawn_only_for_runs_of_the_file_it_was_measured_on(tmp_path, capsys):
    """A sweep with a guide of your own keeps the shipped guide's name (camel) but not its return: the entry names the
    files it was measured on, and a run that logged another gets no line, with a note; its twin of the shipped file
    (the same code under policies/llm/) and a run given the file by its absolute path keep it."""
    runs = tmp_path / "runs"
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    hopper, candidate = committed_sha256("policies/hopper.py"), committed_sha256("policies/llm/Walker2d-v4/round1_candidate1.py")
    for name, guide in [("Hopper-v4__camel__1", ("policies/hopper.py", hopper)), ("Hopper-v4__camel__2", (os.path.join(repo, "policies/hopper.py"), hopper)),
                        ("Walker2d-v4__camel__1", ("policies/candidates/walker2d/selected.py", "5" * 64)),
                        ("Walker2d-v4__camel_qbc_gwarm__1", ("policies/llm/Walker2d-v4/round1_candidate1.py", candidate))]:  # fmt: skip
        write_run(runs, name, line([1000, 2000], 0.01), guide=guide)
    guides = tmp_path / "guides.json"
    guides.write_text(json.dumps({"Hopper-v4": {"camel": {"return": 764.3, "guide": "policies/hopper.py"}},
                                  "Walker2d-v4": {"camel": {"return": 2018.7, "guide": ["policies/walker2d.py",
                                                                                        "policies/llm/Walker2d-v4/round1_candidate1.py"]}}}))  # fmt: skip
    assert run_plot(runs, tmp_path / "out", "guide_returns", str(guides)) == 0
    out = capsys.readouterr().out
    # camel with a file of the user's own is a condition apart from camel with the LLM-written guide (camel@selected)
    assert ("note: 'camel@selected' on Walker2d-v4 ran with the guide policies/candidates/walker2d/selected.py, not policies/walker2d.py: "
            "its guide's own return is not drawn") in out.splitlines()  # fmt: skip
    assert out.count("its guide's own return is not drawn") == 1
    assert "Hopper-v4      camel@llm        seeds 1 2" in out  # a path inside the repository, absolute or not, is one file
    text = (tmp_path / "out" / "results.md").read_text()
    hopper, walker = text.split("### Walker2d-v4")
    assert "Guide's own return (dashed in the figure): LLM-written guide 764.3." in hopper
    assert "Guide's own return (dashed in the figure): LLM-written guide 2018.7." in walker  # from camel_qbc_gwarm's run


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ('{"Hopper-v4": {"camel": {"return": 1.0, "guide": 3}}}', "expected {env_id: {condition: return}}"),
    ("{not json", "not JSON"),
    ('{"Hopper-v4": {"camel": "high"}}', "expected {env_id: {condition: return}}"),
])  # fmt: skip
def test_guide_returns_file_that_is_wrong_is_one_error_line(sweep_runs, tmp_path, capsys, content, message):
    guides = tmp_path / "guides.json"
    if content is not None:
        guides.write_text(content)
    assert run_plot(sweep_runs, tmp_path / "out", "guide_returns", str(guides)) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --guide-returns") and message in err and len(err.splitlines()) == 1


def test_label_that_is_not_name_equals_text_is_one_error_line(sweep_runs, tmp_path, capsys):
    assert run_plot(sweep_runs, tmp_path / "out", "label", ["camel_standstill"]) == 1
    assert capsys.readouterr().err.startswith("error: --label camel_standstill: expected NAME=TEXT")


# ---- Export: small committed files that plot.py reads like run folders
def sweep_with_training_curves(runs, total=20_000, every=5000):
    """Finished runs as camel_td3.py leaves them: hyperparameters, evaluation every `every` steps, training curves
    (epsilon and masked fraction every 100 steps, an episode every 50), finished.json; one unfinished run."""
    eval_steps = list(range(every, total + 1, every))
    for condition, slope in [("baseline", 0.01), ("camel", 0.03)]:
        for seed in (1, 2, 3):
            extra = {"charts/epsilon": [(s, max(0.0, 1 - s / (total / 2))) for s in range(0, total, 100)],
                     "charts/masked_fraction": [(s, 0.5) for s in range(0, total, 100)],
                     "charts/episodic_return": [(s, s / 100 + seed) for s in range(50, total, 50)],
                     "losses/actor_loss": [(s, 1.0) for s in range(0, total, 100)],
                     "losses/qf1_values": [(s, s / 1000) for s in range(0, total, 100)],
                     "losses/qf2_values": [(s, 0.0) for s in range(0, total, 100)]}  # fmt: skip
            hyperparameters = {"exp_name": condition, "seed": seed, "env_id": "Hopper-v4", "total_timesteps": total}
            write_run(runs, f"Hopper-v4__{condition}__{seed}", line(eval_steps, slope, 10 * seed),
                      hyperparameters=hyperparameters, finished=True, extra=extra)  # fmt: skip
    write_run(runs, "Hopper-v4__random__1", line(eval_steps[:1], 0.0), finished=False)  # still running: no finished.json


def export(runs_dir, to, max_points=200):
    return plot.export(plot.ExportArgs(runs_dir=str(runs_dir), to=str(to), max_points=max_points))


def test_exported_runs_redraw_the_same_table(tmp_path):
    runs = tmp_path / "runs"
    sweep_with_training_curves(runs)
    assert export(runs, tmp_path / "exported") == 0
    assert run_plot(runs, tmp_path / "from_events", "conditions", ("baseline", "camel")) == 0
    assert run_plot(tmp_path / "exported", tmp_path / "from_files", "conditions", ("baseline", "camel")) == 0
    table = (tmp_path / "from_events" / "results.md").read_text()
    assert (tmp_path / "from_files" / "results.md").read_text() == table
    # mixed: some runs as folders, the others as exported files, in one folder
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for name in ("Hopper-v4__baseline__1", "Hopper-v4__camel__2"):
        os.rename(runs / name, mixed / name)
    for name in ("Hopper-v4__baseline__2", "Hopper-v4__baseline__3", "Hopper-v4__camel__1", "Hopper-v4__camel__3"):
        os.rename(tmp_path / "exported" / f"{name}.json", mixed / f"{name}.json")
    assert run_plot(mixed, tmp_path / "from_mixed", "conditions", ("baseline", "camel")) == 0
    assert (tmp_path / "from_mixed" / "results.md").read_text() == table


def test_a_run_both_exported_and_in_its_folder_counts_once(tmp_path, capsys):
    runs = tmp_path / "runs"
    sweep_with_training_curves(runs)
    assert export(runs, tmp_path / "exported") == 0
    assert run_plot((runs, tmp_path / "exported"), tmp_path / "out", "conditions", ("baseline", "camel")) == 0
    assert "found 6 runs" in capsys.readouterr().out
    assert table_rows(tmp_path / "out")["TD3"][0].endswith("(n=3)")


def test_export_writes_each_finished_run_once_and_leaves_unfinished_ones(tmp_path, capsys):
    runs = tmp_path / "runs"
    sweep_with_training_curves(runs)
    assert export(runs, tmp_path / "exported") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"exported 6 runs to {tmp_path / 'exported'} (")
    assert out[1] == "not finished, so not exported: 1 run: Hopper-v4__random__1"
    assert sorted(os.listdir(tmp_path / "exported")) == sorted(f"Hopper-v4__{c}__{s}.json" for c in ("baseline", "camel") for s in (1, 2, 3))
    assert export(runs, tmp_path / "exported") == 0
    assert capsys.readouterr().out.splitlines()[0] == "already in " + str(tmp_path / "exported") + ": 6 runs"


def test_a_runs_running_time_leaves_out_pauses_restarts_and_dropped_steps_and_its_export_records_it(tmp_path):
    from camel_utils.machine import cpu_kind, cpu_model
    from camel_utils.results.runs import running_time

    folder = tmp_path / "Hopper-v4__td3__1"
    assert running_time(str(folder)) == (0.0, 0, 0)  # no folder yet
    # a first process: 50 steps/s (2 s per 100 steps), paused for an hour before step 10,000, on to step 22,000
    first = SummaryWriter(str(folder), filename_suffix=".first")
    for step in range(0, 22_001, 100):
        first.add_scalar("charts/epsilon", 1.0, step, walltime=1000.0 + step / 50 + (3600 if step >= 10_000 else 0))
        first.add_scalar("eval/episodic_return", 1.0, step, walltime=1000.0)  # other tags are not timed
    first.close()
    assert running_time(str(folder)) == (21_900 / 50, 21_900, 22_000)  # 220 gaps of 2 s but the paused one
    time.sleep(0.05)  # the second file is newer
    # resumed in a second process from the checkpoint at 20,000 (the first's points from there on are dropped):
    # 100 steps/s, from a start whose gap to the first process's last kept point is not running
    second = SummaryWriter(str(folder), filename_suffix=".second")
    for step in range(20_000, 30_001, 100):
        second.add_scalar("charts/epsilon", 1.0, step, walltime=50_000.0 + (step - 20_000) / 100)
    second.close()
    # by hand: 0-9,900 and 10,000-19,900 at 2 s per 100 steps (198 gaps, 396 s), 20,000-30,000 at 1 s (100 gaps)
    assert running_time(str(folder)) == (496.0, 29_800, 30_000)
    target = tmp_path / "exported.json"
    assert export_module.export_run(str(folder), str(target))
    record = json.loads(target.read_text())
    here = {"cpu": cpu_model(), "cpu_kind": cpu_kind()}  # the queue exports a run on the machine running it
    assert record["finished"] is None and record["running"] == {"seconds": 496.0, "steps": 29_800, **here}
    # a finished run exported in bulk (plot.py export) was run where its finished.json says
    (folder / "finished.json").write_text(json.dumps({"run_name": "Hopper-v4__td3__1", "env_id": "Hopper-v4", "exp_name": "td3",
                                                      "seed": 1, "cpu": "its CPU", "cpu_kind": {"family": 1}}))  # fmt: skip
    assert export(tmp_path, tmp_path / "bulk") == 0
    record = json.loads((tmp_path / "bulk" / "Hopper-v4__td3__1.json").read_text())
    assert record["running"] == {"seconds": 496.0, "steps": 29_800, "cpu": "its CPU", "cpu_kind": {"family": 1}}


def test_exported_file_is_small_and_holds_the_run(tmp_path):
    runs = tmp_path / "runs"
    sweep_with_training_curves(runs, total=100_000)  # 1000 points of epsilon, 2000 episodes
    assert export(runs, tmp_path / "exported") == 0
    path = tmp_path / "exported" / "Hopper-v4__camel__2.json"
    assert path.stat().st_size < 30_000
    record = json.loads(path.read_text())
    assert {k: record[k] for k in ("format", "run_name", "env_id", "condition", "seed", "total_timesteps")} == {
        "format": "camel-run/1", "run_name": "Hopper-v4__camel__2", "env_id": "Hopper-v4", "condition": "camel",
        "seed": 2, "total_timesteps": 100_000}  # fmt: skip
    assert record["hyperparameters"] == {"exp_name": "camel", "seed": "2", "env_id": "Hopper-v4", "total_timesteps": "100000"}
    assert record["finished"]["final_eval_return"] == pytest.approx(3020.0)
    # the evaluation curve whole, the training curves thinned to at most 200 points: 500-step bins
    assert record["curves"]["eval/episodic_return"] == [[s, 20.0 + 0.03 * s] for s in range(5000, 100_001, 5000)]
    # and the scalars a diagnosis reads (the Q values, the losses, guide BC's rows where logged); not qf2's values
    thinned = {"charts/epsilon", "charts/masked_fraction", "charts/episodic_return", "losses/actor_loss", "losses/qf1_values"}
    assert set(record["curves"]) == {"eval/episodic_return"} | thinned
    assert record["binned"] == {tag: 500 for tag in thinned}
    # by hand: the Q values s / 1000 at s = 600, 700, ..., 1000 fall in the bin (500, 1000]: mean 0.8
    assert record["curves"]["losses/qf1_values"][2] == [1000, 0.8]
    # by hand: epsilon is 1 - s / 50000 at s = 0, 100, ...; the bin (0, 500] holds 100..500, mean at 300: 0.994
    epsilon = record["curves"]["charts/epsilon"]
    assert epsilon[:2] == [[0, 1.0], [500, 0.994]] and len(epsilon) == 201
    # episodes end every 50 steps with return s / 100 + 2: the bin (500, 1000] holds 550, 600, ..., 1000: mean 7.75 + 2
    assert record["curves"]["charts/episodic_return"][1] == [1000, 9.75]


def test_a_scalar_that_is_not_a_return_is_shown_as_its_values_alone(tmp_path, capsys):
    """The Q values (or a loss, or guide BC's share of rows) have no MR.Q score, no guide return and no baseline to
    beat: the table gives their values to 3 digits, with no interval estimates, comparisons or guide line."""
    runs = tmp_path / "runs"
    sweep_with_training_curves(runs)
    guides = tmp_path / "guides.json"
    guides.write_text(json.dumps({"Hopper-v4": {"camel": 900.0}}))
    flags = ("conditions", ("baseline", "camel"), "guide_returns", str(guides), "steps", (1000, 19_900))
    assert run_plot(runs, tmp_path / "q", "tag", "losses/qf1_values", *flags) == 0
    text = (tmp_path / "q" / "results.md").read_text()
    assert text.startswith("Q value of the first critic (mean over a batch): mean over seeds [range over seeds")
    assert "Interval estimates" not in text and "Guide's own return" not in text and "against" not in text
    assert sorted(p.name for p in (tmp_path / "q").iterdir()) == ["results.md", "results.pdf", "results.png", "results.svg"]
    # by hand: the Q values are s / 1000 at s = 0, 100, ...: 1 at step 1000, 19.9 at 19,900, the same for every seed
    rows = [line for line in text.splitlines() if line.startswith("| TD3 |")]
    assert rows == ["| TD3 | 1 [1, 1] (n=3) | 19.9 [19.9, 19.9] (n=3) | 1: 19.9, 2: 19.9, 3: 19.9 | 9.95 [9.95, 9.95] |"]
    # the return, as ever, with its interval estimates and the guide's line
    assert run_plot(runs, tmp_path / "r", *flags) == 0
    text = (tmp_path / "r" / "results.md").read_text()
    assert "### Interval estimates" in text and "Guide's own return (dashed in the figure)" in text
    # what compares returns is refused for another scalar, in one line
    capsys.readouterr()
    assert run_plot(runs, tmp_path / "s", "tag", "losses/qf1_values", "summary", True) == 1
    assert capsys.readouterr().err == "error: --summary and --permutation-test compare returns; --tag losses/qf1_values is not one\n"


def test_a_scalar_that_is_not_a_return_is_drawn_for_runs_whose_guide_is_known_by_its_file(tmp_path):
    """Runs named otherwise than their guide's entry (camel_td3 beside camel), which take the entry by the guide file
    they logged, as the registered experiments' runs do: their return has the guide's line, their Q values none."""
    runs = tmp_path / "runs"
    hopper = ("policies/hopper.py", committed_sha256("policies/hopper.py"))  # the committed guide, as recorded
    for condition, guide in [("td3", None), ("camel_td3", hopper)]:
        for seed in (21, 22):
            write_run(runs, f"Hopper-v4__{condition}__{seed}", [(5000, 10.0 * seed), (10_000, 20.0 * seed)], guide=guide,
                      extra={"losses/qf1_values": [(5000, 1.0), (10_000, 2.0)]})  # fmt: skip
    guides = tmp_path / "guides.json"
    guides.write_text(json.dumps({"Hopper-v4": {"camel": {"return": 900.0, "guide": "policies/hopper.py"}}}))
    flags = ("conditions", ("td3", "camel_td3"), "baseline", "td3", "guide_returns", str(guides), "formats", ("png",))
    assert run_plot(runs, tmp_path / "r", *flags) == 0
    assert "Guide's own return (dashed in the figure): LLM-written guide 900.0." in (tmp_path / "r" / "results.md").read_text()
    assert run_plot(runs, tmp_path / "q", "tag", "losses/qf1_values", *flags) == 0
    text = (tmp_path / "q" / "results.md").read_text()
    assert "Guide's own return" not in text and "| TD3 | 1 [1, 1] (n=2) | 2 [2, 2] (n=2) |" in text, text
    assert (tmp_path / "q" / "results.png").stat().st_size > 0


def test_export_writes_paths_inside_the_repository_relative_to_it(tmp_path):
    runs = tmp_path / "runs"
    hyperparameters = {"exp_name": "camel", "seed": 1, "env_id": "Hopper-v4", "llm_policy": os.path.join(REPO, "policies", "hopper.py"),
                       "expert_model": "/elsewhere/experts/Hopper-v4.cleanrl_model", "resume": "None"}  # fmt: skip
    write_run(runs, "Hopper-v4__camel__1", line([1000, 2000], 0.01), hyperparameters=hyperparameters, finished=True)
    assert export(runs, tmp_path / "exported") == 0
    logged = json.loads((tmp_path / "exported" / "Hopper-v4__camel__1.json").read_text())["hyperparameters"]
    assert logged["llm_policy"] == "policies/hopper.py"  # inside the repository: relative to it
    assert logged["expert_model"] == "/elsewhere/experts/Hopper-v4.cleanrl_model"  # outside: as logged
    assert logged["resume"] == "None"


def test_incomplete_exported_file_is_left_out_with_a_note(sweep_runs, tmp_path, capsys):
    (sweep_runs / "broken.json").write_text(json.dumps({"format": "camel-run/1", "env_id": "Hopper-v4", "curves": {}}))
    (sweep_runs / "guides.json").write_text(json.dumps({"Hopper-v4": {"camel": 1.0}}))  # not a run: passed over
    assert run_plot(sweep_runs, tmp_path / "out") == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == [f"note: {sweep_runs / 'broken.json'}: left out: not a complete exported run (KeyError: 'condition'); export it again"]


def test_bin_widths_run_100_200_500_1000():
    assert [export_module.bin_width(total, 200) for total in (10_000, 20_000, 40_000, 100_000, 1_000_000, 3_000_000)] == [
        100, 100, 200, 500, 5000, 20_000]  # fmt: skip


# ---- The command line
def test_command_line_exports_then_plots_with_a_name_and_labels(tmp_path):
    runs = tmp_path / "runs"
    sweep_with_training_curves(runs)
    write_run(runs, "Hopper-v4__camel_standstill__1", line([5000, 10_000, 15_000, 20_000], 0.0, 5.0), finished=True)
    exported = tmp_path / "exported"
    result = subprocess.run([sys.executable, "plot.py", "export", str(runs), "--to", str(exported)],
                            cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("exported 7 runs")
    result = subprocess.run([sys.executable, "plot.py", str(exported), "--output-dir", str(tmp_path / "out"), "--name", "poor",
                             "--label", "camel_standstill=paper's CAMEL, stand-still guide", "--label", "camel=CAMEL",
                             "--bootstrap-resamples", "200"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "out")) == ["poor.md", "poor.pdf", "poor.png", "poor.svg", "poor_intervals.png", "poor_profile.png"]
    assert list(table_rows(tmp_path / "out", "poor")) == ["TD3", "CAMEL", "paper's CAMEL, stand-still guide"]
    # --formats: the figure in those formats only; an unknown one refused in one line before anything is read
    result = subprocess.run([sys.executable, "plot.py", str(exported), "--output-dir", str(tmp_path / "png"), "--formats", "png",
                             "--bootstrap-resamples", "200"], cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "png")) == ["results.md", "results.png", "results_intervals.png", "results_profile.png"]
    # --formats none: the same table, no figure, and Matplotlib never imported
    result = subprocess.run([sys.executable, "-X", "importtime", "plot.py", str(exported), "--output-dir", str(tmp_path / "none"),
                             "--formats", "none", "--bootstrap-resamples", "200"], cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "none")) == ["results.md"] and result.stdout.endswith(f"wrote {tmp_path / 'none' / 'results.md'}\n")
    assert (tmp_path / "none" / "results.md").read_text() == (tmp_path / "png" / "results.md").read_text()
    assert re.search(r"\|\s+numpy$", result.stderr, flags=re.M) and "matplotlib" not in result.stderr  # every module imported
    for wrong in (["gif"], ["none", "png"]):
        result = subprocess.run([sys.executable, "plot.py", str(exported), "--output-dir", str(tmp_path / "gif"), "--formats", *wrong],
                                cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
        assert result.returncode == 1
        assert result.stderr == f"error: --formats {' '.join(wrong)}: each of png, svg, pdf, at least one, or none alone for the tables without a figure\n"
    assert not (tmp_path / "gif").exists()


def test_command_line_on_empty_runs_dir_exits_1_without_traceback(tmp_path):
    (tmp_path / "runs").mkdir()
    result = subprocess.run([sys.executable, "plot.py", str(tmp_path / "runs"), "--output-dir", str(tmp_path / "out")],
                            cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: no runs with eval/episodic_return under")


def test_plotting_keeps_maths_on_one_thread_and_imports_no_torch(sweep_runs, tmp_path):
    script = ("import sys, os, plot; print(os.environ['OMP_NUM_THREADS'], os.environ['OPENBLAS_NUM_THREADS']); "
              f"code = plot.main(plot.Args(runs_dirs=({str(sweep_runs)!r},), output_dir={str(tmp_path / 'out')!r}, bootstrap_resamples=50)); "
              "print('torch' in sys.modules, code)")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "1 1" and lines[-1] == "False 0"


def test_quote_tables_replaces_each_quoted_table_and_nothing_else(tmp_path):
    (tmp_path / "a.md").write_text("What the numbers are.\n\n### Hopper-v4\n\n| new |\n")
    document = "intro\n<!-- table:a -->\n| old |\n<!-- /table:a -->\nbetween <!-- table:b --> not a quote\nend\n"
    assert quote_tables(document, tmp_path) == (
        "intro\n<!-- table:a -->\n### Hopper-v4\n\n| new |\n<!-- /table:a -->\nbetween <!-- table:b --> not a quote\nend\n")


def test_quote_tables_fills_a_newly_placed_empty_quote(tmp_path):
    (tmp_path / "a.md").write_text("What the numbers are.\n\n| new |\n")
    document = "intro\n<!-- table:a -->\n<!-- /table:a -->\nend\n"
    assert quote_tables(document, tmp_path) == "intro\n<!-- table:a -->\n| new |\n<!-- /table:a -->\nend\n"


def test_committed_tables_are_what_the_committed_runs_give(tmp_path):
    # scripts/figures.sh redraws every results figure from docs/results/runs alone; its tables must equal the ones in
    # docs/results/, so a table that was not redrawn after a run was added (or a run that was not committed) fails here
    # (the tables alone, FORMATS=none: drawing would take two thirds of the time, and other tests draw)
    env = {**os.environ, "PYTHON": sys.executable, "OUT": str(tmp_path), "FORMATS": "none"}
    result = subprocess.run(["bash", "scripts/figures.sh"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert not re.search(r"^not drawn \(", result.stdout, flags=re.M)  # figures.sh's summary of figures it could not draw
    script = open(os.path.join(REPO, "scripts", "figures.sh")).read()
    names = re.findall(r"^figure (\w+)", script, flags=re.M)
    assert len(names) >= 9
    # a registered experiment's figure is drawn once all its runs are in (scripts/figures.sh says it waits until then)
    registered = re.findall(r"^ *registered (\w+)", script, flags=re.M)
    assert registered == ["l100", "l100_poor_guides", "budget"]
    waiting = re.search(r"^waiting for their registered runs: (.+)$", result.stdout, flags=re.M)
    for name in registered:
        if waiting and name in waiting.group(1).split():
            assert not (tmp_path / f"{name}.md").exists()
        elif glob.glob(os.path.join(REPO, "docs", "results", f"{name}.*")):
            names.append(name)
        # else: the queue committed the experiment's last run and nobody has run figures.sh yet: nothing drawn is
        # stale (the README shows no figure until it is drawn), so main stays green until then
    for name in names:
        with open(os.path.join(REPO, "docs", "results", f"{name}.md")) as committed:
            assert (tmp_path / f"{name}.md").read_text() == committed.read(), f"docs/results/{name}.md is stale"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{name}.md" for name in names)  # and no figure
    # docs/results.md quotes each of these tables, a registered one once drawn (figures.sh brings the quotes up to date
    # with quote_tables)
    with open(os.path.join(REPO, "docs", "results.md")) as f:
        document = f.read()
    assert {name for name, _ in QUOTED_TABLE.findall(document)} == set(names)
    assert quote_tables(document, tmp_path) == document, "docs/results.md quotes a stale table"
    # and the list of committed runs is the one they give
    from camel_utils.results.runs import exported_runs
    from camel_utils.results.tables import run_list

    records = [record for _, record in exported_runs(os.path.join(REPO, "docs", "results", "runs"))]
    with open(os.path.join(REPO, "docs", "results", "runs.md")) as f:
        assert f.read() == run_list(records), "docs/results/runs.md is stale: scripts/figures.sh"


def test_two_methods_under_one_name_are_refused_not_merged(tmp_path, capsys):
    """A TD3 run and a CAMEL+ run given the same --exp-name (and seed) ran different methods: plot.py says so in one
    line and draws nothing, rather than keep one of them, or average them, under one name."""
    runs = tmp_path / "runs"
    td3 = {"llm_policy": "None", "expert_model": "None", "random_guide": "False", "total_timesteps": "5000"}
    camel_plus = {**td3, "llm_policy": "policies/hopper.py", "guide_bc_coef": "0.4", "warmup_actions": "guide"}
    write_run(runs, "Hopper-v4__camel_td3__1__100", line(range(1000, 6000, 1000), 0.1), hyperparameters=td3, finished=True)
    write_run(runs, "Hopper-v4__camel_td3__1__200", line(range(1000, 5000, 1000), 0.2), hyperparameters=camel_plus, finished=True)
    assert run_plot(runs, tmp_path / "plots") == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "camel_td3 (seed 1) on Hopper-v4 but ran different settings: --guide " in err
    assert err.count("\n") == 0 and not (tmp_path / "plots").exists()
    # the same method twice (a folder and a longer restart) is still one run, the longer kept
    shutil.rmtree(runs / "Hopper-v4__camel_td3__1__200")
    write_run(runs, "Hopper-v4__camel_td3__1__300", line(range(1000, 5000, 1000), 0.2), hyperparameters=td3, finished=True)
    assert run_plot(runs, tmp_path / "plots") == 0


def test_the_run_list_is_generated_from_the_exported_runs(tmp_path):
    from camel_utils.results.tables import run_list

    hopper = {"path": "policies/hopper.py", "sha256": committed_sha256("policies/hopper.py")}
    tuned = {"path": "policies/tuned/hopper.py", "sha256": "0" * 64}

    def record(env_id, condition, seed, final, cpu=None, guide=None, finished=True):
        done = {**({"cpu": cpu} if cpu else {}), **({"guide_file": guide} if guide else {})}
        return {"env_id": env_id, "condition": condition, "seed": seed, "total_timesteps": 100_000, "finished": done if finished else None,
                "curves": {"eval/episodic_return": [[50_000, 1.0], [100_000, final]]}}  # fmt: skip

    text = run_list([record("Hopper-v4", "camel_qbc_gwarm_noboot_cu2", 12, 2000.4, guide=hopper),
                     record("Hopper-v4", "camel_qbc_gwarm_noboot_cu2", 11, 1500.6, "Intel X", guide=hopper),
                     record("Hopper-v4", "baseline", 1, 400.0),
                     record("Hopper-v4", "camel_plus_td3", 24, 900.0, guide=hopper), record("Hopper-v4", "camel_plus_td3", 24, 700.0, guide=tuned),
                     record("Hopper-v4", "camel_plus_td3", 25, 10.0, guide=hopper, finished=False)])  # fmt: skip
    assert "5 finished runs, 0.50M environment steps in all (runs under way are listed when they finish)" in text
    rows = [line for line in text.splitlines() if line.startswith("| Hopper-v4")]
    # one row per env, condition and guide file: CAMEL+ of seed 24 with two guides is two rows; seed 25, under way, none
    assert rows == ["| Hopper-v4 | baseline | — | TD3 | 1 | 100k | 1: 400 |",
                    "| Hopper-v4 | camel_plus_td3 | policies/hopper.py | CAMEL+, LLM-written guide | 1 | 100k | 24: 900 |",
                    "| Hopper-v4 | camel_plus_td3 | policies/tuned/hopper.py | CAMEL+, hand-written guide (tuned) | 1 | 100k | 24: 700 |",
                    "| Hopper-v4 | camel_qbc_gwarm_noboot_cu2 | policies/hopper.py | CAMEL+, LLM-written guide | 2 | 100k | 11: 1501, 12: 2000 |"]  # fmt: skip
    assert "CPU model recorded by 1 of the 5 runs" in text and "Intel X" in text


def test_summary_tables_every_envs_final_return_in_one_table_against_the_baseline(tmp_path):
    runs = tmp_path / "runs"
    finals = {("Hopper-v4", "baseline"): [100, 300], ("Hopper-v4", "camel"): [500, 900],
              ("Walker2d-v4", "baseline"): [200, 400], ("Walker2d-v4", "camel"): [100, 500], ("Walker2d-v4", "random"): [50, 70, 90]}  # fmt: skip
    for (env_id, condition), values in finals.items():
        for seed, value in enumerate(values, start=1):
            write_run(runs, f"{env_id}__{condition}__{seed}", [(1000, 0.0), (2000, value)])
    assert run_plot(runs, tmp_path / "out", "summary", True, "envs", ("Hopper-v4", "Walker2d-v4"), "permutation_test", True) == 0
    text = (tmp_path / "out" / "results.md").read_text()
    head, first_env = text.split("### Hopper-v4")[0], text.split("### Hopper-v4")[1]
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in r.strip("|").split("|")] for r in head.splitlines() if r.startswith("| "))}
    assert rows["condition"] == ["Hopper-v4", "Walker2d-v4"]
    assert rows["TD3"] == ["200 [100, 300] (2)", "300 [200, 400] (2)"]
    # camel's two seeds both above TD3's on Hopper: 1 of the 6 splits of 4 seeds into 2 and 2 is as far up, p = 2/6;
    # on Walker2d its mean equals TD3's (300): every split is at least as far from 0 on one side or the other, p = 1
    assert rows["paper's CAMEL, LLM-written guide"] == ["700 [500, 900] (2): +500, p=0.333", "300 [100, 500] (2): +0, p=1.000"]
    # random: none on Hopper; 3 seeds all below both of TD3's on Walker2d: 1 of C(5, 2) = 10 splits, p = 0.2
    assert rows["Random masking"] == ["—", "70 [50, 90] (3): -230, p=0.200"]
    # the per-env tables follow, as without --summary
    assert "| TD3 |" in first_env and "final return against TD3" in first_env
    assert text.splitlines()[0].startswith("Episodic return (unmasked evaluation)")
    # --steps moves the final step of every table, the summary's with them: at 1000 every run logged 0
    assert run_plot(runs, tmp_path / "at1k", "summary", True, "envs", ("Hopper-v4",), "steps", (1000,), "permutation_test", True) == 0
    head = (tmp_path / "at1k" / "results.md").read_text().split("### Hopper-v4")[0]
    assert "| TD3 | 0 [0, 0] (2) |" in head and "| paper's CAMEL, LLM-written guide | 0 [0, 0] (2): +0, p=1.000 |" in head
