"""Each guide's own return (docs/results/guides.json, {env_id: {condition: return}}), drawn dashed in the figures
and named in the tables, and which entry a condition uses."""

import json
import os
from typing import NamedTuple

from camel_utils.conditions import SAC


def read_guide_returns(path, given):
    """{env_id: {condition: return}} from a JSON file; {} when path is None or is the default and does not exist.
    ValueError saying what is wrong with a file that is given and missing, or not of that shape."""
    if path is None or (not given and not os.path.exists(path)):
        return {}
    try:
        with open(path) as f:
            guides = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"--guide-returns {path}: no such file") from None
    except OSError as e:
        raise ValueError(f"--guide-returns {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"--guide-returns {path}: not JSON ({e})") from None
    shape_ok = isinstance(guides, dict) and all(
        isinstance(returns, dict) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in returns.values())
        for returns in guides.values()
    )
    if not shape_ok:
        raise ValueError(f'--guide-returns {path}: expected {{env_id: {{condition: return}}}}, e.g. {{"Hopper-v4": {{"camel_tuned": 2542.1}}}}')
    return guides


def guide_entry(condition, returns):
    """The guide-returns entry a condition uses: its own, else that of the condition it varies, found by dropping
    a sac_ prefix and then trailing _words (camel_tuned for sac_camel_tuned, camel_tuned_ls25k, camel_tuned_no_ma_em;
    camel, the LLM-written guide, is its own entry); None if none."""
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


def guide_lines(guides, env_id, conditions):
    """One dashed line per guide that a shown condition uses (see guide_entry); two guides with equal returns keep
    a line each."""
    returns = guides.get(env_id, {})
    lines = {}
    for condition in conditions:
        entry = guide_entry(condition, returns)
        if entry is not None and entry not in lines:
            lines[entry] = GuideLine(entry, entry if entry in conditions else condition, float(returns[entry]))
    return list(lines.values())
