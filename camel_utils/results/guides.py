"""Each guide's own return (docs/results/guides.json, {env_id: {condition: return}}), drawn dashed in the figures
and named in the tables, and which entry a condition uses. An entry may name the guide file it was measured on,
{"return": 764.3, "guide": "policies/hopper.py"}, or a list of files that hold the same code: its line is then drawn
only for runs that logged one of them, so that a sweep with a guide of your own never shows the shipped guide's return
as its guide's."""

import json
import os
from typing import NamedTuple

from camel_utils.cli import repo_relative
from camel_utils.conditions import SAC


def read_guide_returns(path, given):
    """({env_id: {condition: return}}, {env_id: {condition: [guide files]}}) from a JSON file, whose entries are a
    return or {"return": R, "guide": FILE or [FILE, ...]}; ({}, {}) when path is None or is the default and does not
    exist. ValueError saying what is wrong with a file that is given and missing, or not of that shape."""
    if path is None or (not given and not os.path.exists(path)):
        return {}, {}
    try:
        with open(path) as f:
            guides = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"--guide-returns {path}: no such file") from None
    except OSError as e:
        raise ValueError(f"--guide-returns {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"--guide-returns {path}: not JSON ({e})") from None

    def parsed(value):
        """(return, [guide files]) of an entry: a number, or {"return": R, "guide": FILE or [FILE, ...]}; None if not."""
        files = []
        if isinstance(value, dict) and set(value) <= {"return", "guide"}:
            value, files = value.get("return"), value.get("guide", [])
            files = [files] if isinstance(files, str) else files
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return (value, files) if number and isinstance(files, list) and all(isinstance(f, str) for f in files) else None

    shape_ok = isinstance(guides, dict) and all(isinstance(e, dict) for e in guides.values())
    entries = {env: {c: parsed(v) for c, v in e.items()} for env, e in guides.items()} if shape_ok else None
    if entries is None or any(p is None for e in entries.values() for p in e.values()):
        raise ValueError(f'--guide-returns {path}: expected {{env_id: {{condition: return}}}}, e.g. {{"Hopper-v4": {{"camel_tuned": 2542.1}}}}, '
                         'or {"return": 2542.1, "guide": "policies/tuned/hopper.py"} for a return')  # fmt: skip
    returns = {env: {c: value for c, (value, _) in e.items()} for env, e in entries.items()}
    files = {env: {c: names for c, (_, names) in e.items() if names} for env, e in entries.items()}
    return returns, files


def guide_entries(returns, files, groups):
    """({(env_id, condition): entry}, notes): the guide-returns entry of each group whose guide is known by its file or
    not known at all (None), and one note per group of the latter. A group whose runs logged guide files (--llm-policy;
    repo-relative paths, or absolute ones when started outside the repository) that an entry was measured on takes
    that entry: the standing guide's own return for CAMEL+ runs with policies/poor/hopper_standstill.py, whatever
    their name. Other groups take the entry their name gives (guide_entry), or none, with a note, where that entry was
    measured on other files than theirs. Groups left out of the mapping take the entry their name gives."""
    entries, notes = {}, []
    for (env_id, condition), runs in sorted(groups.items()):
        measured = {entry: {os.path.normpath(path) for path in paths} for entry, paths in files.get(env_id, {}).items()}
        logged = sorted({run.settings.get("llm_policy") for run in runs} - {None, "None"})
        used = {path: os.path.normpath(repo_relative(path)) for path in logged}  # as logged: as measured
        by_name = guide_entry(condition, returns.get(env_id, {}))
        by_file = [entry for entry, paths in measured.items() if used and set(used.values()) <= paths]
        if by_file:
            entries[(env_id, condition)] = by_name if by_name in by_file else by_file[0]
        elif by_name in measured:
            other = [path for path in logged if used[path] not in measured[by_name]]
            if other:
                entries[(env_id, condition)] = None
                notes.append(f"'{condition}' on {env_id} ran with the guide {other[0]}, not {files[env_id][by_name][0]}: its guide's "
                             "own return is not drawn")  # fmt: skip
    return entries, notes


def guide_entry(condition, returns):
    """The guide-returns entry a condition uses: its own, else that of the condition it varies, found by dropping
    a sac_ prefix and then trailing _words (camel_tuned for sac_camel_tuned, camel_tuned_ls25k, camel_tuned_no_ma_em;
    camel, the LLM-written guide, is its own entry); None if none."""
    condition = condition.split("@")[0]  # camel for camel@llm: one of a name's guides (plot.py)
    name = condition[len(SAC) :] if condition.startswith(SAC) and condition not in returns else condition
    parts = name.split("_")
    for end in range(len(parts), 0, -1):
        if "_".join(parts[:end]) in returns:
            return "_".join(parts[:end])
    return None


class GuideLine(NamedTuple):
    entry: str  # the guide-returns entry: the guide, named as its condition at the defaults (camel_tuned)
    condition: str  # the condition whose colour the line takes: the guide's own if shown, else the first that uses it
    value: float  # the guide's own return


def guide_lines(guides, env_id, conditions, entries=None):
    """One dashed line per guide that a shown condition uses: its entry in `entries` (guide_entries) where it has one,
    else the one its name gives (guide_entry); two guides with equal returns keep a line each."""
    returns = guides.get(env_id, {})
    entries = entries or {}
    lines = {}
    for condition in conditions:
        key = (env_id, condition)
        entry = entries[key] if key in entries else guide_entry(condition, returns)
        if entry is not None and entry not in lines:
            lines[entry] = GuideLine(entry, entry if entry in conditions else condition, float(returns[entry]))
    return list(lines.values())
