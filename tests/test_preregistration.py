"""docs/preregistration.md registers each experiment before its runs: every committed run of a registered experiment
(docs/results/experiments/<experiment>/) is one of its registered runs, made with the registered env, method, seed, steps
and guide file and, once finished, at the registered commit by the registered trainer, and was committed after the
entry that registered it; the queue reads the entries into runs in the registered order."""

import json

import pytest

from camel_utils.cli import UsageError
from camel_utils.preregistration import (EXPORTS, METHOD_NAMES, TRAINERS, PlannedRun, first_commit_of, is_ancestor, planned_runs,
                                         record_problems, registered_experiments, registration_commit, unfinished_runs)  # fmt: skip

EXPERIMENTS = registered_experiments()


def committed_runs(experiment):
    """(path, record) of every exported run of the experiment that git tracks."""
    folder = EXPORTS / experiment["id"]
    return [(path, json.loads(path.read_text())) for path in sorted(folder.glob("*.json")) if first_commit_of(path)]


def test_the_registered_experiments_are_l100_and_b1m_with_the_runs_their_issues_ask_for():
    runs = {experiment["id"]: planned_runs(experiment) for experiment in EXPERIMENTS}
    assert len(runs["L100"]) == 57 and len(runs["B1M"]) == 27
    # B1M: seed 21 of every method and env before any seed 22
    first_nine = runs["B1M"][:9]
    assert {run.seed for run in first_nine} == {21} and len({(run.env_id, run.method) for run in first_nine}) == 9
    assert sorted({run.seed for run in runs["L100"] if run.guide and "poor" in run.guide}) == [24, 25, 26]
    assert len({run.name for experiment in runs.values() for run in experiment}) == 84  # no two runs share a folder


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e["id"])
def test_each_committed_run_was_registered_made_as_registered_and_committed_after_its_entry(experiment):
    registered = registration_commit(experiment["id"])
    assert registered is not None, f"{experiment['id']} is in docs/preregistration.md but not committed"
    assert is_ancestor(experiment["commit"], registered), "the registered code must exist when the entry is committed"
    planned = {run.name: run for run in planned_runs(experiment)}
    for path, record in committed_runs(experiment):
        assert path.stem in planned, f"{path.name} is not a run of {experiment['id']}"
        assert record_problems(planned[path.stem], record) == [], path.name
        added = first_commit_of(path)
        assert added != registered and is_ancestor(registered, added), f"{path.name} was committed before its registration"


def a_run(**changes):
    run = dict(experiment="X", commit="a" * 40, method="camel_plus_td3", env_id="Hopper-v4", guide="policies/hopper.py", seed=24,
               total_timesteps=100000, flags=())  # fmt: skip
    return PlannedRun(**{**run, **changes})


def a_record(commit="a" * 40, **settings):
    hyperparameters = {"env_id": "Hopper-v4", "exp_name": "camel_plus_td3", "seed": "24", "total_timesteps": "100000",
                       "llm_policy": "policies/hopper.py", **settings}  # fmt: skip
    finished = {"commit": commit, "script": "camel_plus_td3.py", "method": "CAMEL+"}
    return {"hyperparameters": hyperparameters, "finished": finished}


def test_a_run_made_otherwise_than_registered_is_named_with_what_differs():
    assert record_problems(a_run(), a_record()) == []
    assert record_problems(a_run(), a_record(commit="b" * 40)) == [f"made at commit {'b' * 40}, registered {'a' * 40}"]
    assert record_problems(a_run(), a_record(seed="25")) == ["seed '25', registered '24'"]
    assert record_problems(a_run(), a_record(llm_policy="policies/tuned/hopper.py")) == [
        "llm_policy 'policies/tuned/hopper.py', registered 'policies/hopper.py'"]
    unfinished = {**a_record(commit="b" * 40), "finished": None}  # a run under way names no commit yet: its settings count
    assert record_problems(a_run(), unfinished) == []
    td3 = a_run(method="td3", guide=None)
    assert record_problems(td3, a_record(exp_name="td3", llm_policy="None")) == ["made by camel_plus_td3.py (CAMEL+), registered camel_td3.py"]


def test_run_names_carry_the_guide_only_when_it_is_not_the_shipped_one():
    assert a_run().name == "Hopper-v4__camel_plus_td3__24"
    assert a_run(guide="policies/poor/hopper_lean.py").name == "Hopper-v4__camel_plus_td3_hopper_lean__24"
    assert a_run(method="td3", guide=None, seed=21).name == "Hopper-v4__td3__21"


def test_an_entry_without_a_commit_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as refused:
        registered_experiments('```json\n{"id": "Y", "total_timesteps": 1, "groups": []}\n```\n')
    assert refused.value.code == 2 and "experiment Y has no 'commit'" in capsys.readouterr().err


def test_an_experiment_waits_for_each_registered_run_that_has_no_finished_export(tmp_path):
    l100 = planned_runs(next(e for e in EXPERIMENTS if e["id"] == "L100"))
    assert unfinished_runs("L100", exports=tmp_path) == l100  # nothing exported: all 57
    folder = tmp_path / "L100"
    folder.mkdir()

    def export(run, **finished):  # the record the queue exports for a run, finished.json as its trainer writes it
        settings = {"env_id": run.env_id, "exp_name": run.method, "seed": str(run.seed), "total_timesteps": str(run.total_timesteps),
                    "llm_policy": run.guide or "None"}  # fmt: skip
        done = {"commit": run.commit, "script": TRAINERS[run.method], "method": METHOD_NAMES[run.method], **finished}
        (folder / f"{run.name}.json").write_text(json.dumps({"hyperparameters": settings, "finished": done}))

    export(l100[0])
    export(l100[1], commit="0" * 40)  # finished at another commit: not the registered run
    (folder / f"{l100[2].name}.json").write_text(json.dumps({"finished": None}))  # under way: its curve so far
    assert unfinished_runs("L100", exports=tmp_path) == l100[1:]
    with pytest.raises(UsageError, match="L200 is not an experiment of preregistration.md"):
        unfinished_runs("L200", exports=tmp_path)
