"""What plot.py does, one job per module:

    runs.py     finding and reading runs: run folders (TensorBoard event files) and exported run files
    export.py   writing finished runs as small exported files
    stats.py    the numbers: values at steps, mean and range over seeds, permutation test, sample efficiency
    guides.py   each guide's own return (docs/results/guides.json) and which condition uses which
    tables.py   the results table and its footnotes, and the tables docs/results.md quotes
    figures.py  the figure: one panel per env, one line per condition, its colours and legend

Condition names and their labels live in camel_utils/conditions.py (shared with scripts/sweep.py).
"""
