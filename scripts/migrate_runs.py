"""Bring committed run files (plot.py's exports, camel-run/1) to today's condition names and to paths relative to
the repository: a migration of the data, not new runs. Running it again changes nothing.

    python scripts/migrate_runs.py                  # docs/results/runs and docs/results/expert_training
    python scripts/migrate_runs.py FOLDER... --dry-run

For each run file:
  - Its condition is rebuilt by camel_conditions' rule, [sac_]{guide}[_{variant}][_ls{N}k][_no_ma_em], from what
    the run logged: the guide from --llm-policy/--expert-model/--random-guide, _ls{N}k from --learning-starts,
    _no_ma_em from --no-masking-aware --no-epsilon-masking; the variant is what its old name adds to its guide
    (distill, fullactor, fulltarget), without `early` (learning from 5k, the default now). A run of the default
    guide file policies/{env}.py that did not record its guide file (finished.guide_file) was made before the
    LLM-written guides: its guide was the hand-written, tuned one, now policies/tuned/{env}.py, so it is camel_tuned.
    A name that does not begin with its guide (td3_expert, the experts' own runs) is kept.
  - The new name replaces the old one everywhere it is held: the file name, run_name, condition, finished.run_name
    and finished.exp_name, hyperparameters.exp_name and hyperparameters.run_name.
  - Each hyperparameter that is an absolute path becomes relative to the repository, from its first folder that
    is one of the repository's (policies/, experts/): /root/x/policies/hopper.py -> policies/hopper.py; a tuned
    guide's path becomes its home now, policies/tuned/{env}.py.
  - A CAMEL run that does not record its guide file gets finished.guide_file = {path, sha256, note} where the
    content it used is known (KNOWN_GUIDES: the only version of that file in the history before and during the
    committed runs); other runs are reported, not guessed.
It writes each file as plot.py export does (camel_results.export.export_text).
"""

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from camel_conditions import NO_MA_EM, SAC, learning_starts_suffix, split  # noqa: E402
from camel_results.export import export_text  # noqa: E402
from camel_results.runs import EXPORT_FORMAT  # noqa: E402

DEFAULT_FOLDERS = ("docs/results/runs", "docs/results/expert_training")
REPO_FOLDERS = ("policies", "experts")  # where the repository keeps the files runs name
TUNED_HEADER = ("policies/tuned/{env}.py is that file under a 3-line comment header added since (commit b703ca3), so "
                "its own sha256 differs")  # fmt: skip
# sha256 of the bytes each committed CAMEL run used: `git show COMMIT:OLD_PATH | sha256sum`, COMMIT being the only
# version of the file in the history before and while the committed runs were made (2026-11-22 to 2026-11-23).
KNOWN_GUIDES = {
    "policies/tuned/hopper.py": ("policies/hopper.py", "2cdb6e0", "535b6c4b28eea2fa2580e28de2655d9b967218f5ea673f53e5586b6c44d24ee9"),
    "policies/tuned/walker2d.py": ("policies/walker2d.py", "2cdb6e0", "0e09e2fa532d1736e4944e8b967506f9f6f284a638bfb6806d2305d9760ef4a5"),
    "policies/tuned/ant.py": ("policies/ant.py", "2cdb6e0", "16d36f5b7a08731c7ee55ec25f6c3e9c79779648595c424bb27d8861b34000d4"),
    "policies/poor/hopper_lean.py": ("policies/poor/hopper_lean.py", "f1b9a9f", "cc4c8f6d06bba81439a635d1c7364762241e20154e9db5a416572b0439c7a1bc"),
    "policies/poor/hopper_standstill.py": ("policies/poor/hopper_standstill.py", "f1b9a9f", "7353a2138e9b8049480c120157c9fd0ba26847d89a29e68e298a9d6f96ac8a12"),
    "policies/poor/walker2d_lean.py": ("policies/poor/walker2d_lean.py", "f1b9a9f", "71941bd9b966ef2f703d158631561aeaf4539f3951221aa9a2802f8136415f27"),
    "policies/poor/walker2d_standstill.py": ("policies/poor/walker2d_standstill.py", "f1b9a9f", "81491a8252a5b4508bab62e8c23c11672723c1f14446fcd0fd72f1f9292476e7"),
}  # fmt: skip


class MigrationError(Exception):
    """A run whose name and logged settings disagree: left as it is, and reported."""


def given(value):
    return value not in (None, "", "None")


def relative_path(value):
    """An absolute path as a path relative to the repository, from its first folder that is one of the
    repository's (REPO_FOLDERS); any other value unchanged."""
    if not isinstance(value, str) or not value.startswith("/"):
        return value
    parts = Path(value).parts
    for i, part in enumerate(parts):
        if part in REPO_FOLDERS:
            return "/".join(parts[i:])
    return value


def guide_of(hyperparameters, records_guide_file):
    """(guide, its file relative to the repository or None): what guided the run, from what it logged."""
    if hyperparameters.get("random_guide") == "True":
        return "random", None
    if given(hyperparameters.get("expert_model")):
        return "expert", None
    policy = relative_path(hyperparameters.get("llm_policy"))
    if not given(policy):
        return "baseline", None
    if re.fullmatch(r"policies/tuned/\w+\.py", policy):
        return "camel_tuned", policy
    poor = re.fullmatch(r"policies/poor/[a-z0-9]+_(\w+)\.py", policy)
    if poor:
        return poor[1], policy
    default = re.fullmatch(r"policies/(\w+)\.py", policy)
    if default and not records_guide_file:  # made before the LLM-written guides: the tuned guide
        return "camel_tuned", f"policies/tuned/{default[1]}.py"
    return None, policy  # a guide of its own: its name stays


def new_condition(condition, hyperparameters, records_guide_file):
    """The condition's name by today's rule, or the name unchanged when it does not begin with its guide."""
    guide, _ = guide_of(hyperparameters, records_guide_file)
    prefix = SAC if condition.startswith(SAC) else ""
    stem, _, named_no_ma_em = split(condition[len(prefix) :])
    no_ma_em = hyperparameters.get("masking_aware") == "False" and hyperparameters.get("epsilon_masking") == "False"
    aliases = [g for g in (guide, "camel" if guide == "camel_tuned" else None) if g]
    old_guide = next((g for g in aliases if stem == g or stem.startswith(g + "_")), None)
    if old_guide is None:
        return condition
    if named_no_ma_em != no_ma_em:
        raise MigrationError(f"{condition}: the name says {'' if named_no_ma_em else 'not '}{NO_MA_EM[1:]}, its settings the opposite")
    if "learning_starts" not in hyperparameters:
        raise MigrationError(f"{condition}: no learning_starts logged, so its name cannot say it")
    learning_starts = int(hyperparameters["learning_starts"])
    words = [w for w in stem[len(old_guide) :].split("_") if w]
    if "early" in words and learning_starts != 5000:
        raise MigrationError(f"{condition}: named early but learned from {learning_starts}")
    variant = "".join(f"_{w}" for w in words if w != "early")
    return f"{prefix}{guide}{variant}{learning_starts_suffix(learning_starts)}{NO_MA_EM if no_ma_em else ''}"


def migrate(record):
    """The record under today's name with repository-relative paths and, where known, its guide file (a new dict;
    the same content when it is migrated already)."""
    record = json.loads(json.dumps(record))
    finished, hyperparameters = record["finished"], record["hyperparameters"]
    records_guide_file = "guide_file" in finished
    _, guide_path = guide_of(hyperparameters, records_guide_file)
    condition = new_condition(record["condition"], hyperparameters, records_guide_file)
    run_name = f"{record['env_id']}__{condition}__{record['seed']}"
    record["condition"], record["run_name"] = condition, run_name
    for fields in (finished, hyperparameters):  # each holds the name where it logged it
        fields.update({key: value for key, value in (("exp_name", condition), ("run_name", run_name)) if key in fields})
    for name, value in hyperparameters.items():
        hyperparameters[name] = relative_path(value)
    if guide_path is not None:
        hyperparameters["llm_policy"] = guide_path
    if guide_path in KNOWN_GUIDES and not records_guide_file:
        old_path, commit, sha256 = KNOWN_GUIDES[guide_path]
        note = f"sha256 of {old_path} as committed in {commit}, the only version of it before and during these runs"
        if old_path != guide_path:
            note += "; " + TUNED_HEADER.format(env=Path(guide_path).stem)
        finished["guide_file"] = {"path": guide_path, "sha256": sha256, "note": note}
    return record


def run_files(folder):
    for path in sorted(Path(folder).rglob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(record, dict) and record.get("format") == EXPORT_FORMAT:
            yield path, record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", default=[str(REPO / f) for f in DEFAULT_FOLDERS], help="folders of run files")
    parser.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    args = parser.parse_args(argv)
    changes, problems, unchanged = [], [], 0  # (path, old record, new record, its new path)
    for folder in args.folders:
        for path, record in run_files(folder):
            try:
                new = migrate(record)
            except MigrationError as e:
                problems.append(f"{path}: {e}")
                continue
            target = path.with_name(f"{new['run_name']}.json") if path.stem == record["run_name"] else path
            if new == record and target == path:
                unchanged += 1
            else:
                changes.append((path, record, new, target))
    # every file is read before any is written: a new name may be an old name of another run (baseline_early -> baseline)
    leaving = {path for path, _, _, target in changes if target != path}
    clashes = [(path, target) for path, _, _, target in changes if target != path and target.exists() and target not in leaving]
    clashes += [(path, target) for i, (path, _, _, target) in enumerate(changes) if target in [t for *_, t in changes[:i]]]
    for path, target in clashes:
        problems.append(f"{path}: not renamed: {target.name} would be two runs")
    changes = [change for change in changes if (change[0], change[3]) not in clashes]
    renamed = {}
    for path, record, new, target in changes:
        if record["condition"] != new["condition"]:
            renamed.setdefault((record["condition"], new["condition"]), []).append(path.name)
    if not args.dry_run:
        for path, _, new, target in changes:
            target.with_suffix(".json.tmp").write_text(export_text(new))
        for path, _, _, target in changes:
            if target != path:
                path.unlink()
        for _, _, _, target in changes:
            target.with_suffix(".json.tmp").replace(target)
    rewritten = len(changes)
    for (old, new), paths in sorted(renamed.items()):
        print(f"{old} -> {new}: {len(paths)} runs")
    print(f"{'would rewrite' if args.dry_run else 'rewrote'} {rewritten} run files ({sum(map(len, renamed.values()))} renamed), "
          f"{unchanged} already migrated")  # fmt: skip
    for problem in problems:
        print(f"left as it is: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
