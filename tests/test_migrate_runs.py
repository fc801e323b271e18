"""scripts/migrate_runs.py: committed run files get today's condition names (from what they logged), paths relative
to the repository and, where known, their guide file's sha256; a second run changes nothing."""

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from camel_results.export import export_text

REPO = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("migrate_runs", REPO / "scripts" / "migrate_runs.py")
migrate_runs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(migrate_runs)

OLD_ROOT = "/root/old-machine/camel"


def old_record(env_id, condition, seed, learning_starts, llm_policy="None", expert_model="None", random_guide="False",
               no_ma_em=False, exp_name=None):  # fmt: skip
    """A run file as plot.py export wrote it before the migration (absolute paths of the machine that ran it)."""
    name = f"{env_id}__{condition}__{seed}"
    hyperparameters = {"exp_name": exp_name or condition, "seed": str(seed), "env_id": env_id, "total_timesteps": "100000",
                       "learning_starts": str(learning_starts), "llm_policy": llm_policy, "expert_model": expert_model,
                       "random_guide": random_guide, "masking_aware": str(not no_ma_em), "epsilon_masking": str(not no_ma_em),
                       "resume": "None", "run_name": name}  # fmt: skip
    finished = {"run_name": name, "env_id": env_id, "exp_name": exp_name or condition, "seed": seed, "total_timesteps": 100000,
                "final_eval_return": 1.0, "guide_calls": 0, "guide_failures": 0}  # fmt: skip
    return {"format": "camel-run/1", "run_name": name, "env_id": env_id, "condition": exp_name or condition, "seed": seed,
            "total_timesteps": 100000, "finished": finished, "hyperparameters": hyperparameters, "binned": {},
            "curves": {"eval/episodic_return": [[5000, 1.0], [100000, 2.0]]}}  # fmt: skip


OLD_RUNS = [  # (old condition, learning_starts, guide flags) -> new condition
    (("baseline_early", 5000, {}), "baseline"),
    (("baseline", 25000, {}), "baseline_ls25k"),
    (("camel_early", 5000, {"llm_policy": f"{OLD_ROOT}/policies/hopper.py"}), "camel_tuned"),
    (("camel", 25000, {"llm_policy": f"{OLD_ROOT}/policies/hopper.py"}), "camel_tuned_ls25k"),
    (("camel_no_ma_em", 25000, {"llm_policy": f"{OLD_ROOT}/policies/hopper.py", "no_ma_em": True}), "camel_tuned_ls25k_no_ma_em"),
    (("camel_distill", 25000, {"llm_policy": f"{OLD_ROOT}/policies/hopper.py"}), "camel_tuned_distill_ls25k"),
    (("expert", 25000, {"expert_model": f"{OLD_ROOT}/experts/Hopper-v4.cleanrl_model"}), "expert_ls25k"),
    (("random_no_ma_em", 25000, {"random_guide": "True", "no_ma_em": True}), "random_ls25k_no_ma_em"),
    (("standstill", 25000, {"llm_policy": f"{OLD_ROOT}/policies/poor/hopper_standstill.py"}), "standstill_ls25k"),
    (("lean_early", 5000, {"llm_policy": f"{OLD_ROOT}/policies/poor/hopper_lean.py"}), "lean"),
    (("sac_baseline", 5000, {}), "sac_baseline"),
    (("sac_camel", 5000, {"llm_policy": f"{OLD_ROOT}/policies/hopper.py"}), "sac_camel_tuned"),
]  # fmt: skip


@pytest.fixture
def old_runs(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    for seed in (1, 2):
        for (condition, learning_starts, flags), _ in OLD_RUNS:
            record = old_record("Hopper-v4", condition, seed, learning_starts, **flags)
            (folder / f"{record['run_name']}.json").write_text(export_text(record))
    return folder


def test_old_names_become_what_guided_the_run_and_its_settings(old_runs, capsys):
    assert migrate_runs.main([str(old_runs)]) == 0
    expected = sorted(f"Hopper-v4__{new}__{seed}.json" for _, new in OLD_RUNS for seed in (1, 2))
    assert sorted(p.name for p in old_runs.iterdir()) == expected
    for _, new in OLD_RUNS:
        record = json.loads((old_runs / f"Hopper-v4__{new}__2.json").read_text())
        name = f"Hopper-v4__{new}__2"
        assert (record["condition"], record["run_name"]) == (new, name)
        assert (record["finished"]["exp_name"], record["finished"]["run_name"]) == (new, name)
        assert (record["hyperparameters"]["exp_name"], record["hyperparameters"]["run_name"]) == (new, name)
        assert not [v for v in record["hyperparameters"].values() if v.startswith("/")]  # no machine's absolute paths
        assert record["curves"] == {"eval/episodic_return": [[5000, 1.0], [100000, 2.0]]}  # the data untouched
    out = capsys.readouterr().out
    assert "baseline -> baseline_ls25k: 2 runs" in out and "baseline_early -> baseline: 2 runs" in out
    assert "rewrote 22 run files (22 renamed), 2 already migrated" in out  # sac_baseline: nothing to change


def test_paths_become_relative_and_the_tuned_guide_points_to_its_new_home(old_runs):
    migrate_runs.main([str(old_runs)])
    camel = json.loads((old_runs / "Hopper-v4__camel_tuned_ls25k__1.json").read_text())
    assert camel["hyperparameters"]["llm_policy"] == "policies/tuned/hopper.py"
    expert = json.loads((old_runs / "Hopper-v4__expert_ls25k__1.json").read_text())
    assert expert["hyperparameters"]["expert_model"] == "experts/Hopper-v4.cleanrl_model"
    lean = json.loads((old_runs / "Hopper-v4__lean__1.json").read_text())
    assert lean["hyperparameters"]["llm_policy"] == "policies/poor/hopper_lean.py"


def test_a_camel_run_records_the_sha256_of_the_guide_bytes_it_used(old_runs):
    migrate_runs.main([str(old_runs)])
    guide_file = json.loads((old_runs / "Hopper-v4__camel_tuned__1.json").read_text())["finished"]["guide_file"]
    assert guide_file["path"] == "policies/tuned/hopper.py"
    # the original file, before the tuned guide's 3-line header: the current file without it has the same bytes
    original = "".join((REPO / "policies" / "tuned" / "hopper.py").read_text().splitlines(keepends=True)[3:])
    assert guide_file["sha256"] == hashlib.sha256(original.encode()).hexdigest()
    assert "3-line comment header" in guide_file["note"]
    lean = json.loads((old_runs / "Hopper-v4__lean__1.json").read_text())["finished"]["guide_file"]
    assert lean["sha256"] == hashlib.sha256((REPO / "policies" / "poor" / "hopper_lean.py").read_bytes()).hexdigest()
    baseline = json.loads((old_runs / "Hopper-v4__baseline__1.json").read_text())["finished"]
    assert "guide_file" not in baseline


def test_a_second_run_changes_nothing(old_runs, capsys):
    migrate_runs.main([str(old_runs)])
    before = {p.name: p.read_bytes() for p in old_runs.iterdir()}
    capsys.readouterr()
    assert migrate_runs.main([str(old_runs)]) == 0
    assert {p.name: p.read_bytes() for p in old_runs.iterdir()} == before
    assert "rewrote 0 run files (0 renamed), 24 already migrated" in capsys.readouterr().out


def test_a_run_that_records_its_guide_file_keeps_the_llm_guide_name(tmp_path):
    # a run made after the LLM-written guides replaced policies/{env}.py records its guide file: it is camel
    folder = tmp_path / "runs"
    folder.mkdir()
    record = old_record("Hopper-v4", "camel", 1, 5000, llm_policy="/home/me/camel/policies/hopper.py")
    record["finished"]["guide_file"] = {"path": "policies/hopper.py", "sha256": "0" * 64}
    (folder / "Hopper-v4__camel__1.json").write_text(export_text(record))
    assert migrate_runs.main([str(folder)]) == 0
    migrated = json.loads((folder / "Hopper-v4__camel__1.json").read_text())
    assert migrated["condition"] == "camel" and migrated["hyperparameters"]["llm_policy"] == "policies/hopper.py"
    assert migrated["finished"]["guide_file"] == {"path": "policies/hopper.py", "sha256": "0" * 64}


def test_names_that_are_not_a_guide_are_kept_and_a_name_its_settings_contradict_is_reported(tmp_path, capsys):
    folder = tmp_path / "runs"
    folder.mkdir()
    expert = old_record("Hopper-v4", "td3_expert", 1, 5000, llm_policy=f"{OLD_ROOT}/policies/hopper.py")
    wrong = old_record("Hopper-v4", "camel_early", 2, 25000, llm_policy=f"{OLD_ROOT}/policies/hopper.py")
    for record in (expert, wrong):
        (folder / f"{record['run_name']}.json").write_text(export_text(record))
    assert migrate_runs.main([str(folder)]) == 1
    assert json.loads((folder / "Hopper-v4__td3_expert__1.json").read_text())["hyperparameters"]["llm_policy"] == "policies/tuned/hopper.py"
    assert json.loads((folder / "Hopper-v4__camel_early__2.json").read_text()) == wrong  # left as it was
    assert "camel_early: named early but learned from 25000" in capsys.readouterr().err


def test_the_committed_runs_are_migrated():
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "migrate_runs.py"), "--dry-run"], cwd=REPO, capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "would rewrite 0 run files" in result.stdout


def test_the_recorded_sha256_is_that_of_the_committed_file():
    history = subprocess.run(["git", "cat-file", "-e", "2cdb6e0^{commit}"], cwd=REPO, capture_output=True)
    if history.returncode != 0:
        pytest.skip("this checkout has no git history")
    for path, (old_path, commit, sha256) in migrate_runs.KNOWN_GUIDES.items():
        content = subprocess.run(["git", "show", f"{commit}:{old_path}"], cwd=REPO, capture_output=True, check=True).stdout
        assert hashlib.sha256(content).hexdigest() == sha256, path
