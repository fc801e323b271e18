"""Uploading a trained agent to the Hugging Face Hub (camel_utils/hub.py, the trainers' --upload-model): what the Hub
receives (the model byte for byte, a model card that names the env, the method and script from finished.json, the
guide's sha256 and the return under YAML front matter the Hub reads, the scalars, the arguments), refusing a bad repo
id before training or a model camel_utils/agent.py cannot load, and a failed upload that keeps the run and says how
to retry. The Hub is tests/fake_hub.py on 127.0.0.1; the real one is never asked."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
import torch
import yaml
from torch.utils.tensorboard import SummaryWriter

from camel_utils.conditions import CAMEL_PLUS
from test_camel_td3 import printed_path
from camel_utils.hub import algorithm_name, method_lines, trainer_and_method
from camel_plus_td3 import Actor, QNetwork
from fake_hub import FakeHub, hub_env
from script_process import run_script

REPO = Path(__file__).resolve().parents[1]
REPO_ID = "someone/Hopper-v4-camel_plus_td3-seed1"
GUIDE_SHA = "ab" * 32


def finished_run(folder, final_return=1234.5):
    """A finished camel_plus_td3.py run folder as the trainer leaves it: finished.json (naming the script and the
    method), the TensorBoard events (the hyperparameters table and an evaluation curve) and the model in CleanRL's
    format (a masking-aware actor)."""
    folder.mkdir(parents=True)
    args = {"exp_name": "camel_plus_td3", "seed": 1, "env_id": "Hopper-v4", "total_timesteps": 10000, "learning_rate": 0.0003,
            "learning_starts": 5000, "policy_noise": 0.2, "llm_policy": "policies/hopper.py", "expert_model": None,
            "random_guide": False, "mask_width": 0.6, "epsilon_fraction": 0.5, "masking_aware": True,
            "epsilon_masking": True, "guide_bc_coef": 0.4, "warmup_actions": "guide", "critic_updates_per_step": 2,
            "eval_episodes": 5}  # fmt: skip
    writer = SummaryWriter(str(folder))
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n%s" % "\n".join(f"|{k}|{v}|" for k, v in args.items()))
    for step, value in [(5000, 300.0), (10000, final_return)]:
        writer.add_scalar("eval/episodic_return", value, step)
    writer.close()
    (folder / "finished.json").write_text(json.dumps({
        "run_name": folder.name, "script": "camel_plus_td3.py", "method": "CAMEL+", "commit": "d01680c", "env_id": "Hopper-v4",
        "exp_name": "camel_plus_td3", "seed": 1, "total_timesteps": 10000,
        "final_eval_return": final_return, "guide_calls": 10, "guide_failures": 0,
        "guide_file": {"path": "policies/hopper.py", "sha256": GUIDE_SHA}}))  # fmt: skip
    env = gym.make("Hopper-v4")
    torch.save((Actor(env).state_dict(), QNetwork(env).state_dict(), QNetwork(env).state_dict()), folder / "camel_plus_td3.cleanrl_model")
    return folder


def hub_cli(cwd, *flags, env):
    """python -m camel_utils.hub, run from another folder than the repository, as its printed commands say."""
    env = {**env, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "camel_utils.hub", *flags], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def front_matter(card):
    """The YAML between the card's opening --- lines, parsed."""
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


@pytest.fixture
def hub():
    server = FakeHub()
    yield server
    server.close()


def refused_endpoint():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_upload_sends_the_model_a_model_card_the_scalars_and_the_arguments(tmp_path, hub):
    run = finished_run(tmp_path / "runs" / "r1")
    result = hub_cli(tmp_path, "upload", "runs/r1", "--repo-id", REPO_ID, env=hub_env(os.environ, tmp_path, hub.url))
    assert result.returncode == 0, result.stderr
    assert f"uploaded to {hub.url}/{REPO_ID}" in result.stdout
    assert hub.repos == [{"name": "Hopper-v4-camel_plus_td3-seed1", "organization": "someone"}]
    assert set(hub.authorization) == {"Bearer hf_fake_token"}  # HF_TOKEN, as huggingface_hub reads it
    files = hub.files[REPO_ID]
    assert files["camel_plus_td3.cleanrl_model"] == (run / "camel_plus_td3.cleanrl_model").read_bytes()
    (events,) = run.glob("events.out.tfevents.*")
    assert files[events.name] == events.read_bytes()

    card = files["README.md"].decode()
    meta = front_matter(card)
    assert meta["library_name"] == "cleanrl"
    assert {"reinforcement-learning", "deep-reinforcement-learning", "Hopper-v4"} <= set(meta["tags"])
    (model,) = meta["model-index"]
    assert model["name"] == "CAMEL+"  # finished.json's method
    (result_,) = model["results"]
    assert result_["task"]["type"] == "reinforcement-learning" and result_["dataset"]["name"] == "Hopper-v4"
    assert result_["metrics"][0]["type"] == "mean_reward" and result_["metrics"][0]["value"] == 1234.5
    assert "policies/hopper.py" in card and GUIDE_SHA in card and "1234.50" in card
    assert "\n# CAMEL+ on Hopper-v4\n" in card and f"- algorithm: CAMEL+, trained by `camel_plus_td3.py`\n- {CAMEL_PLUS}\n" in card
    assert "--paper" not in card
    # evaluated from the start states of the run's evaluations (seed 1: 100001, ...), it gives the return above
    assert (f"python evaluate_policy.py --env-id Hopper-v4 agents/{REPO_ID}/camel_plus_td3.cleanrl_model --seed 100001 "
            "--episodes 5") in card  # fmt: skip
    assert f'policy = load_agent("agents/{REPO_ID}/camel_plus_td3.cleanrl_model")' in card and f"--expert-model {REPO_ID}" in card
    assert "Its actor is masking-aware" in card  # as the loaded agent says: 11 observations + 6 bounds

    scalars = json.loads(files["r1.json"])  # what `python plot.py export` writes, which plot.py reads back
    assert scalars["format"] == "camel-run/1" and scalars["curves"]["eval/episodic_return"] == [[5000, 300.0], [10000, 1234.5]]
    arguments = json.loads(files["args.json"])
    assert arguments["llm_policy"] == "policies/hopper.py" and arguments["learning_rate"] == 0.0003 and arguments["masking_aware"] is True


@pytest.mark.parametrize("failure", ["server error", "refused"])
def test_a_failed_upload_leaves_the_run_as_it_was_and_says_so(tmp_path, failure):
    run = finished_run(tmp_path / "runs" / "r1")
    before = {path.name: path.read_bytes() for path in run.iterdir()}
    down = FakeHub(status=500) if failure == "server error" else None
    try:
        endpoint = down.url if down else refused_endpoint()
        result = hub_cli(tmp_path, "upload", "runs/r1", "--repo-id", REPO_ID, env=hub_env(os.environ, tmp_path, endpoint))
    finally:
        if down:
            down.close()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: the upload to {REPO_ID} failed (") and ("500" in line or "refused" in line)
    assert {path.name: path.read_bytes() for path in run.iterdir()} == before


@pytest.mark.parametrize(
    "repo_id, token, message",
    [("Hopper-v4-camel_qbc_gwarm-seed1", "t", "is not a Hugging Face repo id"), ("a/b/c", "t", "is not a Hugging Face repo id"),
     ("runs/model.cleanrl_model", "t", "is not a Hugging Face repo id"), (REPO_ID, None, "needs a Hugging Face token")],
)  # fmt: skip
def test_upload_refuses_a_bad_repo_id_or_a_missing_token_with_one_line(tmp_path, repo_id, token, message):
    finished_run(tmp_path / "runs" / "r1")
    result = hub_cli(tmp_path, "upload", "runs/r1", "--repo-id", repo_id, env=hub_env(os.environ, tmp_path, refused_endpoint(), token=token))
    assert result.returncode == 2
    assert [line for line in result.stderr.splitlines() if line.startswith("error:")] == [result.stderr.strip()]
    assert message in result.stderr


def test_upload_of_a_run_without_a_model_or_unfinished_says_what_is_missing(tmp_path, hub):
    run = finished_run(tmp_path / "runs" / "r1")
    (run / "camel_plus_td3.cleanrl_model").write_bytes(b"half a model")  # what camel_utils/agent.py cannot load
    result = hub_cli(tmp_path, "upload", "runs/r1", "--repo-id", REPO_ID, env=hub_env(os.environ, tmp_path, hub.url))
    assert result.returncode == 2 and result.stderr.startswith("error: runs/r1/camel_plus_td3.cleanrl_model: not a CleanRL-format model (")
    (run / "camel_plus_td3.cleanrl_model").unlink()
    result = hub_cli(tmp_path, "upload", "runs/r1", "--repo-id", REPO_ID, env=hub_env(os.environ, tmp_path, hub.url))
    assert result.returncode == 2 and "has no camel_plus_td3.cleanrl_model: the run was made with --no-save-model" in result.stderr
    (run / "finished.json").unlink()
    result = hub_cli(tmp_path, "upload", "runs/r1", "--repo-id", REPO_ID, env=hub_env(os.environ, tmp_path, hub.url))
    assert result.returncode == 2 and "holds no finished run" in result.stderr
    assert hub.repos == [] and hub.files == {}  # the Hub was never asked


@pytest.mark.parametrize(
    "method, args, name",
    [("CAMEL+", {"llm_policy": "g.py"}, "CAMEL+"), ("CAMEL-SAC", {"llm_policy": "g.py", "autotune": True}, "CAMEL-SAC"),
     ("the paper's CAMEL", {"llm_policy": "g.py", "masking_aware": False, "epsilon_masking": False}, "the paper's CAMEL w/o MA EM"),
     ("the paper's CAMEL", {"expert_model": "x/y"}, "the paper's CAMEL with expert masking"),
     ("CAMEL-SAC", {"random_guide": True, "autotune": True}, "CAMEL-SAC with random masking"),
     ("TD3", {"llm_policy": None, "expert_model": None, "random_guide": False, "masking_aware": False}, "TD3")],
)  # fmt: skip
def test_the_card_names_the_method_and_the_papers_controls_by_their_guide(method, args, name):
    assert algorithm_name(method, args) == name


# --- the trainers' --upload-model ----------------------------------------------------------------------------------

TINY = ["--total-timesteps", "300", "--learning-starts", "100", "--batch-size", "32", "--eval-frequency", "300",
        "--eval-episodes", "1", "--checkpoint-frequency", "0", "--torch-threads", "1"]  # fmt: skip


def trainer(cwd, script, *flags, env):
    return run_script(REPO / script, *flags, cwd=cwd, env={**env, "OMP_NUM_THREADS": "1"})


def test_a_run_with_upload_model_puts_its_agent_on_the_hub_where_expert_model_finds_it(tmp_path, hub):
    env = hub_env(os.environ, tmp_path, hub.url)
    (tmp_path / "guide.py").write_text("import numpy as np\n\ndef policy(obs):\n    return np.tanh(np.asarray(obs)[2:5])\n")
    result = trainer(tmp_path, "camel_plus_td3.py", "--llm-policy", "guide.py", "--run-name", "r", "--upload-model", "someone/my-hopper", *TINY,
                     env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"uploaded to {hub.url}/someone/my-hopper" in result.stdout
    run = tmp_path / "runs" / "r"
    finished = json.loads((run / "finished.json").read_text())
    files = hub.files["someone/my-hopper"]
    assert files["camel_plus_td3.cleanrl_model"] == (run / "camel_plus_td3.cleanrl_model").read_bytes()  # named by its script
    card = files["README.md"].decode()
    assert front_matter(card)["model-index"][0]["results"][0]["metrics"][0]["value"] == round(finished["final_eval_return"], 2)
    assert finished["guide_file"]["sha256"] in card and f"{finished['final_eval_return']:.2f}" in card
    assert finished["script"] == "camel_plus_td3.py" and finished["method"] == "CAMEL+"
    assert f"- algorithm: CAMEL+, trained by `camel_plus_td3.py`\n- {CAMEL_PLUS}\n" in card
    assert json.loads(files["args.json"])["upload_model"] == "someone/my-hopper"

    # the card's "use it as an expert guide": a repo not named as CleanRL names its models is looked up
    result = trainer(tmp_path, "camel_td3.py", "--expert-model", "someone/my-hopper", "--run-name", "guided", "--no-save-model", *TINY, env=env)
    assert result.returncode == 0, result.stderr
    assert ("GET", "camel_plus_td3.cleanrl_model") in hub.downloads
    assert not list((tmp_path / "runs" / "guided").glob("*.cleanrl_model"))  # --no-save-model


def test_a_failed_upload_at_the_end_of_a_run_keeps_the_run_and_gives_the_command_that_retries(tmp_path):
    down = FakeHub(status=500)
    try:
        result = trainer(tmp_path, "camel_sac.py", "--env-id", "Pendulum-v1", "--run-name", "r", "--upload-model", REPO_ID, *TINY,
                         env=hub_env(os.environ, tmp_path, down.url))  # fmt: skip
    finally:
        down.close()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    # run from another folder than the repository, as a user may: the command says where the repository is
    retry = f"PYTHONPATH={printed_path(REPO, tmp_path)} python -m camel_utils.hub upload runs/r --repo-id {REPO_ID}"
    assert line.startswith(f"error: the upload to {REPO_ID} failed (") and "500" in line
    assert line.endswith(f"the run and its model are saved in runs/r; retry without retraining: {retry}")
    run = tmp_path / "runs" / "r"
    assert (run / "finished.json").exists() and (run / "sac.cleanrl_model").exists()

    hub = FakeHub()  # the Hub is back: the command the error gave uploads the run as it is
    try:
        pasted = retry.replace(" python ", f" {sys.executable} ", 1)  # pasted into a shell where `python` is this one
        again = subprocess.run(["bash", "-c", pasted], cwd=tmp_path, env=hub_env(os.environ, tmp_path, hub.url), capture_output=True,
                               text=True, timeout=120)  # fmt: skip
    finally:
        hub.close()
    assert again.returncode == 0, again.stderr
    assert hub.files[REPO_ID]["sac.cleanrl_model"] == (run / "sac.cleanrl_model").read_bytes()
    card = hub.files[REPO_ID]["README.md"].decode()
    assert front_matter(card)["model-index"][0]["name"] == "SAC" and "- algorithm: SAC, trained by `camel_sac.py`\n" in card
    assert "Its actor is CleanRL's: it reads the observation only." in card


def test_a_bad_upload_model_is_refused_before_training_with_exit_status_2(tmp_path):
    result = trainer(tmp_path, "camel_td3.py", "--upload-model", "not-a-repo-id", *TINY, env=hub_env(os.environ, tmp_path, refused_endpoint()))
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: --upload-model not-a-repo-id is not a Hugging Face repo id; give owner/name, "
                                     "e.g. you/Hopper-v4-camel_plus_td3-seed1")  # fmt: skip
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "finished, args, trainer, method",
    [  # finished.json names the script and the method
     ({"script": "camel_plus_td3.py", "method": "CAMEL+ w/o guide warm-up"}, {"llm_policy": "g.py", "warmup_actions": "uniform"},
      "camel_plus_td3.py", "CAMEL+ w/o guide warm-up"),
     ({"script": "camel_td3.py", "method": "the paper's CAMEL"}, {"llm_policy": "g.py"}, "camel_td3.py", "the paper's CAMEL"),
     # a run from before it did: camel_td3.py ran CAMEL+ where one of its parts was on, the paper's CAMEL with all off
     ({}, {"llm_policy": "g.py", "guide_bc_coef": 0.4, "warmup_actions": "guide", "critic_updates_per_step": 2}, "camel_td3.py", "CAMEL+"),
     ({}, {"llm_policy": "g.py", "guide_bc_coef": 0.4, "warmup_actions": "guide", "critic_updates_per_step": 1}, "camel_td3.py",
      "CAMEL+ w/o two critic updates per step"),
     ({}, {"llm_policy": "g.py", "guide_bc_coef": 0.0, "warmup_actions": "uniform", "critic_updates_per_step": 1, "paper": True},
      "camel_td3.py", "the paper's CAMEL"),
     ({}, {"llm_policy": None, "expert_model": None, "random_guide": False, "guide_bc_coef": 0.4}, "camel_td3.py", "TD3"),
     ({}, {"llm_policy": "g.py"}, "camel_td3.py", "the paper's CAMEL"),  # from before CAMEL+
     ({}, {"random_guide": True, "autotune": True}, "camel_sac.py", "CAMEL-SAC")],
)  # fmt: skip
def test_the_card_takes_the_trainer_and_the_method_from_finished_json_or_an_older_runs_arguments(finished, args, trainer, method):
    assert trainer_and_method(args, finished) == (trainer, method)


def test_the_card_says_what_camel_plus_is_and_only_for_camel_plus():
    assert method_lines("camel_plus_td3.py", "CAMEL+ w/o guide BC") == ["- algorithm: CAMEL+ w/o guide BC, trained by `camel_plus_td3.py`",
                                                                        f"- {CAMEL_PLUS}"]  # fmt: skip
    assert method_lines("camel_td3.py", "the paper's CAMEL") == ["- algorithm: the paper's CAMEL, trained by `camel_td3.py`"]
    assert method_lines("camel_sac.py", "SAC") == ["- algorithm: SAC, trained by `camel_sac.py`"]
