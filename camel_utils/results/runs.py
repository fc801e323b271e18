"""Finding and reading runs: run folders (TensorBoard event files, the trainers' and the sweep's files) and exported
run files (camel-run/1, written by export.py), one Run per (env, condition, guide file, seed): two runs of one seed
and method with different guide files are two runs, never merged."""

import json
import logging
import os
from typing import NamedTuple

import numpy as np

from camel_utils.cli import repo_relative
from camel_utils.results.provenance import GuideFile

EVENT_FILE_PREFIX = "events.out.tfevents."
EXPORT_FORMAT = "camel-run/1"


class Run(NamedTuple):
    env_id: str
    condition: str
    seed: int
    path: str
    steps: np.ndarray  # evaluation steps, increasing
    values: np.ndarray  # the tag's value at those steps
    settings: dict = {}  # the run's logged hyperparameters {name: text}
    guide: GuideFile | None = None  # the guide file it ran with (--llm-policy); None without one
    finished: bool = True  # False for a run under way (no finished.json; exported with "finished": null)
    cpu: str = ""  # the CPU model its finished.json recorded (the machine that made it); "" where none


# Settings that change what a run learns: the seeds of one condition must agree on each of these that they logged
# (a run from before a setting existed did not log it, and is not compared on it). Bookkeeping (threads, speed
# paths, checkpoints, paths) may differ.
GUIDE_SETTINGS = (
    "guide", "mask_width", "epsilon_fraction", "masking_aware", "epsilon_masking", "random_guide", "actor_full_bounds_share",
    "target_full_bounds", "distill_coef", "guide_bc_coef", "guide_bootstrap", "warmup_actions", "critic_updates_per_step",
    "critic_layer_norm",
)  # fmt: skip
# The training settings every condition shares with its baseline (the rest is what the guide changes): a condition
# is compared only with a baseline that agrees on each of these that both logged.
TRAINING_SETTINGS = (
    "total_timesteps", "learning_rate", "policy_lr", "q_lr", "buffer_size", "gamma", "tau", "batch_size", "policy_noise",
    "exploration_noise", "learning_starts", "policy_frequency", "target_network_frequency", "noise_clip", "alpha",
    "autotune",
)  # fmt: skip
ALGORITHM_SETTINGS = TRAINING_SETTINGS + GUIDE_SETTINGS


def guided(settings):
    """Whether a run's logged hyperparameters give it a guide: "yes" or "no" (None for a run that logged none)."""
    if not any(name in settings for name in ("llm_policy", "expert_model", "random_guide")):
        return None  # a run that logged none of them is not compared on it
    flags = [settings.get(name, "None") for name in ("llm_policy", "expert_model")] + [settings.get("random_guide", "False")]
    return "no" if flags == ["None", "None", "False"] else "yes"


def mixed_settings(runs):
    """For runs of one env and condition: one line per algorithm setting on which their seeds differ (whether they
    had a guide first), naming the values and the seeds with each (empty when they agree)."""
    lines, by_seed = [], sorted(runs, key=lambda r: r.seed)
    for name in ALGORITHM_SETTINGS:
        values = {}
        for run in by_seed:
            value = guided(run.settings) if name == "guide" else run.settings.get(name)
            if value is not None:
                values.setdefault(value, []).append(str(run.seed))
        if len(values) > 1:
            lines.append(f"--{name.replace('_', '-')} " + ", ".join(f"{v} (seed {' '.join(seeds)})" for v, seeds in values.items()))
    return lines


def training_settings(runs):
    """{name: value} of the training settings the runs logged (seeds of one condition agree on them)."""
    return {name: run.settings[name] for run in runs for name in TRAINING_SETTINGS if name in run.settings}


def settings_differ(settings, other):
    """The training settings logged by both on which they differ: [(name, value, other value)]."""
    return [(name, settings[name], other[name]) for name in TRAINING_SETTINGS
            if name in settings and name in other and settings[name] != other[name]]  # fmt: skip


# ---- Finding runs
def run_folders(runs_dir):
    """Folders under runs_dir that hold a run: TensorBoard event files, or camel_td3.py's or the sweep's files."""
    markers = ("finished.json", "checkpoint.pt", "log.txt")
    for path, dirs, files in sorted(os.walk(runs_dir)):
        dirs.sort()
        if any(f.startswith(EVENT_FILE_PREFIX) for f in files) or any(m in files for m in markers):
            yield path


def exported_runs(runs_dir):
    """(path, record) of each exported run file under runs_dir (runs_dir may be one such file); other JSON files
    (finished.json, a guide-returns file) are passed over."""
    if os.path.isfile(runs_dir):
        candidates = [runs_dir]
    else:
        candidates = [os.path.join(path, f) for path, _, files in sorted(os.walk(runs_dir)) for f in sorted(files)]
    for path in candidates:
        record = read_export(path) if path.endswith(".json") and os.path.basename(path) != "finished.json" else None
        if record is not None:
            yield path, record


def run_identity(path, hyperparameters, finished=None):
    """(env_id, condition, seed) of a run: from its finished.json or the hyperparameters camel_td3.py logs, else from
    the folder name {env_id}__{exp_name}__{seed}[__{time}]; None when none of them gives it."""
    for record in (finished or {}, hyperparameters):
        if {"env_id", "exp_name", "seed"} <= record.keys() and str(record["seed"]).isdigit():
            return record["env_id"], record["exp_name"], int(record["seed"])
    parts = os.path.basename(os.path.normpath(path)).split("__")
    if len(parts) in (3, 4) and all(parts[:2]) and all(p.isdigit() for p in parts[2:]):
        return parts[0], parts[1], int(parts[2])
    return None


def guide_file(finished, hyperparameters):
    """The guide file a run ran with: finished.json's guide_file (path and sha256), else the --llm-policy it logged
    (a run under way, or one made before runs recorded the file: no sha256); None without one."""
    record = (finished or {}).get("guide_file")
    if isinstance(record, dict) and record.get("path"):
        return GuideFile(repo_relative(str(record["path"])), record.get("sha256"))
    path = hyperparameters.get("llm_policy")
    return GuideFile(repo_relative(path), None) if path and path != "None" else None


def guide_key(guide):
    """What tells two guide files apart: the sha256 of their bytes, else (not recorded) the path."""
    return None if guide is None else guide.sha256 or f"path {os.path.normpath(guide.path)}"


# ---- Reading one run
def as_curve(points):
    """(steps, values) arrays from [(step, value)], the values as the float32 numbers TensorBoard stores."""
    steps = np.array([s for s, _ in points], dtype=np.int64)
    values = np.array([v for _, v in points], dtype=np.float32).astype(np.float64)
    return steps, values


def read_events(path):
    """Every scalar curve {tag: (steps, values)} and the logged hyperparameters {name: text} of one run folder,
    with TensorBoard's own reader. TensorBoard drops the points a resumed run purged; a run restarted from scratch
    in the same folder (steps going back without a purge) keeps only its newest points for each step, as
    TensorBoard's display does."""
    from tensorboard.backend.event_processing import event_accumulator

    logging.getLogger("tensorboard").setLevel(logging.ERROR)  # its notes on purged steps are expected here
    accumulator = event_accumulator.EventAccumulator(
        path, size_guidance={event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0}
    )
    accumulator.Reload()
    tags = accumulator.Tags()
    hyperparameters = {}
    if "hyperparameters/text_summary" in tags["tensors"]:
        text = accumulator.Tensors("hyperparameters/text_summary")[0].tensor_proto.string_val[0].decode()
        for line in text.splitlines()[2:]:  # after the header |param|value| and |-|-|
            cells = line.strip().strip("|").split("|")
            if len(cells) == 2:
                hyperparameters[cells[0]] = cells[1]
    curves = {}
    for tag in tags["scalars"]:
        points = []
        for event in accumulator.Scalars(tag):
            while points and points[-1][0] >= event.step:
                points.pop()
            points.append((event.step, event.value))
        curves[tag] = as_curve(points)
    return curves, hyperparameters


TIMED_TAG = "charts/epsilon"  # every trainer logs it every 100 steps, from the first step to the last
PAUSE_SECONDS = 120  # a longer wall-clock gap between two of its points is a pause (SIGSTOP) or a restart, not running


def event_files(path):
    """The paths of the run folder's event files, oldest first (one per process; [] when no folder)."""
    names = [f for f in os.listdir(path) if f.startswith(EVENT_FILE_PREFIX)] if os.path.isdir(path) else []
    return sorted((os.path.join(path, f) for f in names), key=os.path.getmtime)


def timed_points(event_file):
    """(step, wall time) of each TIMED_TAG point of one event file, in the order written."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    return [(event.step, event.wall_time) for event in EventFileLoader(event_file).Load()
            if any(value.tag == TIMED_TAG for value in event.summary.value)]  # fmt: skip


def running_time(path):
    """(seconds, steps, last step) of the run folder's curve as kept: the wall-clock gaps between successive
    charts/epsilon points (one per 100 steps, evaluations included) summed where a gap is at most PAUSE_SECONDS, the
    steps those gaps cover, and the last step logged. A resumed run's points past its checkpoint are dropped, as
    read_events drops them, and the gap to its new process's first point is not counted. (0.0, 0, 0) before two
    points. Each event file's wall times are its own machine's clock: a folder holds one machine's processes."""
    points = []  # (step, wall time, whether the gap from the point before it counts)
    for event_file in event_files(path):
        for i, (step, wall_time) in enumerate(timed_points(event_file)):
            while points and points[-1][0] >= step:
                points.pop()
            points.append((step, wall_time, i > 0))
    seconds, steps = 0.0, 0
    for (step_before, time_before, _), (step, time, counts) in zip(points, points[1:]):
        if counts and 0 <= time - time_before <= PAUSE_SECONDS:
            seconds, steps = seconds + time - time_before, steps + step - step_before
    return seconds, steps, points[-1][0] if points else 0


def read_export(path):
    """The record of an exported run file, or None when the file is not one."""
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) and record.get("format") == EXPORT_FORMAT else None


# ---- Every run under some folders
class Found(NamedTuple):
    runs: list  # of Run, each with at least one point of the tag
    unidentified: list  # folders that do not say which run they are
    empty: list  # (path, finished) of runs with no point of the tag yet
    notes: list  # runs found twice with different lengths
    conflicts: list = []  # runs of the same env, condition, guide and seed that ran different methods


def load_runs(runs_dirs, tag):
    """Every run under the folders, from its event files or its exported file, one per (env, condition, guide file,
    seed)."""
    runs, unidentified, empty, notes, conflicts = {}, [], [], [], []
    sources = [(path, None) for d in runs_dirs for path in run_folders(d)]
    sources += [(path, record) for d in runs_dirs for path, record in exported_runs(d)]
    for path, record in sources:
        if record is None:  # a run folder
            curves, hyperparameters = read_events(path)
            finished = read_finished(path)
            identity = run_identity(path, hyperparameters)
        else:
            try:
                curves = {name: as_curve(points) for name, points in record["curves"].items()}
                identity = str(record["env_id"]), str(record["condition"]), int(record["seed"])
                hyperparameters = dict(record.get("hyperparameters") or {})
                finished = record.get("finished")
                finished = dict(finished) if finished is not None else None
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                notes.append(f"{path}: left out: not a complete exported run ({type(e).__name__}: {e}); export it again")
                continue
        if identity is None:
            unidentified.append(path)
            continue
        steps, values = curves.get(tag, as_curve([]))
        if len(steps) == 0:
            empty.append((path, finished is not None))
            continue
        runs.setdefault(identity, []).append(Run(*identity, path, steps, values, hyperparameters, guide_file(finished, hyperparameters),
                                                 finished is not None, str((finished or {}).get("cpu") or "")))  # fmt: skip
    # a run that recorded no sha256 of its guide (one under way) takes the one every other run recorded for that path
    recorded = {}
    for run in [run for same in runs.values() for run in same if run.guide and run.guide.sha256]:
        recorded.setdefault(os.path.normpath(run.guide.path), set()).add(run.guide.sha256)
    kept = {}
    for identity, same in runs.items():
        for run in same:
            if run.guide and run.guide.sha256 is None and len(recorded.get(os.path.normpath(run.guide.path), ())) == 1:
                run = run._replace(guide=GuideFile(run.guide.path, next(iter(recorded[os.path.normpath(run.guide.path)]))))
            key = (*identity, guide_key(run.guide))
            clash = next((other for other_key, other in kept.items() if other_key[:3] == identity and mixed_settings([other, run])), None)
            if clash is not None:  # two methods under one name and seed (a guide file apart is a guide, not a method)
                conflicts.append(f"{clash.path} and {run.path} are both {identity[1]} (seed {identity[2]}) on {identity[0]} "
                                 f"but ran different settings: {'; '.join(mixed_settings([clash, run]))}")  # fmt: skip
                continue
            previous = kept.get(key)
            if previous is not None:  # the same seed twice: a folder and its export, or CleanRL's names with a time
                longer, shorter = (run, previous) if run.steps[-1] > previous.steps[-1] else (previous, run)
                if longer.steps[-1] != shorter.steps[-1]:
                    notes.append(f"{shorter.path}: left out: {longer.path} is the same env, condition, guide and seed and ran longer")
                run = longer
            kept[key] = run
    return Found(list(kept.values()), unidentified, empty, notes, conflicts)


def read_finished(path):
    """A run folder's finished.json ({} when it does not parse), or None while it runs (or when it stopped before
    the end)."""
    finished_path = os.path.join(path, "finished.json")
    if not os.path.exists(finished_path):
        return None
    try:
        with open(finished_path) as f:
            finished = json.load(f)
    except (OSError, ValueError):
        return {}
    return finished if isinstance(finished, dict) else {}
