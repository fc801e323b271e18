"""camel_utils.run: the run bookkeeping the trainers share. A checkpoint restores every module, counter and random
generator, and the episode under way when the run was stopped in one (the env's whole state), and refuses one that
lacks a module; resuming names what is missing, from a checkpoint on an evaluation step evaluates there again, and
from a Ctrl-C in the middle of an episode continues bit for bit as the run that never stopped (both trainers); the
common argument checks refuse bad flags (exit status 2) and warn about a run too short to learn; a missing expert file
is never looked up on the Hub; the trainers' help never breaks a line mid-phrase."""

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Optional

import gymnasium as gym
import numpy as np
import pytest
import torch
import tyro
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

import camel_plus_td3
import camel_sac
import camel_td3
from camel_td3 import make_env
from test_camel_td3 import printed_path
from camel_utils.cli import shown_path
from camel_utils.guide import Guide
from camel_utils.guide import expert_model_file
from camel_utils.run import Checkpoints, check_common_args, checked_env, cli_args, help_sections, load_checkpoint, resume_args, same_code, source_commit
from script_process import run_script

REPO = Path(__file__).resolve().parents[1]


@dataclass
class TinyArgs:
    """The flags every trainer shares, as check_common_args and resume_args read them."""

    llm_policy: Optional[str] = None
    expert_model: Optional[str] = None
    random_guide: bool = False
    masking_aware: bool = True
    epsilon_masking: bool = True
    mask_width: float = 0.6
    epsilon_fraction: float = 0.5
    total_timesteps: int = 1000
    buffer_size: int = 1000
    batch_size: int = 32
    eval_frequency: int = 100
    eval_episodes: int = 1
    learning_starts: int = 100
    checkpoint_frequency: int = 0
    torch_threads: int = 1
    cuda: bool = False
    policy_frequency: int = 2
    resume: Optional[str] = None
    save_model: bool = True
    upload_model: Optional[str] = None
    gamma: float = 0.99
    tau: float = 0.005
    guide_timeout: float = 1.0
    learning_rate: float = 3e-4
    exploration_noise: float = 0.1


def draws(rng, env):
    """One number from each generator a run uses."""
    return (random.random(), np.random.random(), rng.random(), torch.rand(1).item(), env.unwrapped.np_random.random())


def test_checkpoint_restores_modules_counters_and_every_random_generator(tmp_path):
    env, rng = gym.make("Hopper-v4"), np.random.default_rng(0)
    env.reset(seed=0)
    net, guide, counters = torch.nn.Linear(2, 2), Guide(lambda obs: np.zeros(3), 3, "g"), {"episodes": 7}
    guide(np.zeros(11))
    checkpoints = Checkpoints(str(tmp_path / "checkpoint.pt"), TinyArgs(), {"net": net, "guide": guide}, counters, rng, env, "camel_td3.py")
    checkpoints.save(global_step=123)
    expected, expected_weight = draws(rng, env), net.weight.detach().clone()

    # another process: fresh modules and generators in other states
    env2, rng2 = gym.make("Hopper-v4"), np.random.default_rng(99)
    env2.reset(seed=5)
    net2, guide2, counters2 = torch.nn.Linear(2, 2), Guide(lambda obs: np.zeros(3), 3, "g"), {"episodes": 0}
    random.seed(5)
    np.random.seed(5)
    torch.manual_seed(5)
    restored = Checkpoints(str(tmp_path / "checkpoint.pt"), TinyArgs(), {"net": net2, "guide": guide2}, counters2, rng2, env2, "camel_td3.py")
    assert restored.restore(load_checkpoint(tmp_path / "checkpoint.pt")) == (123, None)  # saved between episodes
    assert draws(rng2, env2) == expected
    torch.testing.assert_close(net2.weight, expected_weight, rtol=0, atol=0)
    assert counters2 == {"episodes": 7} and guide2.calls == 1


def steps_from(env, actions):
    """What the env gives for these actions, starting new episodes (from its own generator) as they end."""
    seen = []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        seen.append((obs.tobytes(), reward, terminated, truncated, info.get("episode", {}).get("r"), info.get("episode", {}).get("l")))
        if terminated or truncated:
            seen.append(env.reset()[0].tobytes())
    return seen


@pytest.mark.parametrize("env_id", ["Hopper-v4", "Ant-v4", "Pendulum-v1"])
def test_a_checkpoint_in_the_middle_of_an_episode_restores_the_env_to_continue_it_bit_for_bit(tmp_path, env_id):
    # Ant-v4's reward reads body positions MuJoCo computed in the last step (not the state itself); Pendulum-v1 is
    # plain attributes, no simulator
    env, rng = make_env(env_id, 1, 0, False, "r")(), np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    for _ in range(30):  # into an episode (a new one begins if one ends)
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, _ = env.reset()
    episode = (obs, np.full(3, -0.5), np.full(3, 0.5), True)  # the loop's obs, bounds and mask for the next step
    Checkpoints(str(tmp_path / "checkpoint.pt"), TinyArgs(), {}, {}, rng, env, "camel_td3.py").save(global_step=30, episode=episode)
    elapsed = env.get_wrapper_attr("_elapsed_steps")
    actions = [env.action_space.sample() for _ in range(400)]
    expected = steps_from(env, actions)

    fresh = make_env(env_id, 1, 0, False, "r")()  # another process: a new env, never reset
    step, (loop_obs, low, high, masked) = Checkpoints(str(tmp_path / "checkpoint.pt"), TinyArgs(), {}, {}, np.random.default_rng(5),
                                                      fresh, "camel_td3.py").restore(load_checkpoint(tmp_path / "checkpoint.pt"))  # fmt: skip
    assert step == 30 and loop_obs.tobytes() == obs.tobytes() and masked is True
    assert np.array_equal(low, episode[1]) and np.array_equal(high, episode[2])
    assert 0 < elapsed == fresh.get_wrapper_attr("_elapsed_steps")  # TimeLimit's count, mid-episode
    assert steps_from(fresh, actions) == expected


class WorldEnv(gym.Env):
    """An env whose state lives in an object, as a Box2D env's world does: it cannot be saved mid-episode."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,))
    action_space = gym.spaces.Box(-1.0, 1.0, (1,))

    def __init__(self):
        self.world = type("World", (), {})()

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(2, dtype=np.float32), 0.0, False, False, {}


def test_an_episode_whose_env_cannot_be_saved_is_dropped_and_the_checkpoint_says_what(tmp_path):
    env, rng = gym.wrappers.RecordEpisodeStatistics(WorldEnv()), np.random.default_rng(0)
    env.reset(seed=0)
    checkpoints = Checkpoints(str(tmp_path / "checkpoint.pt"), TinyArgs(), {}, {}, rng, env, "camel_td3.py")
    assert checkpoints.save(global_step=5, episode=(np.zeros(2), -np.ones(1), np.ones(1), False)) == "WorldEnv.world (World)"
    assert load_checkpoint(tmp_path / "checkpoint.pt")["episode"] is None  # the resumed run starts a new episode
    assert checkpoints.restore(load_checkpoint(tmp_path / "checkpoint.pt")) == (5, None)


def test_resume_names_a_missing_folder_a_missing_checkpoint_and_a_finished_run(tmp_path):
    with pytest.raises(SystemExit, match="--resume .*nope: no such run folder"):
        resume_args(str(tmp_path / "nope"), TinyArgs(), TinyArgs, "camel_td3.py")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match="no checkpoint.pt there"):
        resume_args(str(tmp_path / "empty"), TinyArgs(), TinyArgs, "camel_td3.py")
    (tmp_path / "empty" / "finished.json").write_text("{}")
    with pytest.raises(SystemExit, match="already finished"):
        resume_args(str(tmp_path / "empty"), TinyArgs(), TinyArgs, "camel_td3.py")


def test_resume_keeps_the_runs_own_settings_but_this_machines(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    torch.save(written("camel_td3.py", TinyArgs(total_timesteps=5000, torch_threads=4)), run / "checkpoint.pt")
    args, checkpoint = resume_args(str(run), TinyArgs(total_timesteps=7, torch_threads=2), TinyArgs, "camel_td3.py")
    assert (args.total_timesteps, args.torch_threads, args.resume) == (5000, 2, str(run))
    assert "ignoring --total-timesteps" in capsys.readouterr().err


@pytest.mark.parametrize(
    "changes, message",
    [({"llm_policy": "g.py", "random_guide": True}, "choose one guide"), ({"masking_aware": False}, "need a guide"),
     ({"policy_frequency": 0}, "--policy-frequency must be positive"), ({"torch_threads": -1}, "cannot be negative"),
     ({"gamma": 1.5}, "^error: --gamma must be in \\[0, 1\\] and --tau in \\(0, 1\\], got 1.5 and 0.005$"), ({"tau": 0.0}, "--tau in \\(0, 1\\]"),
     ({"guide_timeout": 0.0}, "^error: --guide-timeout must be positive \\(seconds a guide call may take\\), got 0$"),
     ({"exploration_noise": -0.1}, "^error: --exploration-noise cannot be negative, got -0.1$"),
     ({"learning_rate": 0.0}, "^error: --learning-rate must be positive, got 0$")],
)  # fmt: skip
def test_common_checks_refuse_bad_flags_and_trainer_specific_ones(changes, message):
    with pytest.raises(SystemExit, match=message) as refused:
        check_common_args(TinyArgs(**changes), positive=["policy_frequency"])
    assert refused.value.code == 2  # a mistake in the command, as evaluate_policy.py and generate_policy.py exit


@pytest.mark.parametrize(
    "changes, token, message",
    [({"upload_model": "Hopper-v4-camel_qbc_gwarm-seed1"}, "t", "--upload-model Hopper-v4-camel_qbc_gwarm-seed1 is not a Hugging Face repo id"),
     ({"upload_model": "runs/x/camel_td3.cleanrl_model"}, "t", "is not a Hugging Face repo id"),
     ({"upload_model": "me/x", "save_model": False}, "t", "--upload-model uploads the saved model; drop --no-save-model"),
     ({"upload_model": "me/x"}, None, "--upload-model needs a Hugging Face token")],
)  # fmt: skip
def test_upload_model_is_checked_before_the_run_starts(monkeypatch, tmp_path, changes, token, message):
    for name in [name for name in os.environ if name.startswith("HF_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # no saved login
    if token:
        monkeypatch.setenv("HF_TOKEN", token)
    with pytest.raises(SystemExit, match=message) as refused:
        check_common_args(TinyArgs(**changes))
    assert refused.value.code == 2
    monkeypatch.setenv("HF_TOKEN", "t")
    check_common_args(TinyArgs(upload_model="me/Hopper-v4-camel_qbc_gwarm-seed1"))  # a repo id and a token pass


@pytest.mark.parametrize("width, least, message", [(0.0, None, "--mask-width must be in (0, 2], got 0.0"), (2.5, None, "(0, 2]"),
                                                   (1e-8, 1e-3, "--mask-width must be in [0.001, 2] (see --help), got 1e-08")])  # fmt: skip
def test_common_checks_refuse_a_mask_width_outside_the_trainers_range(width, least, message):
    with pytest.raises(SystemExit) as refused:
        check_common_args(TinyArgs(mask_width=width), min_mask_width=least)
    assert str(refused.value).startswith("error: ") and message in str(refused.value)
    check_common_args(TinyArgs(mask_width=1e-3), min_mask_width=1e-3)  # the least width itself passes
    check_common_args(TinyArgs(mask_width=1e-8))  # and any width above 0 where the trainer sets no least


def test_common_checks_warn_when_no_update_will_happen(capsys):
    check_common_args(TinyArgs(total_timesteps=101, learning_starts=100))
    assert "warning: no update will happen: the first is at step 101" in capsys.readouterr().err
    check_common_args(TinyArgs(total_timesteps=102, learning_starts=100))
    assert capsys.readouterr().err == ""


def test_missing_expert_file_says_no_such_file_and_how_to_fetch_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file") as missing:
        expert_model_file(str(tmp_path / "Hopper-v4.cleanrl_model"), "Hopper-v4")
    assert ("hf download cleanrl/Hopper-v4-td3_continuous_action-seed1 td3_continuous_action.cleanrl_model "
            "--local-dir experts/Hopper-v4") in str(missing.value)  # fmt: skip
    model = tmp_path / "m.cleanrl_model"
    model.write_bytes(b"")
    assert expert_model_file(str(model), "Hopper-v4") == str(model)


# --- resuming: a checkpoint on an evaluation step ------------------------------------------------------------


def trainer(script, cwd, *args, **popen):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    if popen:  # a real process, to be killed
        return subprocess.Popen([sys.executable, str(REPO / script), *args], cwd=cwd, env=env, **popen)
    return run_script(REPO / script, *args, cwd=cwd, env=env)


def eval_points(path):
    """(step, value) of every eval/episodic_return event in one event file, purged or not."""
    points = []
    for event in EventFileLoader(str(path)).Load():
        for value in event.summary.value:
            if value.tag == "eval/episodic_return":
                points.append((event.step, value.simple_value if value.HasField("simple_value") else float(value.tensor.float_val[0])))
    return points


@pytest.mark.parametrize("script", ["camel_td3.py", "camel_sac.py"])
def test_a_run_resumed_from_a_checkpoint_on_an_evaluation_step_keeps_that_evaluation(tmp_path, script):
    # Pendulum's episodes are 200 steps, so the checkpoint due at step 400 is taken at step 400 itself, right after
    # the evaluation logged there; the resumed writer purges the points from step 400 on, that one among them
    args = ["--env-id", "Pendulum-v1", "--total-timesteps", "800", "--learning-starts", "200", "--batch-size", "32",
            "--eval-frequency", "400", "--eval-episodes", "1", "--checkpoint-frequency", "400", "--torch-threads", "1"]  # fmt: skip
    whole = trainer(script, tmp_path, *args, "--run-name", "whole")
    assert whole.returncode == 0, whole.stderr

    process = trainer(script, tmp_path, *args, "--run-name", "killed", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checkpoint = tmp_path / "runs/killed/checkpoint.pt"
    deadline = time.time() + 240
    while not checkpoint.exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert torch.load(checkpoint, weights_only=False)["global_step"] == 400
    files_before = set((tmp_path / "runs/killed").glob("events.out.tfevents.*"))

    resumed = trainer(script, tmp_path, "--resume", "runs/killed")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming killed at step 400" in resumed.stderr
    (new_file,) = set((tmp_path / "runs/killed").glob("events.out.tfevents.*")) - files_before
    assert [step for step, _ in eval_points(new_file)] == [400, 800]  # the resumed process evaluated at 400 once
    shown = EventAccumulator(str(tmp_path / "runs/killed"))
    shown.Reload()
    whole_shown = EventAccumulator(str(tmp_path / "runs/whole"))
    whole_shown.Reload()
    curve = [(e.step, e.value) for e in shown.Scalars("eval/episodic_return")]
    assert [step for step, _ in curve] == [400, 800]  # what TensorBoard shows: each evaluation once
    assert curve == [(e.step, e.value) for e in whole_shown.Scalars("eval/episodic_return")]  # as if it had never stopped


# --- stopping in the middle of an episode: the resumed run is the run that never stopped -------------------------


def scalars(run_dir):
    """Every scalar curve the run shows in TensorBoard but the wall-clock one (charts/SPS)."""
    events = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"] if tag != "charts/SPS"}


@pytest.mark.parametrize(
    "script, env_id, guide",
    [("camel_td3.py", "Hopper-v4", "file"), ("camel_sac.py", "Pendulum-v1", "file"),  # MuJoCo's state, and an env of plain attributes
     ("camel_td3.py", "Hopper-v4", "random")],  # CAMEL+ keeps g(s): a random guide asked again would shift every later draw
)  # fmt: skip
def test_a_run_stopped_in_the_middle_of_an_episode_resumes_bit_for_bit(tmp_path, script, env_id, guide):
    actions = 3 if env_id == "Hopper-v4" else 1
    (tmp_path / "guide.py").write_text(f"import numpy as np\n\ndef policy(obs):\n    return np.tanh(np.asarray(obs)[:{actions}])\n")
    guide_args = ["--llm-policy", "guide.py"] if guide == "file" else ["--random-guide"]
    args = ["--env-id", env_id, *guide_args, "--total-timesteps", "1500", "--learning-starts", "1000",
            "--eval-frequency", "500", "--eval-episodes", "1", "--batch-size", "32", "--checkpoint-frequency", "0",
            "--torch-threads", "1"]  # fmt: skip
    whole = trainer(script, tmp_path, *args, "--run-name", "whole")
    assert whole.returncode == 0, whole.stderr

    # Ctrl-C during step 1234 (CAMEL_STOP_AT_STEP sends the process SIGINT there): learning has begun, and with
    # Hopper's short random episodes and Pendulum's 200 steps, 1234 is not an episode's end (asserted below)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore", "CAMEL_STOP_AT_STEP": "1234"}
    stopped = subprocess.run([sys.executable, str(REPO / script), *args, "--run-name", "stopped"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert stopped.returncode == 130, stopped.stderr
    assert f"interrupted at step 1234; continue with: python {printed_path(REPO / script, tmp_path)} --resume runs/stopped" in stopped.stderr
    checkpoint = torch.load(tmp_path / "runs/stopped/checkpoint.pt", weights_only=False)
    assert checkpoint["global_step"] == 1234 and checkpoint["episode"] is not None
    wrappers = dict(checkpoint["episode"]["env"])
    assert wrappers["TimeLimit"]["_elapsed_steps"] > 0 and wrappers["RecordEpisodeStatistics"]["episode_lengths"] > 0

    resumed = trainer(script, tmp_path, "--resume", "runs/stopped")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming stopped at step 1234 in the middle of an episode" in resumed.stderr
    whole_models, resumed_models = (torch.load(next((tmp_path / f"runs/{run}").glob("*.cleanrl_model")), weights_only=True) for run in ["whole", "stopped"])
    for whole_state, resumed_state in zip(whole_models, resumed_models):  # the actor's, qf1's and qf2's
        for name in whole_state:
            assert torch.equal(whole_state[name], resumed_state[name]), name
    whole_curves, resumed_curves = scalars(tmp_path / "runs/whole"), scalars(tmp_path / "runs/stopped")
    assert [step for step, _ in whole_curves["eval/episodic_return"]] == [500, 1000, 1500]
    assert resumed_curves == whole_curves  # every evaluation, episode return, loss and masked fraction, to the bit
    finished = [json.loads((tmp_path / f"runs/{run}/finished.json").read_text()) for run in ["whole", "stopped"]]
    assert finished[0]["guide_calls"] == finished[1]["guide_calls"]  # the guide was not asked again on resuming


SECTIONS = {"camel_td3.py": ["experiment", "TD3", "guide", "masking", "bookkeeping", "speed"],
            "camel_plus_td3.py": ["experiment", "TD3", "guide", "masking", "CAMEL+", "bookkeeping", "speed"],
            "camel_sac.py": ["experiment", "SAC", "guide", "masking", "bookkeeping", "speed"]}  # fmt: skip


@pytest.mark.parametrize("script", ["camel_td3.py", "camel_plus_td3.py", "camel_sac.py"])
def test_help_shows_each_section_of_args_in_its_own_box_with_the_flags_named_as_before(script):
    # the sections are the comment lines of Args (`# heading: description`); a flag is in the box of its section
    env = {**os.environ, "COLUMNS": "129"}  # tyro sets boxes side by side from 130 columns
    help_text = subprocess.run([sys.executable, str(REPO / script), "--help"], capture_output=True, text=True, env=env).stdout
    boxes = re.findall(r"╭─ ([^─\n]+?) options ─+╮\n(.*?)╰", help_text, re.S)
    assert [heading for heading, _ in boxes] == SECTIONS[script]
    args_class = {"camel_td3.py": camel_td3.Args, "camel_plus_td3.py": camel_plus_td3.Args, "camel_sac.py": camel_sac.Args}[script]
    sections = {heading: names for heading, _, names in help_sections(args_class)}
    assert sorted(name for names in sections.values() for name in names) == sorted(f.name for f in fields(args_class))
    for heading, box in boxes:
        flags_in_box = re.findall(r"^│ (--[a-z0-9-]+)", box, re.M)
        assert flags_in_box == ["--" + name.replace("_", "-") for name in sections[heading]], heading
    descriptions = {heading: box.splitlines()[0].strip("│ ") for heading, box in boxes}  # a section's first line
    assert descriptions["guide"].startswith("the guide g(s)")


@pytest.mark.parametrize("argv", [[], ["--seed", "3", "--env-id", "Walker2d-v4", "--total-timesteps", "2000"],
                                  ["--guide-bc-coef", "0.2", "--mask-width", "0.3"], ["--warmup-actions", "uniform"],
                                  ["--llm-policy", "policies/hopper.py", "--no-cuda", "--exp-name", "x", "--no-fast-update", "--torch-threads", "0"]])  # fmt: skip
def test_the_sectioned_command_line_reads_every_flag_as_the_flat_args_would(argv):
    assert cli_args(camel_plus_td3.Args, argv) == tyro.cli(camel_plus_td3.Args, args=argv)
    td3_argv = [arg for arg in argv if arg not in ("--guide-bc-coef", "0.2", "--warmup-actions", "uniform")]  # CAMEL+ flags
    assert cli_args(camel_td3.Args, td3_argv) == tyro.cli(camel_td3.Args, args=td3_argv)
    sac_argv = [arg for arg in td3_argv if arg != "--no-fast-update"]  # a TD3 flag
    assert cli_args(camel_sac.Args, sac_argv) == tyro.cli(camel_sac.Args, args=sac_argv)
    assert type(cli_args(camel_td3.Args, td3_argv)) is camel_td3.Args  # the trainers read a flat args.x


def test_a_mistyped_flag_is_one_error_naming_the_flag_it_meant(tmp_path):
    result = subprocess.run([sys.executable, str(REPO / "camel_td3.py"), "--sed", "3"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2 and "--sed" in result.stderr and "--seed INT" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_an_env_that_cannot_render_or_has_unbounded_actions_is_one_line(capsys):
    """--capture-video with no display (MuJoCo raises its own FatalError, not a gym error) and a Box action space
    with infinite bounds (TD3's scale would be inf, the run NaN) are refused in one line, exit 2."""
    import mujoco

    def no_display():
        raise mujoco.FatalError("an OpenGL platform library has not been loaded into this process")

    with pytest.raises(SystemExit) as refused:
        checked_env(no_display, "Hopper-v4")
    assert refused.value.code == 2
    assert capsys.readouterr().err.strip() == ("error: Hopper-v4 cannot render here (an OpenGL platform library has not been loaded "
                                               "into this process); without a display, set MUJOCO_GL=egl (or osmesa) to film it")  # fmt: skip

    class Unbounded(gym.Env):
        observation_space = gym.spaces.Box(-1.0, 1.0, (2,))
        action_space = gym.spaces.Box(-np.inf, np.inf, (1,))

    with pytest.raises(SystemExit) as refused:
        checked_env(Unbounded, "Unbounded-v0")
    assert refused.value.code == 2 and "error: Unbounded-v0's actions are unbounded" in capsys.readouterr().err
    assert checked_env(lambda: gym.make("Pendulum-v1"), "Pendulum-v1").action_space.high[0] == 2.0  # bounded: as it is


def written(script, args, commit=None):
    """A checkpoint's header as a trainer writes it: the script, the commit (this one unless given) and the args."""
    return {"script": script, "commit": source_commit() if commit is None else commit, "args": vars(args), "counters": {}}


def test_a_run_of_another_trainer_is_refused_with_the_command_that_resumes_it(tmp_path, capsys):
    run = tmp_path / "runs" / "Hopper-v4__camel_plus_td3__1"
    run.mkdir(parents=True)
    torch.save(written("camel_plus_td3.py", TinyArgs()), run / "checkpoint.pt")
    with pytest.raises(SystemExit) as refused:
        resume_args(str(run), camel_td3.Args(), camel_td3.Args, "camel_td3.py")
    assert refused.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: --resume {run}: camel_plus_td3.py wrote this run; continue it with: python ")
    assert err.endswith(f"camel_plus_td3.py --resume {shown_path(str(run))}")  # as pastable where the user stands
    torch.save(written("camel_sac.py", TinyArgs()), run / "checkpoint.pt")
    with pytest.raises(SystemExit):
        resume_args(str(run), camel_td3.Args(), camel_td3.Args, "camel_td3.py")
    assert "camel_sac.py wrote this run" in capsys.readouterr().err


def test_a_checkpoint_of_another_commit_is_refused_with_the_checkout_that_resumes_it(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    torch.save(written("camel_td3.py", TinyArgs(), commit="0123abc"), run / "checkpoint.pt")
    with pytest.raises(SystemExit) as refused:
        resume_args(str(run), TinyArgs(), TinyArgs, "camel_td3.py")
    assert refused.value.code == 2
    assert capsys.readouterr().err.strip() == (f"error: --resume {run}: commit 0123abc wrote this run and this is {source_commit()}; "
                                               "resume it with that commit (git checkout 0123abc, or a git worktree there)")
    # a checkpoint that names neither (written before they were recorded) is refused too, and says why
    torch.save({"args": vars(TinyArgs()), "counters": {}}, run / "checkpoint.pt")
    with pytest.raises(SystemExit):
        resume_args(str(run), TinyArgs(), TinyArgs, "camel_td3.py")
    assert "names no script and commit" in capsys.readouterr().err
    # one of a commit with the same Python code (here: this commit's parent, if it changed no .py file) resumes too
    parent = subprocess.run(["git", "-C", str(REPO), "rev-parse", f"{source_commit()}~1"], capture_output=True, text=True).stdout.strip()
    assert same_code(source_commit(), source_commit()) and not same_code("0123abc", source_commit())
    assert same_code(parent, source_commit()) == (subprocess.run(
        ["git", "-C", str(REPO), "diff", "--quiet", parent, source_commit(), "--", "*.py", ":!tests"]).returncode == 0)
    # this commit's own checkpoint resumes
    torch.save(written("camel_td3.py", TinyArgs(total_timesteps=4321)), run / "checkpoint.pt")
    assert resume_args(str(run), TinyArgs(), TinyArgs, "camel_td3.py")[0].total_timesteps == 4321


def test_the_source_commit_is_this_checkouts_head():
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert source_commit.__wrapped__() == head and len(head) == 40  # uncached: the queue may have committed since


@dataclass
class SectionedArgs:
    """As a trainer's Args: a docstring (the top of --help), then the sections."""

    # first: the flags of the first section
    a: int = 1
    """a flag"""
    # a note on the constant below, not a section
    LIMITS = {"a": 1}
    b: int = 2
    """a flag after the constant: still the first section's"""
    # second: the flags of the second section
    c: int = 3
    """a flag"""


def test_only_a_comment_right_above_a_field_opens_a_help_section():
    assert help_sections(SectionedArgs) == [("first", "the flags of the first section", ["a", "b"]),
                                            ("second", "the flags of the second section", ["c"])]  # fmt: skip
