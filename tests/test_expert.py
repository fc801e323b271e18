"""Expert masking: camel_td3.py's --expert-model with a local `.cleanrl_model` (CleanRL's format), with a Hugging Face
repo id (served here by a small local Hub on 127.0.0.1), offline, a missing file, and scripts/train_expert.sh, which
makes one."""

import hashlib
import os
import socket
import subprocess

import gymnasium as gym
import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from camel_utils.agent import load_agent
from camel_utils.guide import make_guide
from camel_utils.conditions import is_hub_repo_id
from camel_td3 import Actor, QNetwork
from local_server import LocalServer, QuietHandler
from script_process import run_script

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ["--total-timesteps", "150", "--learning-starts", "100", "--batch-size", "32", "--eval-episodes", "1",
        "--torch-threads", "1"]  # fmt: skip
HUB_REPO_ID = "cleanrl/Hopper-v4-td3_continuous_action-seed1"
HUB_FILENAME = "td3_continuous_action.cleanrl_model"


def save_cleanrl_model(path, env_id):
    """A TD3 model as CleanRL saves it: torch.save((actor, qf1, qf2) state dicts), its actor CleanRL's plain one
    (fc1, fc2, fc_mu, action_scale, action_bias)."""
    env = gym.make(env_id)
    actor = Actor(env, masking_aware=False)
    assert sorted(actor.state_dict()) == sorted(
        ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc_mu.weight", "fc_mu.bias", "action_scale", "action_bias"]
    )
    torch.save((actor.state_dict(), QNetwork(env).state_dict(), QNetwork(env).state_dict()), path)
    env.close()
    return path


def camel_td3(cwd, *flags, env=None):
    return run_script(os.path.join(REPO, "camel_td3.py"), *flags, cwd=cwd, env=env)


def masked_fraction(run_dir):
    """The run's charts/masked_fraction values, read straight from its event file."""
    events = EventAccumulator(str(run_dir))
    events.Reload()
    return np.array([event.value for event in events.Scalars("charts/masked_fraction")])


def error_lines(result):
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


class LocalHub(LocalServer):
    """Serves one file the way the Hugging Face Hub does: HEAD and GET on /{repo_id}/resolve/{revision}/{filename},
    with the X-Repo-Commit and ETag headers huggingface_hub checks. Records the paths it was asked for."""

    def __init__(self, files):
        self.files, self.requests = files, []
        hub = self

        class Handler(QuietHandler):
            def do_HEAD(self):
                self.answer(body=False)

            def do_GET(self):
                self.answer(body=True)

            def answer(self, body):
                hub.requests.append((self.command, self.path))
                data = hub.files.get(self.path.split("?")[0])
                if data is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
                self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

        super().__init__(Handler)


def hub_env(tmp_path, endpoint, **more):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(tmp_path / "hf_home"), HF_HUB_DISABLE_TELEMETRY="1", **more)
    return env


def test_expert_masking_trains_with_a_saved_cleanrl_model(tmp_path):
    model = save_cleanrl_model(tmp_path / "hopper.cleanrl_model", "Hopper-v4")
    result = camel_td3(tmp_path, "--expert-model", str(model), "--exp-name", "expert", "--run-name", "expert", *TINY)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "runs" / "expert" / "finished.json").exists()
    assert masked_fraction(tmp_path / "runs" / "expert").max() > 0  # the expert's box confined early steps


def test_expert_masking_guides_with_the_loaded_agents_action_in_normalised_units(tmp_path):
    # Pendulum's torque lies in [-2, 2]: an actor whose normalised action is tanh(fc_mu.bias) = 0.5 acts with a torque
    # of 1.0 (camel_utils/agent.py, as its run evaluated it), and expert masking reads it as 0.5
    pendulum = gym.make("Pendulum-v1")
    actor = Actor(pendulum, masking_aware=False)
    with torch.no_grad():
        for layer in (actor.fc1, actor.fc2, actor.fc_mu):
            layer.weight.zero_()
        actor.fc_mu.bias.fill_(float(np.arctanh(0.5)))
    model = tmp_path / "pendulum.cleanrl_model"
    torch.save((actor.state_dict(), QNetwork(pendulum).state_dict(), QNetwork(pendulum).state_dict()), model)
    obs = pendulum.reset(seed=0)[0]
    np.testing.assert_allclose(load_agent(model)(obs), [1.0], atol=1e-6)
    np.testing.assert_allclose(make_guide(pendulum, expert_model=str(model))(obs), [0.5], atol=1e-6)


def test_expert_trained_for_another_env_is_refused_with_one_error_line(tmp_path):
    model = save_cleanrl_model(tmp_path / "walker.cleanrl_model", "Walker2d-v4")  # 17 observations, 6 actions
    result = camel_td3(tmp_path, "--env-id", "Hopper-v4", "--expert-model", str(model), *TINY)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert len(error_lines(result)) == 1, result.stderr
    assert error_lines(result)[0] == (f"error: --expert-model {model}: its actor takes 17 inputs and gives 6 actions, but "
                                      "Hopper-v4 has 11 observations and 3 actions; was it trained on another env?")


def test_expert_from_hub_repo_id_is_downloaded_through_huggingface_hub_and_cached(tmp_path):
    model = save_cleanrl_model(tmp_path / "served.cleanrl_model", "Hopper-v4")
    hub = LocalHub({f"/{HUB_REPO_ID}/resolve/main/{HUB_FILENAME}": model.read_bytes()})
    try:
        result = camel_td3(tmp_path, "--expert-model", HUB_REPO_ID, "--run-name", "hub", *TINY, env=hub_env(tmp_path, hub.url))
    finally:
        hub.close()
    assert result.returncode == 0, result.stderr
    assert ("GET", f"/{HUB_REPO_ID}/resolve/main/{HUB_FILENAME}") in hub.requests
    cached = list((tmp_path / "hf_home" / "hub").rglob(HUB_FILENAME))
    assert cached and cached[0].read_bytes() == model.read_bytes()
    assert masked_fraction(tmp_path / "runs" / "hub").max() > 0


@pytest.mark.parametrize("offline", ["unreachable", "HF_HUB_OFFLINE"])
def test_hub_expert_without_network_says_to_download_it_first(tmp_path, offline):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{s.getsockname()[1]}"
    env = hub_env(tmp_path, endpoint, **({"HF_HUB_OFFLINE": "1"} if offline == "HF_HUB_OFFLINE" else {}))
    result = camel_td3(tmp_path, "--expert-model", HUB_REPO_ID, *TINY, env=env)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert len(error_lines(result)) == 1, result.stderr
    assert "Download it on a connected machine" in error_lines(result)[0]
    # the command it gives puts the file where the sweep looks: experts/{ENV_ID}/td3_continuous_action.cleanrl_model
    assert f"hf download {HUB_REPO_ID} {HUB_FILENAME} --local-dir experts/Hopper-v4`" in error_lines(result)[0]
    assert not (tmp_path / "runs").exists()


def test_missing_model_file_is_no_such_file_not_a_hub_lookup(tmp_path):
    hub = LocalHub({})
    try:
        result = camel_td3(tmp_path, "--expert-model", "experts/Hopper-v4.cleanrl_model", *TINY, env=hub_env(tmp_path, hub.url))
    finally:
        hub.close()
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert hub.requests == []  # the Hub was never asked
    assert len(error_lines(result)) == 1, result.stderr
    line = error_lines(result)[0]
    assert line.startswith("error: --expert-model experts/Hopper-v4.cleanrl_model: no such file")
    assert f"`hf download {HUB_REPO_ID} {HUB_FILENAME} --local-dir experts/Hopper-v4`" in line
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "value, is_path",
    [("experts/Hopper-v4.cleanrl_model", True), ("experts/Hopper-v4/td3_continuous_action.cleanrl_model", True),
     ("./Hopper-v4", True), ("/models/hopper", True), ("hopper.pt", True), ("a/b/c", True),
     (HUB_REPO_ID, False), ("someone/my-expert", False)],
)  # fmt: skip
def test_path_shaped_expert_values_are_files_and_owner_name_values_are_hub_repos(value, is_path):
    assert (not is_hub_repo_id(value)) == is_path


def test_train_expert_script_saves_a_model_that_expert_masking_accepts(tmp_path):
    env = dict(os.environ, EXPERTS_DIR=str(tmp_path / "experts"), TORCH_THREADS="1",
               EXTRA_ARGS="--learning-starts 100 --batch-size 32 --eval-episodes 1")  # fmt: skip
    script = os.path.join(REPO, "scripts", "train_expert.sh")
    result = subprocess.run(["bash", script, "Hopper-v4", "150"], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    model = tmp_path / "experts" / "Hopper-v4.cleanrl_model"
    actor_state, qf1_state, qf2_state = torch.load(model, weights_only=True)
    assert actor_state["fc1.weight"].shape == (256, 11) and actor_state["fc_mu.weight"].shape == (3, 256)
    assert (tmp_path / "experts" / "runs" / "Hopper-v4__td3_expert__1" / "finished.json").exists()
    hopper = gym.make("Hopper-v4")
    guide = make_guide(hopper, expert_model=str(model))  # what --expert-model does with it
    action = guide(hopper.reset(seed=0)[0])
    assert action.shape == (3,) and abs(action).max() <= 1
    # a second call finds the model and trains nothing
    again = subprocess.run(["bash", script, "Hopper-v4", "150"], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "already there" in again.stdout


def test_train_expert_script_trains_with_a_guide_named_relative_to_the_callers_folder(tmp_path):
    # the run itself starts in EXPERTS_DIR, so policies/hopper.py must be resolved before it goes there
    env = dict(os.environ, EXPERTS_DIR=str(tmp_path / "experts"), TORCH_THREADS="1",
               EXTRA_ARGS="--llm-policy policies/hopper.py --learning-starts 100 --batch-size 32 --eval-episodes 1")  # fmt: skip
    script = os.path.join(REPO, "scripts", "train_expert.sh")
    result = subprocess.run(["bash", script, "Hopper-v4", "150"], env=env, cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"--llm-policy {REPO}/policies/hopper.py" in result.stdout
    actor_state = torch.load(tmp_path / "experts" / "Hopper-v4.cleanrl_model", weights_only=True)[0]
    assert actor_state["fc1.weight"].shape == (256, 11 + 2 * 3)  # the masking-aware actor: observation and bounds
    hopper = gym.make("Hopper-v4")
    guide = make_guide(hopper, expert_model=str(tmp_path / "experts" / "Hopper-v4.cleanrl_model"))
    assert guide(hopper.reset(seed=0)[0]).shape == (3,)
