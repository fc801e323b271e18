"""What plot.py does, one job per module:

    runs.py       finding and reading runs: run folders (TensorBoard event files) and exported run files
    provenance.py what a run's guide file is (LLM-written, hand-written, another file), from its path and sha256
    export.py     writing runs as small exported files
    stats.py      the numbers: values at steps, mean and range over seeds, permutation test, sample efficiency
    intervals.py  docs/preregistration.md's statistics with rliable: normalised scores, IQM and mean with
                  stratified bootstrap CIs, probability of improvement, performance profiles
    guides.py     each guide's own return (docs/results/guides.json) and which condition uses which
    tables.py     the results table and its footnotes, the interval estimates, and the tables docs/results.md quotes
    figures.py    the figures: one panel per env, one line per condition, its colours and legend; rliable's
                  interval estimates and performance profiles
    budget.py     the user's budget (experiment B1M): its 1M figure, the published returns, the time to a return
                  at each trainer's measured speed

Condition names and their labels live in camel_utils/conditions.py (shared with scripts/sweep.py).
"""
