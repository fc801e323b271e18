"""The results table ({name}.md): the interval estimates of docs/preregistration.md (IQM and mean of the normalised
score with 95% CIs, P(X > baseline) with its CI, per env and aggregated); for each env, the return at the table's
steps, each seed's final return, the comparison of each condition with a baseline run at the same training settings
(the difference of the means; with --permutation-test, a permutation test's p), the mean return over training, and
footnotes that say what each number is; and the tables docs/results.md quotes."""

import os
import re

import numpy as np

from camel_utils.conditions import condition_label, format_steps, guide_label, order_key, split
from camel_utils.results import intervals
from camel_utils.results.guides import guide_lines
from camel_utils.results.provenance import guide_kind
from camel_utils.results.runs import guide_file, mixed_settings, settings_differ, training_settings
from camel_utils.results.stats import (
    PERMUTATION_SPLITS, default_steps, evaluation_grid, final_values, mean_over_training, permutation_p_value,
    sample_efficiency, smallest_p_value, summarize, values_at,
)  # fmt: skip

AXIS_LABELS = {
    "eval/episodic_return": "Episodic return (unmasked evaluation)",
    "eval/episodic_length": "Episode length in steps (unmasked evaluation)",
    "charts/episodic_return": "Episodic return (training episodes)",
    "charts/epsilon": "Epsilon (probability a step is masked)",
    "charts/masked_fraction": "Share of steps masked",
    "losses/qf1_values": "Q value of the first critic (mean over a batch)",
    "charts/guide_bc_rows": "Share of a batch's rows in guide BC",
}


def is_return(tag):
    """A return (evaluation or training episodes): compared with the baseline's, the guide's and MR.Q's; any other
    scalar (the Q values, a loss, the masked share) is shown as its values alone."""
    return tag.endswith("/episodic_return")


MARKS = "¹²³⁴⁵⁶⁷⁸⁹"  # footnote marks, one per distinct footnote of an env's table


def one_decimal(value):  # a return
    return f"{value:.1f}"


def three_digits(value):  # another scalar: a share, a Q value, a loss (no exponent from 1000 up)
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def format_cell(cell, number=one_decimal):
    """mean [lowest, highest] (n=seeds): the mean over the seeds that reached the step and their range."""
    if cell is None:
        return "—"
    return f"{number(cell.mean)} [{number(cell.low)}, {number(cell.high)}] (n={cell.n})"


def format_settings(pairs):
    return ", ".join(f"{name} {value}" for name, value in pairs)


# ---- Which baseline a condition is compared with
def reference_baseline(env_id, condition, baseline, groups):
    """(reference, differences): the condition that `condition` is compared with, a baseline run at its training
    settings (TRAINING_SETTINGS: the learning start, the budget, ...). That is `baseline` when they agree on every
    setting both logged; else another condition of the same kind in the data that does (baseline_ls25k for a
    *_ls25k condition against baseline); else None, with the settings [(name, its value, baseline's value)] on
    which it differs from `baseline`."""
    own = training_settings(groups[(env_id, condition)])
    given = groups.get((env_id, baseline))
    differences = settings_differ(own, training_settings(given)) if given else []
    if given and not differences:
        return baseline, []
    kind = split(baseline)[0], split(baseline)[2]  # the baseline's name without its settings
    candidates = sorted(c for e, c in groups if e == env_id and c != baseline and (split(c)[0], split(c)[2]) == kind)
    for candidate in candidates:
        runs = groups[(env_id, candidate)]
        if not mixed_settings(runs) and not settings_differ(own, training_settings(runs)):
            return candidate, []
    return None, differences


def against_baseline(finals, baseline_finals, seed=0, decimals=1, permutation_test=True):
    """The cell comparing a condition's final returns with its baseline's: the difference of the means (to
    `decimals`) and, with permutation_test, the permutation test's p; "—" with fewer than 2 seeds on either side."""
    if len(finals) < 2 or len(baseline_finals) < 2:
        return "—"
    difference = f"{np.mean(finals) - np.mean(baseline_finals):+.{decimals}f}"
    return f"{difference}, p={permutation_p_value(finals, baseline_finals, seed):.3f}" if permutation_test else difference


class Footnotes:
    """The marks of one env's table: the same text gets the same mark."""

    def __init__(self):
        self.texts = []

    def mark(self, text):
        if text not in self.texts:
            self.texts.append(text)
        return MARKS[self.texts.index(text) % len(MARKS)]

    def lines(self):
        return [f"{MARKS[i % len(MARKS)]} {text}" for i, text in enumerate(self.texts)]


def comparison_cells(env_id, condition, baseline, groups, final_step, label, notes, seed, permutation_test=True):
    """(final return against the baseline, steps to its final return, the condition compared with or None, the two
    seed counts of the test or None) for one row; a footnote mark where it is not `baseline` itself."""
    runs = groups[(env_id, condition)]
    baseline_name = label(baseline)
    reference, differences = reference_baseline(env_id, condition, baseline, groups)
    if reference is None and (env_id, baseline) not in groups:
        return "—", f"no {baseline_name} runs", None, None
    if reference is None:
        mark = notes.mark(f"Not compared: its training settings ({format_settings((n, v) for n, v, _ in differences)}) differ "
                          f"from those of {baseline_name} ({format_settings((n, b) for n, _, b in differences)}), and "
                          f"these runs hold no {baseline_name} run at its settings.")  # fmt: skip
        return f"—{mark}", f"—{mark}", None, None
    reference_runs, mark, size = groups[(env_id, reference)], "", None
    if reference != baseline:
        given = training_settings(groups.get((env_id, baseline), []))
        differing = [(n, v) for n, v, _ in settings_differ(training_settings(reference_runs), given)]
        why = f"({format_settings(differing)}), not {baseline_name}" if differing else f"(no {baseline_name} runs here)"
        mark = notes.mark(f"Against {label(reference)} ({reference}), the baseline run at its training settings {why}.")
    versus = "—"
    if reference != condition:
        finals, reference_finals = final_values(runs, final_step), final_values(reference_runs, final_step)
        versus = against_baseline(finals, reference_finals, seed, permutation_test=permutation_test)
        size = (len(finals), len(reference_finals)) if versus != "—" and permutation_test else None
    reached, reference_step, _ = sample_efficiency(reference_runs, runs)
    settled = ("—" if reference_step is None else "not reached" if reached is None
               else f"{format_steps(reached)} ({reached / reference_step:.2f}x)")  # fmt: skip
    return versus + mark, settled + mark, reference, size


# ---- The table
def table_steps(env_runs, steps_asked=()):
    """The steps an env's table reports: those asked for that some run reached (else the longest run's last step),
    or by default 25, 50, 75 and 100% of the last step every run reached; the last of them is the final step."""
    if not steps_asked:
        return default_steps(env_runs)
    longest = max(run.steps[-1] for run in env_runs)
    return [s for s in steps_asked if s <= longest] or [int(longest)]


def results_markdown(groups, envs, conditions, label, guides, baseline, tag, steps_asked=(), seed=0, guide_entries=None,
                     permutation_test=False):  # fmt: skip
    """The table of each env, with its footnotes. `groups` {(env_id, condition): runs} holds every run found, the
    shown conditions and any other that can serve as a baseline; `label(condition)` names a condition."""
    baseline_name = label(baseline)
    returns = is_return(tag)
    number = one_decimal if returns else three_digits
    lines = [f"{AXIS_LABELS.get(tag, tag)}: mean over seeds [range over seeds: lowest, highest] (n = seeds that reached "
             f"the step).", ""]  # fmt: skip
    for env_id in envs:
        env_conditions = [c for c in conditions if (env_id, c) in groups]
        env_runs = [run for c in env_conditions for run in groups[(env_id, c)]]
        longest = max(run.steps[-1] for run in env_runs)
        steps = table_steps(env_runs, steps_asked)
        final_step = steps[-1]
        grid = evaluation_grid(env_runs)  # for the mean over training: every run's steps, to their common last
        notes, sizes, references = Footnotes(), set(), []
        lines += [f"### {env_id}", ""]
        if returns:
            lines.append(f"| condition | {' | '.join(format_steps(s) for s in steps)} | final return per seed ({format_steps(final_step)}) "
                         f"| final return against {baseline_name} | steps to the final return of {baseline_name} "
                         f"| mean return over training |")  # fmt: skip
        else:
            lines.append(f"| condition | {' | '.join(format_steps(s) for s in steps)} | final value per seed ({format_steps(final_step)}) "
                         f"| mean over training |")  # fmt: skip
        lines.append("|" + "---|" * (len(steps) + (5 if returns else 3)))
        for condition in env_conditions:
            runs = sorted(groups[(env_id, condition)], key=lambda r: r.seed)
            cells = summarize(runs, steps)
            per_seed_finals = [values_at(run, [final_step])[0] for run in runs]
            finals = ", ".join(f"{run.seed}: " + ("—" if np.isnan(v) else number(v)) for run, v in zip(runs, per_seed_finals))
            if len(grid):
                per_seed = [mean_over_training(run, grid) for run in runs]
                area = f"{number(np.mean(per_seed))} [{number(min(per_seed))}, {number(max(per_seed))}]"
            else:
                area = "—"
            if not returns:
                lines.append(f"| {label(condition)} | {' | '.join(format_cell(c, number) for c in cells)} | {finals} | {area} |")
                continue
            # the comparison with a baseline run at the same training settings
            versus, settled, reference, size = comparison_cells(env_id, condition, baseline, groups, final_step, label, notes, seed,
                                                                permutation_test)  # fmt: skip
            sizes |= {size} if size else set()
            if reference is not None and reference not in references:
                references.append(reference)
            lines.append(f"| {label(condition)} | {' | '.join(format_cell(c) for c in cells)} | {finals} | {versus} | {settled} | {area} |")
        lines.append("")
        lines += notes.lines()
        if not permutation_test and references:
            lines.append(f"Final return against {baseline_name}: the difference of the mean final returns ({format_steps(final_step)}); "
                         "the interval estimates above say whether the seeds separate them (--permutation-test adds a "
                         "permutation test's p).")  # fmt: skip
        if sizes:
            bounds = ", ".join(f"{smallest_p_value(n, m):.3g} with {n} against {m}" for n, m in sorted(sizes))
            lines.append(f"Final return against {baseline_name}: the difference of the mean final returns ({format_steps(final_step)}) "
                         f"and the two-sided p-value of a permutation test over the seeds (every split of the pooled seeds into "
                         f"groups of the two sizes, {PERMUTATION_SPLITS:,} random ones if there are more). The seeds bound p from "
                         f"below, at 2 / C(n + m, n) for n seeds against m: here {bounds}.")  # fmt: skip
        for reference in references:
            _, reference_step, reference_return = sample_efficiency(groups[(env_id, reference)], groups[(env_id, reference)])
            if reference_step is not None:
                lines.append(f"Steps to the final return of {label(reference)}: its mean return at {format_steps(reference_step)} steps "
                             f"is {reference_return:.1f}; the column gives the first evaluation step from which a condition's mean "
                             f"return stays at or above it to the end of its run, and that step over {format_steps(reference_step)}.")  # fmt: skip
        if len(grid):
            what, where = ("return", "evaluation") if returns else ("value", "logged")
            lines.append(f"Mean {what} over training: the {what} averaged over steps {format_steps(int(grid[0]))} to "
                         f"{format_steps(int(grid[-1]))} (the area under the curve by the trapezoid rule on the {where} "
                         f"steps, over the steps), mean over seeds [range over seeds].")  # fmt: skip
        known = guide_lines(guides, env_id, env_conditions, guide_entries) if returns else []
        if known:
            lines.append("Guide's own return (dashed in the figure): " + ", ".join(f"{guide_label(g.entry)} {g.value:.1f}" for g in known) + ".")
        skipped = [format_steps(s) for s in steps_asked if s > longest]
        if skipped:
            lines.append(f"No run reached {', '.join(skipped)} steps (the longest reached {format_steps(int(longest))}).")
        lines.append("")
    return "\n".join(lines)


def summary_markdown(groups, envs, conditions, label, baseline, steps_asked=(), seed=0, permutation_test=False):
    """One table of every env's final return (at the last step of that env's own table), a row
    per condition and a column per env: mean [lowest, highest] (seeds), then the difference of the means from the
    baseline run at the same training settings and the permutation test's p, as in each env's own table below it."""
    final_steps = {}  # each env's final step, that of its own table
    for env_id in envs:
        env_runs = [run for c in conditions if (env_id, c) in groups for run in groups[(env_id, c)]]
        if env_runs:
            final_steps[env_id] = table_steps(env_runs, steps_asked)[-1]
    lines = ["| condition | " + " | ".join(envs) + " |", "|---|" + "---|" * len(envs)]
    for condition in [c for c in conditions if any((e, c) in groups for e in envs)]:
        cells = []
        for env_id in envs:
            if (env_id, condition) not in groups:
                cells.append("—")
                continue
            finals = final_values(groups[(env_id, condition)], final_steps[env_id])
            cell = f"{np.mean(finals):.0f} [{min(finals):.0f}, {max(finals):.0f}] ({len(finals)})" if finals else "—"
            reference, _ = reference_baseline(env_id, condition, baseline, groups)
            if finals and reference is not None and reference != condition:
                versus = against_baseline(finals, final_values(groups[(env_id, reference)], final_steps[env_id]), seed, decimals=0,
                                          permutation_test=permutation_test)  # fmt: skip
                if versus != "—":
                    cell += f": {versus}" + ("" if reference == baseline else f" against {label(reference)}")
            cells.append(cell)
        lines.append(f"| {label(condition)} | " + " | ".join(cells) + " |")
    note = (f"Final return: mean [lowest, highest] (seeds) at the last step of each env's table below; then the "
            f"difference of the means from {label(baseline)}" + (" and the two-sided p of a permutation test over the seeds." if permutation_test else "."))
    return "\n".join(lines + ["", note, ""])


# ---- The interval estimates of docs/preregistration.md
ONE_RUN = "one run: no CI"


def format_estimate(estimate, decimals=2, one_run=False):
    """point [low, high]: an estimate and its CI; with one run (of a method in an env, or of either side of
    P(X > Y)) the point alone: that run's seed-to-seed spread is unknown, so the bootstrap's interval (a point, or
    for P(X > Y) the other side's spread alone) would read narrower than it is."""
    if estimate is None:
        return "—"
    if one_run:
        return f"{estimate.point:.{decimals}f} ({ONE_RUN})"
    return f"{estimate.point:.{decimals}f} [{estimate.low:.{decimals}f}, {estimate.high:.{decimals}f}]"


def scores_at(groups, env_id, condition, step):
    """Each run's score at `step` (the seeds that reached it): its normalised score where the env has the
    normalisation's numbers, else its return."""
    returns = final_values(groups[(env_id, condition)], step)
    scores = intervals.normalised(env_id, returns)
    return (returns, False) if scores is None else (list(scores), True)


def joined(items):
    """a, b and c."""
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def interval_markdown(groups, envs, conditions, label, baseline, steps_asked=(), bootstrap=intervals.Bootstrap(), at_steps=()):
    """(the Markdown of the interval estimates, {condition: ((runs x envs) matrix of normalised scores, its aggregate
    Scores)} of the conditions aggregated over every shown env that has the normalisation's numbers): per condition and env, and
    aggregated over those envs, the IQM and the mean of the scores at each env's final step with their CIs,
    and P(condition > its baseline) with its CI (the baseline run at its training settings, as in the env tables).
    With at_steps, the same at each of those steps instead, a block of rows per step (the matrices: the last step's),
    in each env where every run of the shown conditions reached the step; in an env where some did not, each
    condition's row says how many of its seeds did, and no aggregate is given at that step."""
    env_runs = {e: [run for c in conditions if (e, c) in groups for run in groups[(e, c)]] for e in envs}
    env_runs = {e: runs for e, runs in env_runs.items() if runs}
    if at_steps:  # [({env: the step, where every run reached it}, {env: the step, where some run did not})]
        blocks = [({e: s for e, runs in env_runs.items() if all(run.steps[-1] >= s for run in runs)},
                   {e: s for e, runs in env_runs.items() if any(run.steps[-1] < s for run in runs)}) for s in at_steps]  # fmt: skip
        where = f"at {joined([format_steps(s) for s in at_steps])} steps"
    else:
        blocks = [({e: table_steps(runs, steps_asked)[-1] for e, runs in env_runs.items()}, {})]
        where = "at the final step"
    with_numbers = [e for e in envs if e in env_runs and intervals.normalised(e, []) is not None]
    baseline_name, ci = label(baseline), f"{bootstrap.confidence:.1%}".replace(".0%", "%") + " CI"
    lines = [f"### Interval estimates {where}: IQM and mean, P(X > {baseline_name})", "",
             f"| condition | env | step | runs | IQM [{ci}] | mean [{ci}] | P(X > {baseline_name}) [{ci}] |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    notes, matrices, raw_envs = Footnotes(), {}, []
    for final_steps, short in blocks:
        normalisable = [e for e in with_numbers if e in final_steps]
        for condition in conditions:
            rows = {}  # {env: its row}, written in the envs' order
            for env_id, step in short.items():
                if (env_id, condition) in groups:
                    runs = groups[(env_id, condition)]
                    mark = notes.mark("Seeds of the condition that reached the step, of its seeds: the estimates wait until "
                                      "every run of the env has reached it.")  # fmt: skip
                    reached = sum(run.steps[-1] >= step for run in runs)
                    rows[env_id] = f"| {label(condition)} | {env_id} | {format_steps(step)} | {reached} of {len(runs)}{mark} | — | — | — |"
            envs_here = [e for e in envs if (e, condition) in groups and e in final_steps]
            columns, normalised_here = {}, {}
            for env_id in envs_here:
                columns[env_id], normalised_here[env_id] = scores_at(groups, env_id, condition, final_steps[env_id])
            envs_here = [e for e in envs_here if columns[e]]
            if not envs_here:
                lines += [rows[e] for e in envs if e in rows]
                continue
            aggregate, per_env = intervals.score_estimates([columns[e] for e in envs_here], bootstrap)
            # P(X > baseline): per env against the baseline run at its training settings; one bootstrap for every env
            # where that is the baseline in each (and a second for the aggregate only where the envs differ)
            references = {e: reference_baseline(e, condition, baseline, groups)[0] for e in envs_here}
            reference_columns = {e: scores_at(groups, e, references[e], final_steps[e])[0] for e in envs_here
                                 if references[e] not in (None, condition)}  # fmt: skip
            reference_columns = {e: scores for e, scores in reference_columns.items() if scores}
            improvement, aggregate_improvement = {}, None
            if list(reference_columns) == envs_here and all(references[e] == baseline for e in envs_here):
                aggregate_improvement, found = intervals.improvement_estimates([columns[e] for e in envs_here],
                                                                               list(reference_columns.values()), bootstrap)  # fmt: skip
                improvement = dict(zip(envs_here, found))
            else:
                for env_id, scores in reference_columns.items():
                    improvement[env_id] = intervals.improvement_estimates([columns[env_id]], [scores], bootstrap)[1][0]
            for env_id, scores in zip(envs_here, per_env):
                alone = len(columns[env_id]) == 1
                versus = format_estimate(improvement.get(env_id), one_run=alone or len(reference_columns.get(env_id, ())) == 1)
                if env_id in improvement and references[env_id] != baseline:
                    versus += notes.mark(f"Against {label(references[env_id])}, the baseline run at its training settings.")
                decimals = 2 if normalised_here[env_id] else 1
                if not normalised_here[env_id]:
                    raw_envs.append(env_id)
                rows[env_id] = (f"| {label(condition)} | {env_id} | {format_steps(final_steps[env_id])} | {len(columns[env_id])} | "
                                f"{format_estimate(scores.iqm, decimals, alone)} | {format_estimate(scores.mean, decimals, alone)} | {versus} |")  # fmt: skip
            lines += [rows[e] for e in envs if e in rows]
            # aggregated over every shown env with the normalisation's numbers, where this condition has runs in each
            if any(e in short and (e, condition) in groups for e in with_numbers) and len(with_numbers) > 1:
                step = format_steps(next(iter(short.values())))
                mark = notes.mark("No aggregate at this step: not every run has reached it in every env.")
                lines.append(f"| {label(condition)} | aggregate{mark} | {step} | | — | — | — |")
                continue
            if not normalisable or any(e not in envs_here or not normalised_here[e] for e in normalisable):
                continue  # no runs in some env: its aggregate would not be the others'
            if envs_here != normalisable:  # the bootstraps above took other envs too
                aggregate = intervals.score_estimates([columns[e] for e in normalisable], bootstrap)[0]
                aggregate_improvement = None
                if all(e in reference_columns and references[e] == baseline for e in normalisable):
                    aggregate_improvement = intervals.improvement_estimates([columns[e] for e in normalisable],
                                                                            [reference_columns[e] for e in normalisable], bootstrap)[0]  # fmt: skip
            at = f" {format_steps(final_steps[normalisable[0]])} |" if at_steps else " |"
            if aggregate is None:
                counts = ", ".join(str(len(columns[e])) for e in normalisable)
                mark = notes.mark(f"No aggregate: the runs per env differ ({counts}), and the stratified bootstrap needs as many in each.")
                lines.append(f"| {label(condition)} | aggregate{mark} |{at} | — | — | — |")
                continue
            matrices[condition] = (np.stack([columns[e] for e in normalisable], axis=1), aggregate)
            if len(normalisable) > 1:
                alone = all(len(columns[e]) == 1 for e in normalisable)
                against_one = alone or all(len(reference_columns.get(e, ())) == 1 for e in normalisable)
                lines.append(f"| {label(condition)} | aggregate ({len(normalisable)} envs) |{at} {sum(len(columns[e]) for e in normalisable)} | "
                             f"{format_estimate(aggregate.iqm, one_run=alone)} | {format_estimate(aggregate.mean, one_run=alone)} | "
                             f"{format_estimate(aggregate_improvement, one_run=against_one)} |")  # fmt: skip
    lines.append("")
    lines += notes.lines()
    constants = ", ".join(f"{e} {intervals.RANDOM_RETURN[e]:g} and {intervals.REFERENCE_RETURN[e]:g}" for e in with_numbers)
    at_which = "at the step of its row" if at_steps else "at its env's final step"
    lines.append((f"Normalised score: (R - R_random) / (R_ref - R_random) of each run's return R {at_which} (R_random: "
                  "uniform random actions; R_ref: MR.Q's published mean return at 1M steps" + (f"; here {constants}" if constants else "")
                  + "), 0 for random actions, 1 for MR.Q at 1M.") + (f" {', '.join(dict.fromkeys(raw_envs))}: the return, "
                  "unnormalised (no R_random and R_ref for it)." if raw_envs else ""))  # fmt: skip
    lines.append(f"IQM: the mean of the middle half of the runs' scores (an aggregate pools every env's runs); mean: the mean over "
                 f"envs of each env's mean. P(X > Y): the chance that a run of X scores above a run of Y (a tie counts a half), "
                 f"averaged over envs; a claim that X improves on Y needs its CI above 0.5 (docs/preregistration.md). {ci}s: "
                 f"stratified bootstrap over the runs of each env (rliable), {bootstrap.resamples:,} resamples, seed {bootstrap.seed}.")  # fmt: skip
    if any(ONE_RUN in line for line in lines):
        lines.append(f"({ONE_RUN}): a method with one run in an env (for P(X > Y): either method) shows no spread from seed to "
                     "seed, which a bootstrap of its runs would leave out of the interval: only the point is given.")  # fmt: skip
    lines.append("")
    return "\n".join(lines), matrices


# ---- Tables quoted in a document
# a table a document quotes; empty between the two marks where a new table is placed, before figures.sh first fills it
QUOTED_TABLE = re.compile(r"<!-- table:(\w+) -->\n(?:(.*?)\n)?<!-- /table:\1 -->", flags=re.S)


def quote_tables(document, tables_dir):
    """The document with each table it quotes between <!-- table:NAME --> and <!-- /table:NAME --> replaced by
    tables_dir/NAME.md below its first line (the line that says what the numbers are, and the blank line after)."""
    def table(match):
        with open(os.path.join(tables_dir, f"{match.group(1)}.md")) as f:
            body = f.read().split("\n", 2)[2].strip()
        return f"<!-- table:{match.group(1)} -->\n{body}\n<!-- /table:{match.group(1)} -->"

    return QUOTED_TABLE.sub(table, document)


def run_list(records):
    """The list of runs, as Markdown, from exported run records (camel_utils.results.runs.exported_runs): one row per
    env, condition and guide file with its label, seeds, steps and final returns, then the totals; runs under way
    (exported with "finished": null) are listed once they finish. Written by scripts/figures.sh to
    docs/results/runs.md, so that it always says what is committed."""
    groups = {}
    finished_records = [record for record in records if record.get("finished") is not None]
    for record in finished_records:
        guide = guide_file(record["finished"], record.get("hyperparameters") or {})
        groups.setdefault((record["env_id"], record["condition"], guide.path if guide else ""), []).append(record)
    total_steps = sum(int(r.get("total_timesteps") or 0) for r in finished_records)
    cpus = sorted({r["finished"].get("cpu") for r in finished_records if r["finished"].get("cpu")})
    lines = ["# The committed runs", "",
             f"Generated by scripts/figures.sh from docs/results/runs/ (do not edit): {len(finished_records)} finished runs, "
             f"{total_steps / 1e6:.2f}M environment steps in all (runs under way are listed when they finish). Each row: an "
             "env, a condition (camel_utils/conditions.py names them) and the guide file its runs recorded, its seeds, the "
             "steps per run and each seed's unmasked evaluation return at the end.", "",
             "| env | condition | guide file | label | seeds | steps per run | final return per seed |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for env_id, condition, path in sorted(groups, key=lambda key: (key[0], order_key(key[1]), key[2])):
        runs = sorted(groups[env_id, condition, path], key=lambda r: r["seed"])
        steps = sorted({int(r.get("total_timesteps") or 0) for r in runs})
        finals = [(r["seed"], (r.get("curves", {}).get("eval/episodic_return") or [[None, None]])[-1][1]) for r in runs]
        returns = ", ".join(f"{seed}: {value:.0f}" if value is not None else f"{seed}: -" for seed, value in finals)
        guide = guide_file(runs[0]["finished"], runs[0].get("hyperparameters") or {})
        label = condition_label(condition, guide=guide_kind(guide).label if guide else None)
        lines.append(f"| {env_id} | {condition} | {path or '—'} | {label} | {len(runs)} | "
                     f"{', '.join(format_steps(s) for s in steps)} | {returns} |")  # fmt: skip
    recorded = sum(1 for r in finished_records if r["finished"].get("cpu"))
    lines += ["", f"CPU model recorded by {recorded} of the {len(finished_records)} runs (runs record it from the restructure on)"
                  + (f": {', '.join(cpus)}." if cpus else "."), ""]  # fmt: skip
    return "\n".join(lines)
