"""The registered experiments of docs/preregistration.md: each entry's ```json block read into its runs, and a run's
record checked against its registration. scripts/queue.py runs them; tests/test_preregistration.py checks what was
committed. Standard library only."""

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from camel_utils.cli import REPO, UsageError

PREREGISTRATION = REPO / "docs" / "preregistration.md"
EXPORTS = REPO / "docs" / "results" / "experiments"  # docs/results/experiments/<experiment>/<run>.json, exported as runs grow (docs/results/runs/ holds the runs made before registration)
TRAINERS = {"td3": "camel_td3.py", "camel_td3": "camel_td3.py", "camel_plus_td3": "camel_plus_td3.py"}  # method -> script
METHOD_NAMES = {"td3": "TD3", "camel_td3": "the paper's CAMEL", "camel_plus_td3": "CAMEL+"}  # as finished.json says
JSON_BLOCK = re.compile(r"```json\n(.*?)\n```", re.S)


@dataclass(frozen=True)
class PlannedRun:
    experiment: str
    commit: str
    method: str  # td3, camel_td3 or camel_plus_td3: the exp_name its runs get
    env_id: str
    guide: str | None  # the guide file, relative to the repository; None for td3
    seed: int
    total_timesteps: int
    flags: tuple

    @property
    def name(self):
        """The run folder's name, as run_name gives it (the guide named by its file's stem unless it is the shipped one)."""
        shipped = self.guide is None or self.guide == shipped_guide(self.env_id)
        return run_name(self.env_id, self.method, self.seed, "" if shipped else Path(self.guide).stem)

    def command(self, python, code):
        """The trainer's command line for a new run, the trainer taken from the folder `code` (a worktree)."""
        guide = ["--llm-policy", self.guide] if self.guide else []
        return [python, str(Path(code) / TRAINERS[self.method]), "--env-id", self.env_id, "--seed", str(self.seed), *guide,
                "--total-timesteps", str(self.total_timesteps), "--exp-name", self.method, "--run-name", self.name,
                "--torch-threads", "1", *self.flags]  # fmt: skip


def shipped_guide(env_id):
    """The LLM-written guide the project ships for an env: policies/hopper.py for Hopper-v4 (relative to the repository)."""
    return f"policies/{env_id.split('-')[0].lower()}.py"


def run_name(env_id, method, seed, guide=""):
    """A run folder's name, as the queue and scripts/sweep.py give it: {env}__{method}__{seed}, with the guide's name
    after the method where it is not the env's shipped guide (Hopper-v4__camel_plus_td3_hopper_lean__24), so that runs
    of different methods or guide files never share a folder."""
    return f"{env_id}__{method}{'_' + guide if guide else ''}__{seed}"


def registered_experiments(text=None):
    """[experiment dict] from the ```json blocks of docs/preregistration.md (or `text`), in the document's order."""
    text = PREREGISTRATION.read_text() if text is None else text
    experiments = []
    for block in JSON_BLOCK.findall(text):
        try:
            experiment = json.loads(block)
        except json.JSONDecodeError as e:
            raise UsageError(f"{PREREGISTRATION.name}: a json block does not parse ({e})")
        missing = [key for key in ("id", "commit", "total_timesteps", "groups") if key not in experiment]
        if missing:
            raise UsageError(f"{PREREGISTRATION.name}: experiment {experiment.get('id', '?')} has no {missing[0]!r}")
        experiments.append(experiment)
    return experiments


def planned_runs(experiment):
    """The experiment's runs in the order the queue takes them: group by group; in a group, seed by seed, then env by
    env, then method by method (so every method and env has its first seed before any has its second)."""
    runs = []
    for group in experiment["groups"]:
        for seed in group["seeds"]:
            for env_id in group["envs"]:
                for method in group["methods"]:
                    if method not in TRAINERS:
                        raise UsageError(f"experiment {experiment['id']}: unknown method {method} (one of {', '.join(TRAINERS)})")
                    guide = None if method == "td3" else group.get("guides", {}).get(env_id, shipped_guide(env_id))
                    runs.append(PlannedRun(experiment["id"], experiment["commit"], method, env_id, guide, seed,
                                           experiment["total_timesteps"], tuple(experiment.get("flags", ()))))  # fmt: skip
    return runs


def unfinished_runs(experiment_id, exports=EXPORTS):
    """The registered runs of an experiment whose exported file (docs/results/experiments/<id>/<run>.json) is not
    there yet, not finished, or not the registered run (record_problems): the runs its results wait for."""
    experiment = next((e for e in registered_experiments() if e["id"] == experiment_id), None)
    if experiment is None:
        raise UsageError(f"{experiment_id} is not an experiment of {PREREGISTRATION.name}")
    left = []
    for run in planned_runs(experiment):
        path = Path(exports) / experiment_id / f"{run.name}.json"
        record = json.loads(path.read_text()) if path.exists() else {}
        if not record.get("finished") or record_problems(run, record):
            left.append(run)
    return left


def record_problems(run, record):
    """What in an exported run record (camel-run/1, finished or not) disagrees with its registered run: the env,
    method, seed, steps and guide file it ran, and, once finished, the script, method and commit that made it."""
    settings, finished = record.get("hyperparameters") or {}, record.get("finished")
    expected = {"env_id": run.env_id, "exp_name": run.method, "seed": str(run.seed),
                "total_timesteps": str(run.total_timesteps), "llm_policy": run.guide or "None"}  # fmt: skip
    problems = [f"{name} {settings.get(name)!r}, registered {value!r}" for name, value in expected.items() if settings.get(name) != value]
    if finished:
        if finished.get("commit") != run.commit:
            problems.append(f"made at commit {finished.get('commit')}, registered {run.commit}")
        if finished.get("script") != TRAINERS[run.method] or finished.get("method") != METHOD_NAMES[run.method]:
            problems.append(f"made by {finished.get('script')} ({finished.get('method')}), registered {TRAINERS[run.method]}")
    return problems


def git(*args):
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


def registration_commit(experiment_id):
    """The commit that first registered the experiment (added its id to docs/preregistration.md), or None."""
    found = git("log", "--reverse", "--format=%H", "-S", f'"id": "{experiment_id}"', "--", str(PREREGISTRATION.relative_to(REPO)))
    lines = found.stdout.split()
    return lines[0] if lines else None


def first_commit_of(path):
    """The commit that added a file, or None while it is not committed."""
    found = git("log", "--diff-filter=A", "--format=%H", "--", str(Path(path).relative_to(REPO)))
    lines = found.stdout.split()
    return lines[-1] if lines else None


def is_ancestor(older, newer):
    return git("merge-base", "--is-ancestor", older, newer).returncode == 0
