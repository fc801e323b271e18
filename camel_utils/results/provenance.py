"""What a run's guide file is, from the record the run keeps of it (finished.json's guide_file: its path, relative
to the repository, and the sha256 of its bytes), so that a figure names the guide honestly:

  - "LLM-written guide": only where provenance says so: the shipped guides policies/{hopper,walker2d,ant}.py, and the
    candidates under policies/llm/ that have a provenance record (policies/llm/README.md: {stem}.json beside
    {stem}.py, naming it as its code_file, and the folder's provenance.json); in both cases only when the run's
    sha256 is that of the file at its path as committed (HEAD), since an edited copy is no longer the answer;
  - "hand-written guide (tuned)" for policies/tuned/, "hand-written poor guide (NAME)" for policies/poor/{env}_{NAME}.py;
  - any other file by its name ("guide selected.py"), and a shipped or policies/llm/ path whose bytes the run did not
    record or that differ from the committed file by its path and why.
Each kind also has a short tag (llm, tuned, poor_lean, ...) that plot.py appends to a condition's name
(camel_plus_td3@tuned) when one condition's runs had guides of more than one kind."""

import hashlib
import json
import os
import subprocess
from functools import lru_cache
from typing import NamedTuple

from camel_utils.cli import REPO

LLM_GUIDE = "LLM-written guide"
SHIPPED_LLM_GUIDES = ("policies/hopper.py", "policies/walker2d.py", "policies/ant.py")  # README: written by a language model


class GuideFile(NamedTuple):
    path: str  # as the run recorded it: relative to the repository when inside it
    sha256: str | None  # None for a run that recorded no sha256 (unfinished, or made before runs recorded it)


class GuideKind(NamedTuple):
    tag: str  # short, for a name: llm, tuned, poor_lean, or the file's stem
    label: str  # in figures and tables


@lru_cache(maxsize=None)
def committed_sha256(path, repo=REPO):
    """The sha256 of the file at `path` as committed (HEAD of the repository), or None where git has no such file."""
    try:
        shown = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=repo, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return hashlib.sha256(shown.stdout).hexdigest() if shown.returncode == 0 else None


def has_provenance_record(path, repo=REPO):
    """Whether policies/llm/{env}/{stem}.py has the record generate_policy.py keeps of an answer: {stem}.json naming
    it as its code_file, and the folder's provenance.json."""
    folder, name = os.path.split(path)
    record = os.path.join(repo, folder, os.path.splitext(name)[0] + ".json")
    if not os.path.exists(os.path.join(repo, folder, "provenance.json")):
        return False
    try:
        with open(record) as f:
            return json.load(f).get("code_file") == name
    except (OSError, ValueError, AttributeError):
        return False


def guide_kind(guide, repo=REPO):
    """The kind of a recorded guide file (GuideFile): its tag and its label (see the module's docstring)."""
    path = os.path.normpath(guide.path).replace(os.sep, "/")
    folder, name = os.path.split(path)
    stem = os.path.splitext(name)[0]
    llm_path = path in SHIPPED_LLM_GUIDES or (folder.startswith("policies/llm/") and has_provenance_record(path, repo))
    if llm_path:
        if guide.sha256 is not None and guide.sha256 == committed_sha256(path, repo):
            return GuideKind("llm", LLM_GUIDE)
        why = "sha256 not recorded" if guide.sha256 is None else "not the committed file"
        return GuideKind(f"{stem}_{(guide.sha256 or 'unknown')[:8]}", f"guide {path} ({why})")
    if folder == "policies/tuned":
        return GuideKind("tuned", "hand-written guide (tuned)")
    if folder == "policies/poor":
        poor = stem.split("_", 1)[-1]  # hopper_lean: lean
        return GuideKind(f"poor_{poor}", f"hand-written poor guide ({poor})")
    return GuideKind(stem, f"guide {name}")
