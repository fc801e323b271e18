"""Specification of evaluation (camel_utils/guide_eval.py, and evaluate_policy.py, its command line): episodes and their metrics,
the child process and its timeout, the score and the ranking, videos, the JSON and Markdown reports, trained agents
(.cleanrl_model) measured and ranked beside guides, and the command line's answers to mistakes. The judge of the
videos is specified in test_camel_judge.py."""

import dataclasses
import json
import re
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import gymnasium as gym
import numpy as np
import pytest

from camel_utils import guide_eval as ev
import evaluate_policy as ep
from script_process import run_script

ROOT = Path(ep.__file__).resolve().parent

# A guide that leans the hopper forward (it soon falls).
FORWARD = """import numpy as np

def policy(obs):
    torso_angle, torso_velocity = obs[1], obs[7]
    thigh = -0.6 * (torso_angle - 0.1) - 0.1 * torso_velocity
    return np.clip(np.array([thigh, -0.2, 0.3]), -1.0, 1.0)
"""
# A guide that holds still: it survives and earns the healthy reward, and goes nowhere.
STILL = """import numpy as np

def policy(obs):
    return np.clip(np.array([-2.0 * obs[1] - 0.2 * obs[7], 0.0, 0.0]), -1.0, 1.0)
"""
CONSTANT = """import numpy as np

def policy(obs):
    return np.array([0.5, -0.5, 0.5])
"""
NAN = "import numpy as np\n\ndef policy(obs):\n    return np.full(3, np.nan)\n"
RAISES = "import numpy as np\n\ndef policy(obs):\n    return np.zeros(3) / obs[100]\n"
HOSTILE = "import subprocess\ndef policy(obs):\n    return subprocess.run('ls')\n"


def write(folder, name, code):
    path = folder / f"{name}.py"
    path.write_text(code)
    return str(path)


def run_cli(*args, cwd):
    return run_script(ROOT / "evaluate_policy.py", *args, cwd=cwd, timeout=180)


# ---------------------------------------------------------------------------------------------------------
# Episodes and their metrics
# ---------------------------------------------------------------------------------------------------------
def test_episode_metrics_match_a_hand_rollout_of_a_known_policy(tmp_path):
    path = write(tmp_path, "constant", CONSTANT)
    result = ev.run_episodes(path, "Hopper-v4", seeds=[3, 4], max_episode_steps=40)
    assert result["error"] is None and len(result["episodes"]) == 2 and result["max_episode_steps"] == 40
    env = gym.make("Hopper-v4", max_episode_steps=40)
    for episode, seed in zip(result["episodes"], [3, 4]):
        env.reset(seed=seed)
        x_start, total, steps = env.unwrapped.data.qpos[0], 0.0, 0
        while True:
            _, reward, terminated, truncated, _ = env.step(np.array([0.5, -0.5, 0.5], dtype=np.float32))
            total, steps = total + reward, steps + 1
            if terminated or truncated:
                break
        assert episode["seed"] == seed and episode["return"] == pytest.approx(total) and episode["length"] == steps
        assert episode["fell"] == terminated
        assert episode["forward_distance"] == pytest.approx(env.unwrapped.data.qpos[0] - x_start)
        assert episode["mean_abs_action"] == pytest.approx(0.5)


def test_actions_are_read_normalised_and_mapped_to_the_envs_units(tmp_path):
    # Pendulum's torque lies in [-2, 2]: the guide's 0.5 is a torque of 1.0; and it has no forward position
    path = write(tmp_path, "push", "import numpy as np\n\ndef policy(obs):\n    return np.array([0.5])\n")
    result = ev.run_episodes(path, "Pendulum-v1", seeds=[0], max_episode_steps=20)
    env = gym.make("Pendulum-v1", max_episode_steps=20)
    env.reset(seed=0)
    total = sum(env.step(np.array([1.0], dtype=np.float32))[1] for _ in range(20))
    (episode,) = result["episodes"]
    assert episode["return"] == pytest.approx(total) and episode["forward_distance"] is None
    summary = ev.PolicyResult(name="push", episodes=result["episodes"])
    ev.summarize(summary, 20)
    assert summary.score == pytest.approx(total)  # scored by return where there is no forward position


# ---------------------------------------------------------------------------------------------------------
# The child process: one BLAS thread, a timeout that kills everything it started
# ---------------------------------------------------------------------------------------------------------
def test_evaluation_child_runs_with_one_blas_thread(tmp_path):
    lines = []
    code, timed_out, _ = ev.run_child([sys.executable, "-c", "import os; print(os.environ['OMP_NUM_THREADS'], os.environ['OPENBLAS_NUM_THREADS'])"],
                                      tmp_path, timeout=60, on_line=lines.append)  # fmt: skip
    assert code == 0 and not timed_out and lines == ["1 1\n"]


def test_a_child_that_hangs_is_killed_with_everything_it_started(tmp_path):
    script = ("import subprocess, sys, time\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              "print(child.pid, flush=True)\n"
              "time.sleep(60)\n")  # fmt: skip
    lines = []
    code, timed_out, _ = ev.run_child([sys.executable, "-c", script], tmp_path, timeout=2.0, on_line=lines.append)
    assert timed_out and code != 0
    grandchild = Path(f"/proc/{int(lines[0])}/stat")
    for _ in range(50):  # SIGKILL is delivered asynchronously
        if not grandchild.exists() or grandchild.read_text().split()[2] == "Z":
            break
        time.sleep(0.1)
    assert not grandchild.exists() or grandchild.read_text().split()[2] == "Z"


def test_a_policy_that_hangs_is_reported_and_the_others_are_still_evaluated(tmp_path):
    # it passes the static checks, then loops forever: the trial on sample observations times it out
    hangs = write(tmp_path, "hangs", "import numpy as np\n\ndef policy(obs):\n    while True:\n        pass\n")
    args = ep.Args(policies=(hangs, write(tmp_path, "still", STILL)), episodes=1, max_episode_steps=10, video=False,
                   eval_timeout=6.0, json=str(tmp_path / "r.json"))  # fmt: skip
    assert ep.main(args) == 0
    errors = {c["name"]: c["error"] for c in json.loads((tmp_path / "r.json").read_text())["candidates"]}
    assert "hang" in errors["hangs"] and errors["still"] is None


# ---------------------------------------------------------------------------------------------------------
# Score and ranking
# ---------------------------------------------------------------------------------------------------------
def evaluated(name, distances, lengths, returns, max_episode_steps=1000):
    result = ev.PolicyResult(name=name, path=f"{name}.py")
    result.episodes = [{"seed": i, "return": r, "length": n, "fell": n < max_episode_steps, "forward_distance": d, "mean_abs_action": 0.3}
                       for i, (d, n, r) in enumerate(zip(distances, lengths, returns))]  # fmt: skip
    ev.summarize(result, max_episode_steps)
    return result


def test_score_is_forward_distance_times_fraction_survived_computed_by_hand():
    # episode 1: 2.0 m in all 1000 steps -> 2.0; episode 2: 3.0 m, fell after 250 steps -> 0.75; mean 1.375
    result = evaluated("hops", [2.0, 3.0], [1000, 250], [900.0, 300.0])
    assert result.score == pytest.approx(1.375) and result.forward_distance == pytest.approx(2.5)
    assert result.mean_return == pytest.approx(600.0) and result.std_return == pytest.approx(300.0)
    assert result.mean_length == pytest.approx(625.0) and result.falls == 1


def test_ranking_prefers_progress_over_standing_still_and_puts_failures_last():
    stands = evaluated("stands", [0.02, -0.01], [1000, 1000], [1000.0, 1000.0])  # high return, no progress
    hops = evaluated("hops", [2.0, 1.6], [1000, 1000], [600.0, 550.0])  # 1.8
    lunges = evaluated("lunges", [1.5, 1.5], [100, 100], [200.0, 210.0])  # far, then falls: 1.5 m x 10% survived = 0.15
    backwards = evaluated("backwards", [-1.0, -1.0], [1000, 1000], [900.0, 900.0])  # -1.0
    still_but_shorter = evaluated("still_but_shorter", [0.0, 0.03], [500, 500], [500.0, 500.0])  # about 0: by return
    drifts_back_a_little = evaluated("drifts_back_a_little", [-0.1, -0.1], [800, 800], [150.0, 150.0])  # -0.08 counts as 0
    falls_at_once = evaluated("falls_at_once", [-0.01, -0.01], [20, 20], [19.0, 19.0])
    crashed = ev.PolicyResult(name="crashed", path="crashed.py", error="policy(obs) raised ZeroDivisionError")
    no_code = ev.PolicyResult(name="no_code", error="the response has no complete ```python block")
    ranked = ev.rank([crashed, falls_at_once, stands, lunges, backwards, no_code, hops, drifts_back_a_little, still_but_shorter])
    assert [r.name for r in ranked] == ["hops", "lunges", "stands", "still_but_shorter", "drifts_back_a_little", "falls_at_once",
                                        "backwards", "crashed", "no_code"]  # fmt: skip
    assert hops.score == pytest.approx(1.8) and lunges.score == pytest.approx(0.15)
    assert ev.best_of(ranked) is hops and ev.best_of([crashed, no_code]) is None


# ---------------------------------------------------------------------------------------------------------
# Several files: a ranking, reports, videos
# ---------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def evaluated_files(tmp_path_factory):
    """One evaluation of good and failing files with videos, JSON and Markdown; several tests read what it wrote."""
    tmp = tmp_path_factory.mktemp("evaluate")
    files = tuple(write(tmp, name, code) for name, code in
                  [("nan", NAN), ("still", STILL), ("hostile", HOSTILE), ("forward", FORWARD), ("raises", RAISES)])  # fmt: skip
    (tmp / "reports").mkdir()
    args = ep.Args(policies=files, episodes=2, max_episode_steps=25, video_dir=str(tmp / "videos"),
                   json=str(tmp / "reports" / "r.json"), markdown=str(tmp / "reports" / "r.md"))  # fmt: skip
    status = ep.main(args)
    return status, tmp


def test_several_files_are_ranked_with_failures_last_and_their_reasons(evaluated_files):
    status, tmp = evaluated_files
    report = json.loads((tmp / "reports" / "r.json").read_text())
    by_name = {c["name"]: c for c in report["candidates"]}
    assert status == 0 and report["best"] in ("forward", "still") and report["env_id"] == "Hopper-v4"
    assert report["seeds"] == "1..2" and report["max_episode_steps"] == 25 and report["score_rule"] == ev.SCORE_RULE
    assert "NaN" in by_name["nan"]["error"] and "IndexError" in by_name["raises"]["error"]
    assert by_name["hostile"]["error"].startswith("refused by the checks") and "subprocess" in by_name["hostile"]["error"]
    for name in ("forward", "still"):
        c = by_name[name]
        assert c["error"] is None and [e["seed"] for e in c["episodes"]] == [1, 2] and c["forward_distance"] is not None
    assert [c["name"] for c in report["candidates"]][-3:] == ["nan", "hostile", "raises"]  # failed last, in their order


def test_video_is_written_for_each_policy_that_ran_and_linked_from_the_markdown(evaluated_files):
    _, tmp = evaluated_files
    report = (tmp / "reports" / "r.md").read_text()
    header = next(line for line in report.splitlines() if line.startswith("| rank"))
    assert [cell.strip() for cell in header.strip("|").split("|")] == [
        "rank", "candidate", "score", "return", "length", "forward (m)", "falls", "mean abs action", "video", "error"]  # fmt: skip
    for name in ("forward", "still"):
        assert (tmp / "videos" / f"{name}.mp4").stat().st_size > 1000
        assert f"[mp4](../videos/{name}.mp4)" in report and f"[{name}](../{name}.py)" in report
    assert not (tmp / "videos" / "nan.mp4").exists() and not (tmp / "videos" / "hostile.mp4").exists()


def test_no_video_is_rendered_with_no_video(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ep.Args(policies=(write(tmp_path, "still", STILL),), episodes=1, max_episode_steps=5, video=False)
    assert ep.main(args) == 0
    assert not (tmp_path / "videos").exists() and not list(tmp_path.rglob("*.mp4"))


def test_one_policy_that_fails_exits_1_with_its_reason(tmp_path, capsys):
    args = ep.Args(policies=(write(tmp_path, "nan", NAN),), episodes=1, max_episode_steps=5, video=False)
    assert ep.main(args) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: no policy passed evaluation: ")


# ---------------------------------------------------------------------------------------------------------
# Trained agents (.cleanrl_model) measured beside guides, in one table
# ---------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained_agent(tmp_path_factory):
    """A real small CAMEL+ agent (a masking-aware actor) saved by `camel_plus_td3.py` in CleanRL's format (300 steps: it
    acts, badly), beside its run's finished.json."""
    tmp = tmp_path_factory.mktemp("agent")
    run = run_script(ROOT / "camel_plus_td3.py", "--env-id", "Hopper-v4", "--llm-policy", ROOT / "policies/hopper.py",
                     "--total-timesteps", "300", "--learning-starts", "100", "--checkpoint-frequency", "0", "--eval-episodes", "2",
                     "--torch-threads", "1", "--run-name", "small", cwd=tmp)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    return tmp / "runs" / "small" / "camel_plus_td3.cleanrl_model"


def test_an_agent_is_measured_like_a_guide_and_ranked_beside_it(tmp_path, trained_agent):
    from camel_utils.agent import load_agent

    guide = write(tmp_path, "still", STILL)
    (tmp_path / "reports").mkdir()
    run = run_cli("--env-id", "Hopper-v4", guide, str(trained_agent), "--episodes", "2", "--max-episode-steps", "40",
                  "--video-dir", "videos", "--json", "reports/r.json", "--markdown", "reports/r.md", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads((tmp_path / "reports" / "r.json").read_text())
    by_name = {c["name"]: c for c in report["candidates"]}
    assert set(by_name) == {"still", "camel_plus_td3"} and by_name["still"]["kind"] == "guide"
    agent = by_name["camel_plus_td3"]
    assert agent["kind"] == "agent" and agent["error"] is None and [e["seed"] for e in agent["episodes"]] == [1, 2]

    # the same numbers as the loaded agent (camel_utils/agent.py) run by hand, unmasked, from the same seeds
    env = gym.make("Hopper-v4", max_episode_steps=40)
    policy = load_agent(trained_agent)
    for episode, seed in zip(agent["episodes"], [1, 2]):
        obs, _ = env.reset(seed=seed)
        x_start, total, steps = env.unwrapped.data.qpos[0], 0.0, 0
        while True:
            obs, reward, terminated, truncated, _ = env.step(policy(obs))
            total, steps = total + float(reward), steps + 1
            if terminated or truncated:
                break
        assert episode["return"] == total and episode["length"] == steps and episode["fell"] == terminated
        assert episode["forward_distance"] == pytest.approx(env.unwrapped.data.qpos[0] - x_start)
    assert agent["score"] == pytest.approx(np.mean([e["forward_distance"] * e["length"] / 40 for e in agent["episodes"]]))

    # one table, both ranked, each with its video
    markdown = (tmp_path / "reports" / "r.md").read_text()
    assert markdown.startswith("# Guide policies and trained agents for Hopper-v4")
    rows = [line for line in markdown.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")]
    assert sorted(row.split("|")[2].strip().split("]")[0][1:] for row in rows) == ["camel_plus_td3", "still"]
    assert f"[camel_plus_td3]({Path(os.path.relpath(trained_agent, tmp_path / 'reports')).as_posix()})" in markdown
    assert "[mp4](../videos/camel_plus_td3.mp4)" in markdown and (tmp_path / "videos" / "camel_plus_td3.mp4").stat().st_size > 1000
    assert "camel_plus_td3" in run.stdout and "still" in run.stdout


def test_an_agent_evaluated_from_its_runs_start_states_returns_what_the_run_logged(tmp_path, trained_agent):
    """The run (seed 1, 2 evaluation episodes) evaluated on seeds 100001 and 100002; evaluate_policy.py measures with
    the same arithmetic (camel_utils/agent.py), so from those seeds its return is the run's last one, exactly."""
    finished = json.loads((trained_agent.parent / "finished.json").read_text())
    run = run_cli("--env-id", "Hopper-v4", str(trained_agent), "--seed", "100001", "--episodes", "2", "--json", "r.json", "--video-dir", "videos",
                  cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    (agent,) = json.loads((tmp_path / "r.json").read_text())["candidates"]
    assert [e["seed"] for e in agent["episodes"]] == [100001, 100002]
    assert agent["mean_return"] == finished["final_eval_return"]  # filmed: rendering leaves the episodes as they were


def test_a_ranked_agent_is_never_advised_as_what_to_train_with():
    """A trained agent is what training makes: the report names it best, and advises no training with it."""
    agent = ev.PolicyResult(name="td3", path="runs/x/td3.cleanrl_model", kind="agent", episodes=[{"seed": 1, "return": 900.0, "length": 1000,
                            "fell": False, "forward_distance": 3.0, "mean_abs_action": 0.4}])  # fmt: skip
    ev.summarize(agent, 1000)
    markdown, data = ev.report([agent], {"env_id": "Hopper-v4"})
    assert data["best"] == "td3" and data["candidates"][0]["kind"] == "agent"
    assert "best: td3 (a trained agent; no guide file was ranked)" in markdown and "train with" not in markdown


def test_a_guide_that_makes_no_progress_is_not_advised_and_the_report_says_why():
    def result(name, kind, forward, ret):
        r = ev.PolicyResult(name=name, path=f"{name}.py", kind=kind, episodes=[{"seed": 1, "return": ret, "length": 1000,
                            "fell": False, "forward_distance": forward, "mean_abs_action": 0.0}])  # fmt: skip
        ev.summarize(r, 1000)
        return r

    zero_torque, agent = result("zero_torque", "guide", 0.02, 1000.0), result("hopper", "agent", 3.0, 3000.0)
    ranked = ev.rank([zero_torque, agent])
    line = ev.advice(ranked, "Hopper-v4")
    assert line.startswith("no guide makes progress: the best, zero_torque, scores 0.02 (0.02 m forward)") and "train with" not in line
    assert ev.makes_progress(result("walker", "guide", 0.5, 300.0)) and not ev.makes_progress(zero_torque)
    walker = result("walker", "guide", 0.5, 300.0)
    assert ev.advice(ev.rank([zero_torque, walker]), "Hopper-v4").startswith("best guide: walker; train with: python ")


@pytest.mark.parametrize("case, message", [
    ("another_env", "its actor takes 17 inputs (observations of size 11 and 6 bounds) and gives 3 actions, but Walker2d-v4 has 17 "
                    "observations and 6 actions; was it trained on another env?"),
    ("text", "not a CleanRL-format model"),
    ("not_cleanrl", "not a CleanRL-format model"),
])  # fmt: skip
def test_a_model_file_that_is_not_a_cleanrl_agent_for_this_env_is_one_error_line(tmp_path, trained_agent, case, message):
    """Even beside a guide that could run: the command names a file that cannot be what it asks for."""
    import torch

    model, env_id = tmp_path / f"{case}.cleanrl_model", "Hopper-v4"
    if case == "another_env":
        model, env_id = trained_agent, "Walker2d-v4"
    elif case == "text":
        model.write_text("import numpy as np\n\ndef policy(obs):\n    return np.zeros(3)\n")  # a guide under a model's name
    else:
        torch.save({"actor": {"fc1.weight": torch.zeros(2, 2)}}, model)
    run = run_cli("--env-id", env_id, write(tmp_path, "still", STILL), str(model), "--video-dir", "videos", cwd=tmp_path)
    lines = run.stderr.splitlines()
    assert run.returncode == 2 and run.stdout == "" and lines == [lines[0]] and lines[0].startswith(f"error: {model}: ")
    assert message in lines[0] and "Traceback" not in run.stderr and not (tmp_path / "videos").exists()


# ---------------------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------------------
def test_command_line_ranks_files_and_writes_json(tmp_path):
    files = [write(tmp_path, "still", STILL), write(tmp_path, "forward", FORWARD)]
    run = run_cli("--env-id", "Hopper-v4", *files, "--episodes", "1", "--max-episode-steps", "15", "--no-video", "--json", "out.json",
                  cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    # neither moves forward (0.00 and -0.01): none is advised for training
    assert "| rank | candidate" in run.stdout and "no guide makes progress: the best, still, scores 0.00" in run.stdout
    assert "train with" not in run.stdout
    assert {c["name"] for c in json.loads((tmp_path / "out.json").read_text())["candidates"]} == {"still", "forward"}
    assert "\r" not in run.stderr and "it/s" not in run.stderr  # no progress bar drawn into a pipe or a log file


@pytest.mark.parametrize("name, code, message", [
    ("missing", None, "missing.py: no such policy file"),
    ("hostile", HOSTILE, "refused by the checks: hostile.py: line 1 imports 'subprocess'"),
])  # fmt: skip
def test_command_line_on_a_bad_file_gives_one_error_line_and_exit_2(tmp_path, name, code, message):
    if code is not None:
        write(tmp_path, name, code)
    run = run_cli(f"{name}.py", cwd=tmp_path)
    lines = run.stderr.splitlines()
    assert run.returncode == 2 and run.stdout == "" and len(lines) == 1 and lines[0].startswith(f"error: {message}")
    assert not (tmp_path / "videos").exists()


@pytest.mark.parametrize("overrides, message", [
    ({"env_id": "NoSuchEnv-v0"}, "--env-id NoSuchEnv-v0"),
    ({"env_id": "CartPole-v1"}, "Discrete action space"),
    ({"episodes": 0}, "--episodes and --max-episode-steps must be at least 1"),
    ({"policies": ()}, "give at least one policy file"),
])  # fmt: skip
def test_bad_settings_are_one_usage_error_before_anything_is_written(tmp_path, overrides, message):
    args = ep.Args(policies=(write(tmp_path, "still", STILL),), video_dir=str(tmp_path / "videos"), json=str(tmp_path / "r.json"))
    with pytest.raises(ev.UsageError, match=message):
        ep.main(dataclasses.replace(args, **overrides))
    assert not (tmp_path / "videos").exists() and not (tmp_path / "r.json").exists()


def test_progress_draws_no_bar_where_stderr_is_not_a_terminal(capsys):
    with ev.Progress(3, "evaluating", "episode", every=0) as progress:
        progress.set_postfix("still")
        progress.update()
        progress.write("still: score 0.00")
        progress.advance_to(3)
    out, err = capsys.readouterr()
    assert out == "still: score 0.00\n"
    lines = err.splitlines()  # each with the share done and, before the end, the time left at the rate so far
    assert len(lines) == 2 and re.fullmatch(r"evaluating: 1/3 episodes \(33%, \d+ s left\) \| still", lines[0]), lines
    assert lines[1] == "evaluating: 3/3 episodes (100%) | still" and "\r" not in err


def test_a_failure_names_the_policy_file_as_given_not_its_absolute_path(tmp_path):
    (tmp_path / "guides").mkdir()
    write(tmp_path / "guides", "raises", RAISES)
    result = run_cli("--env-id", "Hopper-v4", "guides/raises.py", "--episodes", "1", "--max-episode-steps", "5", "--no-video",
                     "--json", "r.json", cwd=tmp_path)  # fmt: skip
    error = json.loads((tmp_path / "r.json").read_text())["candidates"][0]["error"]
    assert error.startswith("guides/raises.py: policy(obs) raised IndexError") and str(tmp_path) not in error
    assert result.returncode == 1
