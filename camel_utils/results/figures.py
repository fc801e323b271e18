"""The figures: {name}.png, .svg, .pdf: one panel per env, one line per condition (the mean over seeds, the range
over seeds shaded), a dashed line at each guide's own return, each condition in its own colour and under its label;
{name}_intervals.png and {name}_profile.png: rliable's interval estimates (IQM and mean of the normalised
score with their CIs) and performance profiles (the share of runs above each score, with its band) of the
conditions aggregated over the envs, in the same colours.

A condition is a name a run recorded (its exp_name), or, where one name's runs had guides of more than one kind,
that name and the guide's tag: camel_plus_td3@tuned (plot.py)."""

import os
import zlib

import numpy as np

from camel_utils.conditions import HISTORICAL_GUIDES, NO_MA_EM, SAC, TODAYS_GUIDES, guide_label, split
from camel_utils.results.guides import guide_lines
from camel_utils.results.stats import summarize
from camel_utils.results.tables import AXIS_LABELS, format_steps

# Each guide's colour in every figure, at its default settings and trained by TD3 (its _no_ma_em control: the same
# colour, dash-dotted), and today's methods' (CAMEL+ red); other conditions take colours from OTHER_COLORS, chosen by name.
COLORS = {"baseline": "#4d4d4d", "camel": "#1f77b4", "camel_tuned": "#9467bd", "expert": "#2ca02c", "random": "#ff7f0e",
          "standstill": "#8c564b", "lean": "#e377c2", "td3": "#4d4d4d", "camel_td3": "#1f77b4", "camel_plus_td3": "#d62728",
          "sac": "#4d4d4d", "camel_sac": "#1f77b4"}  # fmt: skip
OTHER_COLORS = ["#d62728", "#17becf", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173"]
BAND_NOTE = "Line: mean over seeds; shaded: range over seeds (lowest to highest)"
assert set(COLORS) <= set(HISTORICAL_GUIDES) | set(TODAYS_GUIDES)
INTERVAL_NOTE = "Bar: {ci} (stratified bootstrap); tick: the estimate"


def with_ma_em(condition):
    return condition[: -len(NO_MA_EM)] if condition.endswith(NO_MA_EM) else condition


def condition_of(series):
    """The run name of a plotted condition: camel_plus_td3 for camel_plus_td3@tuned."""
    return series.split("@")[0]


def condition_colors(conditions):
    """A colour per condition; X_no_ma_em takes X's. A guide at its default settings takes its fixed colour; the
    same guide with other settings (sac_, _ls25k) takes it too when the figure has no condition in it already, else
    one of OTHER_COLORS, chosen by name (the next free one when two names in the same figure would share it)."""
    colors, taken = {}, set()
    # a guide's colour goes to its name without a tag first, then to its LLM-written guide's runs (camel_plus_td3@llm)
    keys = sorted({with_ma_em(c) for c in conditions}, key=lambda k: (condition_of(k) not in COLORS, "@" in k and not k.endswith("@llm"), k))
    for key in keys:
        stem = split(condition_of(key))[0]
        guide = stem[len(SAC) :] if stem.startswith(SAC) else stem
        color = COLORS.get(guide)
        if color is None or color in taken:
            slot = zlib.crc32(key.encode()) % len(OTHER_COLORS)
            free = [OTHER_COLORS[(slot + i) % len(OTHER_COLORS)] for i in range(len(OTHER_COLORS))]
            color = next((c for c in free if c not in taken), free[0])
        colors[key] = color
        taken.add(color)
    return {c: colors[with_ma_em(c)] for c in conditions}


def draw_figure(groups, envs, conditions, label, guides, tag, paths, guide_entries=None):
    """The figure, written to each of `paths` (.png, .svg, .pdf)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    colors = condition_colors(conditions)
    style = {"pdf.fonttype": 42, "svg.hashsalt": "camel", "font.size": 10}  # editable PDF text, reproducible SVG ids
    with plt.rc_context(style):
        # the legend's entries: the conditions drawn, in their order, then the guides' returns; the figure grows
        # with its rows
        drawn = [c for c in conditions if any((env_id, c) in groups for env_id in envs)]
        legend_guides = list(dict.fromkeys(g.entry for env_id in envs for g in guide_lines(guides, env_id, conditions, guide_entries)))
        names = [label(c) for c in drawn] + [f"Guide's own return: {guide_label(entry)}" for entry in legend_guides]
        width = max(4.6 * len(envs), 6.4)  # inches
        entry_width = 0.6 + 0.075 * max(len(n) for n in names)  # inches: the line sample and the longest name
        columns = max(1, min(len(names), int(width // entry_width)))
        legend_height = 0.3 + 0.25 * -(-len(names) // columns)  # inches: its title and rows
        fig, axes = plt.subplots(1, len(envs), figsize=(width, 3.4 + legend_height), squeeze=False, layout="constrained")
        curves, guide_handles = {}, {}
        for ax, env_id in zip(axes[0], envs):
            for condition in conditions:
                runs = groups.get((env_id, condition))
                if not runs:
                    continue
                grid = np.unique(np.concatenate([run.steps for run in runs]))
                cells = summarize(runs, grid)
                keep = [i for i, cell in enumerate(cells) if cell is not None]
                mean, low, high = (np.array([getattr(cells[i], f) for i in keep]) for f in ("mean", "low", "high"))
                linestyle = "-." if condition_of(condition).endswith(NO_MA_EM) else "-"
                (curves[condition],) = ax.plot(grid[keep], mean, color=colors[condition], linestyle=linestyle, linewidth=1.8)
                ax.fill_between(grid[keep], low, high, color=colors[condition], alpha=0.18, linewidth=0)
            for guide in guide_lines(guides, env_id, conditions, guide_entries):  # in its condition's colour
                guide_handles[guide.entry] = ax.axhline(guide.value, color=colors[guide.condition], linestyle="--", linewidth=1.2)
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: format_steps(int(x))))
            ax.set_xlim(left=0)
            ax.set_title(env_id)
            ax.set_xlabel("Environment steps")
            ax.set_ylabel(AXIS_LABELS.get(tag, tag))
            ax.grid(alpha=0.3)
        # one legend for the figure, titled with what the lines and the bands are
        handles = [curves[c] for c in drawn] + [guide_handles[entry] for entry in legend_guides]
        fig.legend(handles, names, loc="outside lower center", ncol=columns, frameon=False, title=BAND_NOTE, title_fontsize=9)
        save(fig, paths)
        plt.close(fig)
    return paths


def undated(path):
    """savefig's metadata for `path` without the date an SVG or PDF records, so that the same data gives the same file."""
    return {".svg": {"Date": None}, ".pdf": {"CreationDate": None}}.get(os.path.splitext(str(path))[1])


def save(fig, paths):
    for path in paths:
        fig.savefig(path, dpi=200, bbox_inches="tight", metadata=undated(path))


def draw_interval_figures(aggregates, label, interval_paths, profile_paths, bootstrap):
    """rliable's interval-estimate figure (IQM and mean of the normalised score, with their CIs) and performance profile of
    the conditions in `aggregates` ({condition: ((runs x envs) normalised scores, their aggregate
    intervals.Scores)}, as tables.interval_markdown gives them), written to each of the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rliable import plot_utils

    from camel_utils.results import intervals

    conditions = list(aggregates)
    matrices = {c: matrix for c, (matrix, _) in aggregates.items()}
    colors = condition_colors(conditions)
    names = {c: label(c) for c in conditions}
    by_name = {names[c]: colors[c] for c in conditions}
    points = {names[c]: np.array([scores.iqm.point, scores.mean.point]) for c, (_, scores) in aggregates.items()}
    bounds = {names[c]: np.array([[scores.iqm.low, scores.mean.low], [scores.iqm.high, scores.mean.high]])
              for c, (_, scores) in aggregates.items()}  # fmt: skip
    with plt.rc_context({"pdf.fonttype": 42, "svg.hashsalt": "camel", "font.size": 10}):
        fig, axes = plot_utils.plot_interval_estimates(points, bounds, ["IQM", "Mean"], algorithms=[names[c] for c in conditions][::-1],
                                                       colors=by_name, xlabel="", subfigure_width=3.6, row_height=0.6)  # fmt: skip
        for ax in axes:
            ax.set_xlabel("Normalised score", fontsize="x-large")
        height = fig.get_size_inches()[1]
        ci = f"{bootstrap.confidence:.1%}".replace(".0%", "%") + " CI"
        fig.text(0.5, -0.75 / height, INTERVAL_NOTE.format(ci=ci), ha="center", va="top", fontsize="large")  # below the axes' labels
        save(fig, interval_paths)
        plt.close(fig)
        everything = np.concatenate([m.ravel() for m in matrices.values()])
        taus = np.linspace(min(0.0, float(everything.min())), max(1.0, float(everything.max())), 101)
        profiles, bands = intervals.performance_profiles({names[c]: matrices[c] for c in conditions}, taus, bootstrap)
        fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
        plot_utils.plot_performance_profiles(profiles, taus, performance_profile_cis=bands, colors=by_name, ax=ax,
                                             xlabel="Normalised score (τ)", ylabel="Share of runs with score > τ",
                                             labelsize="medium", ticklabelsize="medium")  # fmt: skip
        ax.legend(loc="upper right", fontsize=8, frameon=False)
        save(fig, profile_paths)
        plt.close(fig)
    return interval_paths + profile_paths
