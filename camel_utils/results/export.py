"""Writing finished runs as small exported files (camel-run/1) that runs.py reads like the run folders; the format
is in plot.py's docstring."""

import json
import os
from pathlib import Path

import numpy as np

from camel_utils.cli import REPO, repo_relative  # one rule for a path relative to the repository
from camel_utils.machine import cpu_kind, cpu_model
from camel_utils.results.runs import EXPORT_FORMAT, read_events, run_folders, run_identity, running_time

EXPORT_WHOLE = ("eval/episodic_return", "eval/episodic_length")  # exported point by point
# exported as bin means: the training curves, and the scalars B1M's diagnosis reads (docs/preregistration.md: the Q
# values, the critic's and actor's losses, guide BC's share of rows), which a new machine would otherwise not have
EXPORT_THINNED = ("charts/episodic_return", "charts/epsilon", "charts/masked_fraction", "losses/qf1_values", "losses/qf_loss",
                  "losses/actor_loss", "charts/guide_bc_rows")  # fmt: skip


def bin_width(total_steps, max_points):
    """The smallest of 100, 200, 500, 1000, 2000, 5000, ... steps that cuts total_steps into at most max_points bins."""
    width = 100
    while -(-total_steps // width) > max_points:
        width = width * 5 // 2 if str(width).startswith("2") else width * 2
    return width


def thin(steps, values, width):
    """One point per bin of `width` steps that holds points: (the bin's end s, the mean of its values in (s - width, s])."""
    ends = -(-steps // width) * width
    bins, index = np.unique(ends, return_inverse=True)
    return bins, np.bincount(index, weights=values) / np.bincount(index)


def as_points(steps, values):
    """[[step, value], ...] with each value in the shortest form that is the same float32 number."""
    return [[int(s), float(str(np.float32(v)))] for s, v in zip(steps, values)]


def export_record(path, finished, curves, hyperparameters, max_points, repo=REPO, machine=None):
    """The exported file's content for one run folder (the format is in plot.py's docstring); `machine` {cpu,
    cpu_kind}: the machine that ran it, when the caller knows (else finished.json's)."""
    env_id, condition, seed = run_identity(path, hyperparameters, finished)
    logged_total = hyperparameters.get("total_timesteps", "")
    total = finished.get("total_timesteps") or (int(logged_total) if logged_total.isdigit() else 0)
    last = max([int(steps[-1]) for steps, _ in curves.values() if len(steps)] or [0])
    width = bin_width(max(total, last, 1), max_points)
    hyperparameters = {name: repo_relative(value, repo) for name, value in hyperparameters.items()}
    record = {"format": EXPORT_FORMAT, "run_name": finished.get("run_name") or os.path.basename(os.path.normpath(path)),
              "env_id": env_id, "condition": condition, "seed": seed, "total_timesteps": total or None,
              "finished": finished}  # fmt: skip
    timed_seconds, timed_steps, _ = running_time(path)
    if timed_steps:  # how long it ran, and on what: what scripts/queue.py expects of the next run of its kind on that CPU
        machine = machine or {"cpu": finished.get("cpu"), "cpu_kind": finished.get("cpu_kind")}
        record["running"] = {"seconds": round(timed_seconds, 1), "steps": timed_steps, **machine}
    record.update(hyperparameters=hyperparameters, binned={}, curves={})
    for tag in EXPORT_WHOLE + EXPORT_THINNED:
        if tag not in curves or len(curves[tag][0]) == 0:
            continue
        steps, values = curves[tag]
        if tag in EXPORT_THINNED:
            steps, values = thin(steps, values, width)
            record["binned"][tag] = width
        record["curves"][tag] = as_points(steps, values)
    return record


def export_text(record):
    """The record as JSON: its fields one per line, each curve on one line."""
    head = json.dumps({k: v for k, v in record.items() if k != "curves"}, indent=1)
    curves = ",\n".join(f"  {json.dumps(tag)}: {json.dumps(points, separators=(',', ':'))}" for tag, points in record["curves"].items())
    return f'{head[:-2]},\n "curves": {{\n{curves}\n }}\n}}\n'


def write_atomically(path, text):
    """Written whole, then renamed: a reader never sees half a file."""
    with open(f"{path}.tmp", "w") as f:
        f.write(text)
    os.replace(f"{path}.tmp", path)


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def listing(names, at_most=6):
    names = [os.path.basename(os.path.normpath(n)) for n in names]
    return ", ".join(names[:at_most]) + (f" and {len(names) - at_most} more" if len(names) > at_most else "")


class Exported:
    """What an export did: files written, already there, and runs left (unfinished, or not saying who they are)."""

    def __init__(self):
        self.written, self.already, self.unfinished, self.unidentified = [], [], [], []


def export_run(path, target, max_points=200, repo=REPO):
    """Write the curve of the run folder at path to target, finished or not (an unfinished run's record has
    "finished": null and the curve so far); True if the file changed. scripts/queue.py commits these as runs grow, on
    the machine running them: the record names this machine as the one that ran it."""
    finished_path = os.path.join(path, "finished.json")
    finished = None
    if os.path.exists(finished_path):
        with open(finished_path) as f:
            finished = json.load(f)
    curves, hyperparameters = read_events(path)
    if run_identity(path, hyperparameters, finished) is None:
        return False
    machine = {"cpu": cpu_model(), "cpu_kind": cpu_kind()}
    record = export_record(path, finished or {}, curves, hyperparameters, max_points, repo=repo, machine=machine)
    record["finished"] = finished
    text = export_text(record)
    if os.path.exists(target) and open(target).read() == text:
        return False
    write_atomically(target, text)
    return True


def export_runs(runs_dir, to, max_points):
    """Write to/{run_name}.json for each finished run folder under runs_dir whose file is not there yet."""
    done = Exported()
    for path in run_folders(runs_dir):
        finished_path = os.path.join(path, "finished.json")
        if not os.path.exists(finished_path):
            done.unfinished.append(path)
            continue
        with open(finished_path) as f:
            finished = json.load(f)
        target = os.path.join(to, f"{finished.get('run_name') or os.path.basename(os.path.normpath(path))}.json")
        if os.path.exists(target):
            done.already.append(target)
            continue
        curves, hyperparameters = read_events(path)
        if run_identity(path, hyperparameters, finished) is None:
            done.unidentified.append(path)
            continue
        os.makedirs(to, exist_ok=True)
        write_atomically(target, export_text(export_record(path, finished, curves, hyperparameters, max_points)))
        done.written.append(target)
    return done
