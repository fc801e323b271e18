"""The table of claims that opens docs/results.md, computed from the committed runs: each row is a question asked of
two groups of runs (or of a group and its guide alone), and every number in it, and the word that answers it, comes
from those runs. The rows are listed in docs/results/claims.toml; scripts/claims.py writes the table.

For each env of a row: the mean of each group's metric over its seeds with a bootstrap CI (rliable's percentile
interval, the seeds resampled with replacement), and P(X > Y), the chance that a run of X ends above a run of Y,
with its CI (X's and Y's seeds resampled independently); over the envs, where each group has as many seeds in every
env, P(X > Y) averaged over the envs (rliable's stratified bootstrap). A comparison reads "above" where the CI of
P(X > Y) lies above 0.5, "below" where it lies below 0.5, and "not resolved" where it holds 0.5. Against a guide's own
return (a fixed number, measured over 20 episodes: docs/results/guides.json) it reads "above" or "below" where the CI
of X's mean lies wholly on one side of it."""

import json
import os
import re
import tomllib
from typing import NamedTuple

import numpy as np

from camel_utils.conditions import format_steps
from camel_utils.results import intervals
from camel_utils.results.runs import guide_key, load_runs, mixed_settings, settings_differ, training_settings
from camel_utils.results.stats import evaluation_grid, final_values, mean_over_training, values_at

BEGIN, END = "<!-- claims -->", "<!-- /claims -->"
METRICS = ("final", "mean over training", "window")
# Free text in a row (its question and its caveat) names methods, envs and seeds, never a measured number: no
# number of three or more digits and no decimal (the numbers are the runs')
MIN_SEEDS = 3  # fewer seeds in a group: a bootstrap of them says nothing, and the row reads "too few seeds"
MEASURED_NUMBER = re.compile(r"\b\d{3,}\b|\d\.\d")


class ClaimError(ValueError):
    """A row of the claims file that cannot be computed, said in one line."""


DECIDES = ("", "over the envs", "nothing")  # what a row's words claim: every word (an unregistered row), or as registered


class Group(NamedTuple):
    condition: str  # a condition of the committed runs (a run's name: env__condition__seed)
    seeds: tuple  # the seeds to take
    label: str  # how the table names it
    seeds_by_env: dict = {}  # {env: seeds} where an env's seeds are not `seeds`
    guide_files: dict = {}  # {env: guide file}: only the runs with it (a folder with runs of one method and two guides)

    def seeds_in(self, env_id):
        return self.seeds_by_env.get(env_id, self.seeds)

    def seeds_finished(self, found, env_id):
        """How many of the group's seeds have a finished run in the env."""
        return len({r.seed for r in self.runs_in(found, env_id)})

    def runs_in(self, found, env_id):
        """The group's finished runs in the env (of its guide file there, where it names one)."""
        wanted = self.guide_files.get(env_id)
        return [r for r in found if r.env_id == env_id and r.condition == self.condition and r.seed in self.seeds_in(env_id)
                and r.finished and (wanted is None or (r.guide and os.path.normpath(r.guide.path) == os.path.normpath(wanted)))]


def runs_wanted(groups, envs):
    """How many runs the groups should have in the envs: one per seed of each group in each env."""
    return sum(len(g.seeds_in(env_id)) for g in groups for env_id in envs)


def runs_finished(groups, found, envs):
    """How many of those runs are finished among the found runs."""
    return sum(g.seeds_finished(found, env_id) for g in groups for env_id in envs)


class Claim(NamedTuple):
    question: str
    x: Group
    y: Group | None  # None: X against its guide alone
    guide: str  # X's guide alone: its entry in docs/results/guides.json ("" for a comparison of two groups)
    envs: tuple
    runs: str  # the folder of exported runs
    metric: str  # "final" (the return without the mask at the last step both groups reached), "mean over training", "window"
    tag: str  # the scalar the metric reads
    window: tuple  # (first step, last step) of the window metric
    differs_in: tuple  # training settings the question itself changes (learning_starts for learning from 5k or 25k)
    caveat: str
    section: str  # where docs/results.md tells the whole story (or another page: preregistration.md#...)
    experiment: str  # the registered experiment whose runs answer it ("" for the earlier, unregistered ones)
    confidence: float | None  # the row's CI coverage where not the file's (0.983: an entry's primary comparisons)
    resamples: int | None  # the row's bootstrap resamples where not the file's (a registered entry's 50,000)
    decides: str = ""  # a registered row: "over the envs" (a primary comparison: per env reported) or "nothing" (reported)


def parse_seeds(text):
    """'1-5' or '1,3,5' (or a list) -> (1, 2, 3, 4, 5)."""
    if isinstance(text, list):
        return tuple(int(s) for s in text)
    seeds = []
    for part in str(text).split(","):
        first, _, last = part.strip().partition("-")
        seeds += range(int(first), int(last or first) + 1)
    return tuple(seeds)


def read_claims(path):
    """The rows of a claims file (TOML: [[claim]] tables; docs/results/claims.toml says what each key means)."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    claims = []
    for number, row in enumerate(data.get("claim", []), start=1):
        try:
            group = lambda g: Group(g["condition"], parse_seeds(g["seeds"]), g["label"],  # noqa: E731
                                    {env: parse_seeds(s) for env, s in g.get("seeds_by_env", {}).items()}, dict(g.get("guide_files", {})))
            claim = Claim(
                question=row["question"], x=group(row["x"]), y=group(row["y"]) if "y" in row else None,
                guide=row.get("guide", ""), envs=tuple(row["envs"]), runs=row.get("runs", data.get("runs", "docs/results/runs")),
                metric=row.get("metric", "final"), tag=row.get("tag", "eval/episodic_return"),
                window=tuple(row.get("window", ())), differs_in=tuple(row.get("differs_in", ())), caveat=row.get("caveat", ""), section=row.get("section", ""),
                experiment=row.get("experiment", ""), confidence=row.get("confidence"), resamples=row.get("bootstrap_resamples"),
                decides=row.get("decides", ""),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as e:
            raise ClaimError(f"{path}: claim {number}: {type(e).__name__} {e} (each claim needs question, x, y or guide, envs)")
        if (claim.y is None) == (not claim.guide):
            raise ClaimError(f"{path}: claim {number} ({claim.question}): give either y (a second group) or guide (X's guide alone)")
        if claim.decides not in DECIDES or (claim.decides == "over the envs" and len(claim.envs) < 2):
            raise ClaimError(f"{path}: claim {number}: decides {claim.decides!r}: one of {', '.join(map(repr, DECIDES))} "
                             "('over the envs' needs two envs or more)")  # fmt: skip
        if claim.metric not in METRICS or (claim.metric == "window") != bool(claim.window):
            raise ClaimError(f"{path}: claim {number}: metric {claim.metric!r}: one of {', '.join(METRICS)} (window needs window = [first, last])")
        for text in (claim.question, claim.caveat):
            if MEASURED_NUMBER.search(text):
                raise ClaimError(f"{path}: claim {number}: {text!r} writes a number by hand: the table computes them")
        claims.append(claim)
    return data, claims


# ---- The runs of a group, and the metric of each
def group_runs(found, claim, group, env_id):
    """The finished runs of the group in the env, one guide file and one set of settings, every seed present."""
    seeds = group.seeds_in(env_id)
    runs = group.runs_in(found, env_id)
    missing = sorted(set(seeds) - {r.seed for r in runs})
    if missing:
        raise ClaimError(f"claim '{claim.question}': {env_id} {group.condition}: no finished run of seed {', '.join(map(str, missing))} in {claim.runs}")
    if len({guide_key(r.guide) for r in runs}) > 1 or len(runs) > len(seeds):
        raise ClaimError(f"claim '{claim.question}': {env_id} {group.condition}: its seeds ran with different guide files")
    mixed = mixed_settings(runs)
    if mixed:
        raise ClaimError(f"claim '{claim.question}': {env_id} {group.condition}: its seeds ran different settings: {'; '.join(mixed)}")
    return sorted(runs, key=lambda r: r.seed)


def metric_values(claim, groups):
    """(each group's values, one per seed, and the words that say what they are), the groups' runs of one env."""
    every = [run for runs in groups for run in runs]
    if claim.metric == "final":
        step = min(run.steps[-1] for run in every)
        return [final_values(runs, step) for runs in groups], f"at {format_steps(int(step))}"
    if claim.metric == "mean over training":
        grid = evaluation_grid(every)
        return [[mean_over_training(run, grid) for run in runs] for runs in groups], \
            f"mean over training, {format_steps(int(grid[0]))}-{format_steps(int(grid[-1]))}"  # fmt: skip
    first, last = claim.window
    values = []
    for runs in groups:
        here = []
        for run in runs:
            inside = (run.steps >= first) & (run.steps <= last)
            if not inside.any():
                raise ClaimError(f"claim '{claim.question}': {run.path} has no {claim.tag} between {first} and {last}")
            here.append(float(run.values[inside].mean()))
        values.append(here)
    return values, f"{claim.tag}, mean over steps {format_steps(first)}-{format_steps(last)}"


# ---- The numbers and the words
class EnvResult(NamedTuple):
    env_id: str
    what: str  # what the values are (the step, or the metric)
    x: intervals.Estimate  # X's mean over seeds, with its CI
    y: intervals.Estimate | float  # Y's, or the guide's own return
    improvement: intervals.Estimate | None  # P(X > Y) with its CI (None against a guide)
    reads: str  # above, below, not resolved


def reading(estimate, against=0.5, seeds=MIN_SEEDS):
    """above / below / not resolved: where the CI lies against `against` (too few seeds: under MIN_SEEDS in a group)."""
    if seeds < MIN_SEEDS:
        return "too few seeds"
    if estimate.low > against:
        return "above"
    if estimate.high < against:
        return "below"
    return "not resolved"


def pair_estimates(columns_x, columns_y, bootstrap):
    """(P(X > Y) over the envs or None, [each env's P(X > Y)], [each env's mean of X], [each env's mean of Y]), with
    their CIs, from one bootstrap in which X's and Y's seeds are resampled independently within each env; each env
    alone, and no P over the envs, where the seeds per env differ (intervals.bootstrap_by_env)."""
    envs = len(columns_x)

    def every_number(x, y):  # of each resample: P over the envs, each env's P, each env's mean of X and of Y
        per_env = intervals.improvement_per_env(x, y)
        return np.concatenate([per_env.mean(axis=1)[:, None], per_env, x.mean(axis=1), y.mean(axis=1)], axis=1)

    stacked, alone = intervals.bootstrap_by_env([columns_x, columns_y], every_number, bootstrap)
    if stacked is None:
        return None, [a[1] for a in alone], [a[2] for a in alone], [a[3] for a in alone]
    return (stacked[0] if envs > 1 else None), stacked[1 : 1 + envs], stacked[1 + envs : 1 + 2 * envs], stacked[1 + 2 * envs :]


def mean_estimates(columns, bootstrap):
    """[each env's mean with its CI], from one stratified bootstrap of the seeds (each env alone where the seeds per
    env differ)."""
    stacked, alone = intervals.bootstrap_by_env([columns], lambda x: x.mean(axis=1), bootstrap)
    return stacked if stacked is not None else [found[0] for found in alone]


def guide_return(claim, guides, env_id, x_runs):
    """X's guide's own return in the env, from guides.json, checked to be of the file X's runs ran with."""
    entry = guides.get(env_id, {}).get(claim.guide)
    if entry is None:
        raise ClaimError(f"claim '{claim.question}': docs/results/guides.json has no {env_id} return for {claim.guide}")
    files = entry.get("guide", []) if isinstance(entry, dict) else []
    files = {os.path.normpath(f) for f in ([files] if isinstance(files, str) else files)}
    strays = sorted({r.guide.path if r.guide else "no guide" for r in x_runs
                     if files and (r.guide is None or os.path.normpath(r.guide.path) not in files)})  # fmt: skip
    if strays:
        raise ClaimError(f"claim '{claim.question}': {env_id}: guides.json's {claim.guide} return is of {', '.join(sorted(files))}, "
                         f"the runs ran {', '.join(strays)}")  # fmt: skip
    return float(entry["return"] if isinstance(entry, dict) else entry)


def compute(claim, found, guides, bootstrap):
    """(the per-env results, P(X > Y) over the envs or None)."""
    columns_x, columns_y, whats = [], [], []
    for env_id in claim.envs:
        x_runs = group_runs(found, claim, claim.x, env_id)
        if claim.y is None:
            (x_values,), what = metric_values(claim, [x_runs])
            columns_y.append(guide_return(claim, guides, env_id, x_runs))
        else:
            y_runs = group_runs(found, claim, claim.y, env_id)
            differ = [d for d in settings_differ(training_settings(x_runs), training_settings(y_runs)) if d[0] not in claim.differs_in]
            if differ:
                raise ClaimError(f"claim '{claim.question}': {env_id}: the groups ran different training settings: "
                                 + ", ".join(f"{name} {a} against {b}" for name, a, b in differ))  # fmt: skip
            (x_values, y_values), what = metric_values(claim, [x_runs, y_runs])
            columns_y.append(y_values)
        columns_x.append(x_values)
        whats.append(what)
    if claim.y is None:
        x_means = mean_estimates(columns_x, bootstrap)
        return [EnvResult(env_id, what, x, against, None, reading(x, against, len(values)))
                for env_id, what, x, against, values in zip(claim.envs, whats, x_means, columns_y, columns_x)], None  # fmt: skip
    overall, improvements, x_means, y_means = pair_estimates(columns_x, columns_y, bootstrap)
    fewest = [min(len(x), len(y)) for x, y in zip(columns_x, columns_y)]
    return [EnvResult(env_id, what, x, y, p, reading(p, seeds=n))
            for env_id, what, x, y, p, n in zip(claim.envs, whats, x_means, y_means, improvements, fewest)], overall  # fmt: skip


def short_env(env_id):
    return env_id.split("-v")[0]


def seeds_text(seeds):
    seeds = sorted(seeds)
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def group_seeds_text(group, envs):
    """seeds 1-5, or seeds 11-15 (Walker2d 11-13) where an env's differ."""
    others = [f"{short_env(e)} {seeds_text(group.seeds_in(e))}" for e in envs if group.seeds_in(e) != group.seeds]
    return f"seed{'s' if len(group.seeds) > 1 else ''} {seeds_text(group.seeds)}" + (f" ({', '.join(others)})" if others else "")


def estimate_text(estimate):
    return f"{estimate.point:.0f} [{estimate.low:.0f}, {estimate.high:.0f}]"


def finished_share(claim, found):
    """(finished runs, runs) of the row's groups: a registered experiment's row waits until every one is in."""
    groups = [g for g in (claim.x, claim.y) if g]
    return runs_finished(groups, found, claim.envs), runs_wanted(groups, claim.envs)


def pending_markdown(claim, total):
    """A registered row whose runs are not all in: no number (how far they are changes with every run, and
    `scripts/queue.py status` says it)."""
    groups = f"{claim.x.label} ({group_seeds_text(claim.x, claim.envs)}) against "
    groups += f"{claim.y.label} ({group_seeds_text(claim.y, claim.envs)})" if claim.y else "its guide alone"
    return (f"| {claim.question} | {groups} | its {total} runs are under way (`scripts/queue.py status`) | "
            f"waits for its runs | {where_link(claim)} |")


def where_link(claim):
    if not claim.section:
        return ""
    target = claim.section if ".md" in claim.section else f"#{claim.section.lstrip('#')}"
    return f"[{'registered' if claim.experiment else 'more'}]({target})"


def row_markdown(claim, results, overall, bootstrap=None):
    x, y = claim.x, claim.y
    groups = f"{x.label} ({group_seeds_text(x, claim.envs)})"
    groups += f" against {y.label} ({group_seeds_text(y, claim.envs)})" if y else " against its guide alone (20 episodes)"
    numbers, words = [], []
    for r in results:
        if y is None:
            numbers.append(f"{short_env(r.env_id)} {r.what}: {estimate_text(r.x)} against {r.y:.0f}")
        else:
            numbers.append(f"{short_env(r.env_id)} {r.what}: {estimate_text(r.x)} against {estimate_text(r.y)}; "
                           f"P(X > Y) {r.improvement.point:.2f} [{r.improvement.low:.2f}, {r.improvement.high:.2f}]")  # fmt: skip
    by_word = {}
    for r in results:
        by_word.setdefault(r.reads, []).append(short_env(r.env_id))
    words = [f"{word} on {', '.join(envs)}" for word, envs in by_word.items()]
    if overall is not None:
        numbers.append(f"over the envs: P(X > Y) {overall.point:.2f} [{overall.low:.2f}, {overall.high:.2f}]")
        few = any(r.reads == "too few seeds" for r in results)
        words.append(f"over the envs {'too few seeds' if few else reading(overall)}")
    if claim.decides == "over the envs":  # the registered decision first; what each env reads is reported, not claimed
        words = [words[-1], "per env, reported, not claimed: " + "; ".join(words[:-1])]
    elif claim.decides == "nothing":
        words = ["reported, not claimed: " + "; ".join(words)]
    question = claim.question + (f" ({claim.caveat})" if claim.caveat else "")
    if bootstrap is not None:  # the row's own CIs
        numbers.insert(0, f"{bootstrap.confidence:.1%} CIs, {bootstrap.resamples:,} resamples:".replace(".0%", "%"))
    return f"| {question} | {groups} | {'<br>'.join(numbers)} | {'; '.join(words)} | {where_link(claim)} |"


def claims_markdown(path, repo=".", all_pending=False):
    """The claims table for the claims file at `path` (the runs' folders relative to `repo`); with all_pending, every
    registered row as it reads while its runs are under way (what --check also accepts: such a row holds no number)."""
    return claims_tables(path, repo)[1 if all_pending else 0]


def claims_tables(path, repo="."):
    """(the claims table, the same with every registered row as it reads while its runs are under way), in one pass."""
    data, claims = read_claims(path)
    resamples = int(data.get("bootstrap_resamples", intervals.RESAMPLES))
    confidence = float(data.get("confidence", intervals.CONFIDENCE))
    bootstrap = intervals.Bootstrap(resamples, int(data.get("seed", intervals.SEED)), confidence)
    with open(os.path.join(repo, data.get("guide_returns", "docs/results/guides.json"))) as f:
        guides = json.load(f)
    loaded = {}
    if not os.path.isdir(os.path.join(repo, data.get("runs", "docs/results/runs"))):
        raise ClaimError(f"{data.get('runs')}: no such folder")
    ci = f"{confidence:.1%}".replace(".0%", "%")
    lines = [f"Each number is a mean over seeds with its {ci} bootstrap CI ({resamples:,} resamples, seed {bootstrap.seed}); "
             "P(X > Y) is the chance that a run of the first group ends above a run of the second, with its CI. A "
             "comparison reads **above** or **below** where that CI lies wholly on one side of 0.5 (against a guide "
             "alone: where the CI of the mean lies wholly on one side of the guide's return), else **not resolved**; "
             f"a group of fewer than {MIN_SEEDS} seeds reads **too few seeds**. "
             "A row of a registered experiment takes that entry's CIs (named in the row), waits until all its runs are in, and "
             "claims what the entry registered: a primary comparison decides over the envs (each env's word is reported, "
             "not claimed), and the other rows report. "
             "Written by `scripts/claims.py` from the rows of `docs/results/claims.toml` and the committed runs.",
             "", "| question | runs | numbers | reads | where |", "|---|---|---|---|---|"]  # fmt: skip
    pending = list(lines)
    for claim in claims:
        key = (claim.runs, claim.tag)
        if key not in loaded:  # a registered experiment's folder appears with its first run's curve
            folder = os.path.join(repo, claim.runs)
            loaded[key] = folder_runs(folder, claim.tag)
        if claim.experiment:
            done, total = finished_share(claim, loaded[key])
            pending.append(pending_markdown(claim, total))
            if done < total:
                lines.append(pending[-1])
                continue
        own = None
        if claim.confidence is not None or claim.resamples is not None:
            own = bootstrap._replace(confidence=claim.confidence or bootstrap.confidence, resamples=claim.resamples or bootstrap.resamples)
        results, overall = compute(claim, loaded[key], guides, own or bootstrap)
        lines.append(row_markdown(claim, results, overall, own))
        if not claim.experiment:
            pending.append(lines[-1])
    return "\n".join(lines) + "\n", "\n".join(pending) + "\n"


def between(document, begin=BEGIN, end=END):
    """The text between a document's markers."""
    start, stop = document.find(begin), document.find(end)
    if start < 0 or stop < start:
        raise ClaimError(f"the document has no {begin} ... {end} markers")
    return document[start + len(begin) + 1 : stop]


def replace_claims(document, table, begin=BEGIN, end=END):
    """The document with the text between its markers (the claims table's by default) replaced by `table`."""
    start, stop = document.find(begin), document.find(end)
    if start < 0 or stop < start:
        raise ClaimError(f"the document has no {begin} ... {end} markers")
    return document[: start + len(begin)] + "\n" + table + document[stop:]


# ---- The README's headline table ([headline] of the claims file)
HEADLINE_BEGIN, HEADLINE_END = "<!-- headline -->", "<!-- /headline -->"


def column_group(column):
    return Group(column["condition"], parse_seeds(column["seeds"]), column["label"], {}, dict(column.get("guide_files", {})))


def folder_runs(folder, tag="eval/episodic_return"):
    """Every run under a folder of runs; none where the folder is not there yet (a registered experiment's folder
    appears with its first run's curve)."""
    return load_runs([folder], tag).runs if os.path.isdir(folder) else []


def table_runs(found, group, env_id, runs_dir):
    """A table column's runs in an env, checked as a claim's group is (every seed finished, one guide file, one set of
    settings)."""
    claim = Claim(question=group.label, x=group, y=None, guide="", envs=(env_id,), runs=runs_dir, metric="final",
                  tag="eval/episodic_return", window=(), differs_in=(), caveat="", section="", experiment="",
                  confidence=None, resamples=None)  # fmt: skip
    return group_runs(found, claim, group, env_id)


def headline_table(columns, envs, runs_dir, found, guides, bootstrap):
    """Markdown rows: an env per row, a column per group of runs (mean at the last step every run reached, with its
    CI), per guide alone (guides.json) and per published number; then the normalised IQM over the envs of each group
    that has as many seeds in every env."""
    header = "| env | " + " | ".join(c["label"] for c in columns) + " |"
    lines = [header, "|---" * (len(columns) + 1) + "|"]
    scores = {i: [] for i, c in enumerate(columns) if "condition" in c}
    steps = set()
    for env_id in envs:
        cells = []
        for i, column in enumerate(columns):
            if "condition" in column:
                group = column_group(column)
                runs = table_runs(found, group, env_id, runs_dir)
                step = min(run.steps[-1] for run in runs)
                steps.add(int(step))
                values = final_values(runs, step)
                cells.append(estimate_text(mean_estimates([values], bootstrap)[0]))
                scores[i].append(values)
            elif "guide" in column:
                entry = guides[env_id][column["guide"]]
                cells.append(f"{float(entry['return'] if isinstance(entry, dict) else entry):.0f}")
            else:
                cells.append(f"{column['published'][env_id]:.0f}" if env_id in column["published"] else "—")
        lines.append(f"| {env_id} | " + " | ".join(cells) + " |")
    aggregate = []
    for i, column in enumerate(columns):
        columns_here = scores.get(i)
        if columns_here and len({len(c) for c in columns_here}) == 1 and all(intervals.normalised(e, []) is not None for e in envs):
            normalised = [list(intervals.normalised(e, c)) for e, c in zip(envs, columns_here)]
            found_iqm = intervals.score_estimates(normalised, bootstrap)[0].iqm
            aggregate.append(f"{found_iqm.point:.2f} [{found_iqm.low:.2f}, {found_iqm.high:.2f}]")
        else:
            aggregate.append("")
    if any(aggregate):
        lines.append("| IQM of the normalised score, over the envs | " + " | ".join(aggregate) + " |")
    return "\n".join(lines), steps


def headline_markdown(path, repo=".", waiting=False):
    """The README's headline block from the claims file's [headline]: the registered experiment's table once all its
    runs are in (unless `waiting`), until then a line saying so and the interim table with its caveat; None without
    a [headline]."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    spec = data.get("headline")
    if spec is None:
        return None
    with open(os.path.join(repo, data.get("guide_returns", "docs/results/guides.json"))) as f:
        guides = json.load(f)
    envs = tuple(spec["envs"])
    found = folder_runs(os.path.join(repo, spec["runs"]))
    groups = [column_group(c) for c in spec["columns"] if "condition" in c]
    total, done = runs_wanted(groups, envs), runs_finished(groups, found, envs)
    bootstrap = intervals.Bootstrap(int(spec.get("bootstrap_resamples", intervals.RESAMPLES)), intervals.SEED,
                                    float(spec.get("confidence", intervals.CONFIDENCE)))  # fmt: skip
    ci = f"{bootstrap.confidence:.1%}".replace(".0%", "%")
    if done == total and not waiting:
        table, steps = headline_table(spec["columns"], envs, spec["runs"], found, guides, bootstrap)
        head = spec["text"].format(step=", ".join(format_steps(s) for s in sorted(steps)), ci=ci, resamples=f"{bootstrap.resamples:,}")
        figure = spec.get("figure")  # the experiment's figure, which scripts/figures.sh draws once all its runs are in
        if figure and os.path.exists(os.path.join(repo, figure["path"])):
            table += f"\n\n![{figure['alt']}]({figure['path']})"
        return f"{head}\n\n{table}\n"
    interim = spec["interim"]
    table, steps = headline_table(interim["columns"], envs, interim["runs"], folder_runs(os.path.join(repo, interim["runs"])), guides,
                                  bootstrap._replace(resamples=int(interim.get("bootstrap_resamples", bootstrap.resamples))))  # fmt: skip
    waiting = spec["waiting"].format(total=total)
    head = interim["text"].format(step=", ".join(format_steps(s) for s in sorted(steps)), ci=ci,
                                  resamples=f"{int(interim.get('bootstrap_resamples', bootstrap.resamples)):,}")  # fmt: skip
    return f"{waiting}\n\n{head}\n\n{table}\n"


def stale_but_honest(document_table, computed, all_pending):
    """Whether a document's table differs from the computed one only in registered parts still said to be under way
    (runs finished since it was written, as the queue commits them): the whole block as written while its runs were
    under way (a headline, whose shape changes when they are in), or each line the computed one or its under-way form;
    for a block that says nothing while its runs are under way (the first screen's list of methods below TD3), each
    line one the computed block holds (a method whose runs finished since is not listed yet)."""
    if document_table == all_pending:
        return True
    lines, now, pending = document_table.splitlines(), computed.splitlines(), all_pending.splitlines()
    if not pending:
        return set(lines) <= set(now)
    return len(lines) == len(now) == len(pending) and all(line in (a, b) for line, a, b in zip(lines, now, pending))


# ---- The user's budget ([budget] of the claims file): the README's table to 1M and docs/benchmark.md's time to a return
BUDGET_BEGIN, BUDGET_END = "<!-- budget -->", "<!-- /budget -->"
BELOW_BEGIN, BELOW_END = "<!-- below-td3 -->", "<!-- /below-td3 -->"  # on the README's first screen
TIME_BEGIN, TIME_END = "<!-- time-to-return -->", "<!-- /time-to-return -->"
SCALARS_BEGIN, SCALARS_END = "<!-- below-td3-scalars -->", "<!-- /below-td3-scalars -->"  # in docs/design.md's diagnosis


def budget_blocks(path, repo=".", waiting=False):
    """[(document, begin, end, text)] for the claims file's [budget]: in the README, each method's mean return with
    its CI at each step per env, the normalised IQM over the envs, the published returns at 1M and one sentence of
    the hours each method takes to reach the reference's 1M return; on the README's first screen, where a method's
    mean return at the last step is below the reference's on an env, a line that says so, and in the document of
    [budget.diagnosis] (docs/design.md) a table of their runs' scalars; in docs/benchmark.md, the time-to-return
    table. Until every run of the experiment is in (or with `waiting`), the tables say their runs are under way; the
    first screen and the diagnosis name each method below the reference on an env as soon as both have all their
    runs there (with `waiting`, nothing). [] without a [budget]."""
    from camel_utils.results.budget import REFERENCES_1M, method_speeds, read_speeds, time_to_return, time_to_return_markdown

    with open(path, "rb") as f:
        spec = tomllib.load(f).get("budget")
    if spec is None:
        return []
    envs, steps = tuple(spec["envs"]), [int(s) for s in spec["steps"]]
    columns = {c["condition"]: column_group(c) for c in spec["columns"]}
    folder = os.path.join(repo, spec["runs"])
    found = folder_runs(folder)
    total = runs_wanted(columns.values(), envs)
    under_way = [(spec["readme"], BUDGET_BEGIN, BUDGET_END, spec["waiting"].format(total=total) + "\n"),
                 (spec["benchmark"], TIME_BEGIN, TIME_END, spec["benchmark_waiting"].format(total=total) + "\n")]
    if waiting:
        diagnosis = [(spec["diagnosis"]["document"], SCALARS_BEGIN, SCALARS_END, "")] if "diagnosis" in spec else []
        return [(spec["readme"], BELOW_BEGIN, BELOW_END, "")] + diagnosis + under_way
    groups = {(env_id, method): table_runs(found, group, env_id, spec["runs"]) for method, group in columns.items()
              for env_id in envs if group.seeds_finished(found, env_id) == len(group.seeds_in(env_id))}
    label = {m: g.label for m, g in columns.items()}.get
    reference = spec["reference"]

    below = []  # (env, method) where a method's mean at the last step is below the reference's, both with every run in there
    for env_id in envs:
        if (env_id, reference) not in groups:
            continue
        reference_mean = float(np.mean(final_values(groups[(env_id, reference)], steps[-1])))
        for method in columns:
            if method != reference and (env_id, method) in groups:
                mean_here = float(np.mean(final_values(groups[(env_id, method)], steps[-1])))
                if mean_here < reference_mean:
                    below.append((env_id, method, f"- {label(method)} on {env_id}: {mean_here:.0f} against {reference_mean:.0f}\n"))
    first_screen = spec["below_text"].format(step=format_steps(steps[-1]), reference=label(reference)) + "\n" + "".join(line for *_, line in below) if below else ""
    written = [(spec["readme"], BELOW_BEGIN, BELOW_END, first_screen)]
    if "diagnosis" in spec:
        written.append((spec["diagnosis"]["document"], SCALARS_BEGIN, SCALARS_END, below_scalars(spec, columns, below, label, repo)))
    if len(groups) < len(columns) * len(envs):
        return written + under_way
    bootstrap = intervals.Bootstrap(int(spec.get("bootstrap_resamples", intervals.RESAMPLES)), intervals.SEED, intervals.CONFIDENCE)

    lines = [f"| env | method | {' | '.join(format_steps(s) for s in steps)} |", "|---|---|" + "---|" * len(steps)]
    for env_id in envs:
        for method in columns:
            cells = [estimate_text(mean_estimates([final_values(groups[(env_id, method)], s)], bootstrap)[0]) for s in steps]
            lines.append(f"| {env_id} | {label(method)} | {' | '.join(cells)} |")
        for name, (returns, _) in REFERENCES_1M.items() if 1_000_000 in steps else ():  # published at 1M only
            lines.append(f"| {env_id} | {name}, published | " + " | ".join(f"{returns[env_id]:g}" if s == 1_000_000 else "" for s in steps) + " |")
    for method in columns:
        cells = []
        for s in steps:
            scores = [list(intervals.normalised(e, final_values(groups[(e, method)], s))) for e in envs]
            found_iqm = intervals.score_estimates(scores, bootstrap)[0].iqm
            cells.append(f"{found_iqm.point:.2f} [{found_iqm.low:.2f}, {found_iqm.high:.2f}]")
        lines.append(f"| IQM of the normalised score, over the envs | {label(method)} | {' | '.join(cells)} |")

    speeds = read_speeds(os.path.join(repo, spec["speeds"]))._replace(path=spec["speeds"])  # named as claims.toml names it
    steps_per_second = method_speeds(speeds, list(columns))
    last = max(int(s) for s in spec["target_steps"])
    hours = []
    for env_id in envs:
        target, times = time_to_return({m: groups[(env_id, m)] for m in columns}, reference, last, steps_per_second)
        said = [f"{label(m)} {times[m][1]:.1f} h" if times[m] else f"{label(m)} not reached by {format_steps(last)}" for m in columns]
        hours.append(f"{env_id} ({target:.0f}): {', '.join(said)}")
    ci = f"{bootstrap.confidence:.0%}"
    readme = (spec["text"].format(ci=ci, resamples=f"{bootstrap.resamples:,}") + "\n\n" + "\n".join(lines) + "\n\n"
              + spec["time_text"].format(step=format_steps(last), reference=label(reference), cpu=speeds.cpu, speeds=spec["speeds"])
              + " " + "; ".join(hours) + ".\n")  # fmt: skip
    table = time_to_return_markdown(groups, envs, list(columns), label, reference, [int(s) for s in spec["target_steps"]],
                                    speeds, steps_per_second)  # fmt: skip
    benchmark = spec["benchmark_text"] + "\n\n" + "\n".join(table[2:]).rstrip("\n") + "\n"  # without its own heading
    figure = spec.get("figure")  # the experiment's figure, which scripts/figures.sh draws once all its runs are in
    if figure and os.path.exists(os.path.join(repo, figure["path"])):
        readme += f"\n![{figure['alt']}]({figure['path']})\n"

    return written + [(spec["readme"], BUDGET_BEGIN, BUDGET_END, readme), (spec["benchmark"], TIME_BEGIN, TIME_END, benchmark)]


def below_scalars(spec, columns, below, label, repo="."):
    """The text of the diagnosis block: for each (env, method) of `below`, a table of what the reference's runs and
    the method's logged on that env (budget.scalars_markdown) at the steps of the claims file's [budget.diagnosis]."""
    import gymnasium as gym

    from camel_utils.results.budget import SCALAR_TAGS, scalars_markdown

    if not below:
        return ""
    folder, reference = os.path.join(repo, spec["runs"]), spec["reference"]
    found = {tag: folder_runs(folder, tag) for tag in SCALAR_TAGS}
    tables = []
    for env_id, method, _ in below:
        runs = {tag: {m: table_runs(found[tag], columns[m], env_id, spec["runs"]) for m in (reference, method)
                      if columns[m].runs_in(found[tag], env_id)} for tag in SCALAR_TAGS}  # fmt: skip
        table = scalars_markdown(env_id, runs, [reference, method], label, [int(s) for s in spec["diagnosis"]["steps"]],
                                 gym.spec(env_id).max_episode_steps)  # fmt: skip
        heading = spec["diagnosis"]["text"].format(method=label(method), env=env_id, reference=label(reference),
                                                  step=format_steps(int(spec["steps"][-1])))  # fmt: skip
        tables.append(heading + "\n\n" + table)
    return "\n".join(tables)
