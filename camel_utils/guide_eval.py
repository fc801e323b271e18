"""Evaluating guides and trained agents: run each for whole episodes in a child process, measure, film, score, rank
and report. The library behind `evaluate_policy.py` (the command line) and `generate_policy.py` (which hands it
every candidate a language model wrote).

Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896), section 3.1: the
authors ran each Gemini-written candidate for an episode and chose one by watching the videos.

What is evaluated:
- a guide file `policy(obs)` (.py), loaded with camel_utils.guide.load_guide, the same gate camel_td3.py uses (static
  checks, then a trial on sample observations), and read as camel_td3.py reads it: normalised to [-1, 1], then
  mapped to the env's units;
- a trained agent (.cleanrl_model, CleanRL's format, as the trainers save it at the end of a run), loaded with
  camel_utils.agent.load_agent: its actor's deterministic action in the env's units, with the full bounds for a
  masking-aware actor, computed as the trainers' own unmasked evaluation computes it, so that from the same start
  states (--seed {the run's seed + 100000}) it returns what the run logged. A model file is weights (torch.load with
  weights_only=True), so it skips the Python checks; it is refused with one line if it is not a CleanRL-format
  model or was trained on another env.

Each runs in its own child process (`python -m camel_utils.guide_eval JOB.json`, internal) with NumPy's BLAS on one thread, and
is killed with everything it started after its timeout, so one that hangs or crashes cannot stop the others.

The score rewards progress on the task, not standing still: for each episode, the forward distance travelled
(the torso's x position at the end minus at the start, in metres) times the fraction of the episode's step limit
that the robot stayed up; the score is its mean over episodes. So steady forward motion beats unstable forward
motion that falls, which beats standing still, which beats going backwards; a robot that stands still for the
whole episode scores about 0 whatever its return. Progress counts from 10 cm on: scores between -0.1 and 0.1
(standing, or falling on the spot) count as 0, and among equal scores the higher return (here: staying up
longer) wins. Envs without a forward position are scored by return.

The checks are a guard against accidents, not a security sandbox: only run code you would run yourself.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass, field
from functools import partial
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

if sys.platform.startswith("linux"):
    os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering, CPU-only machines included; before MuJoCo loads

import gymnasium as gym
import numpy as np

from camel_utils.cli import Progress, UsageError, command, shown_path
from camel_utils.guide import GuideError, load_guide, one_thread_env, read_and_check, sample_observations, to_env_units, track_robot_camera

# The paper's envs are the v4 MuJoCo ones; Gymnasium's reminder that v5 exists is not news here.
warnings.filterwarnings("ignore", message=r".*is out of date\. You should consider upgrading")

SCORE_RULE = (
    "score = mean over episodes of (forward distance in metres) x (fraction of the episode's step limit survived); "
    "scores between -0.1 and 0.1 (no real progress) count as 0, and among equal scores the higher return wins; "
    "an environment without a forward position is scored by its mean return"
)
AGENT_SUFFIX = ".cleanrl_model"  # a trained agent in CleanRL's format; any other file is a guide
EPISODE_DONE = "guide_eval: episode done"  # what the child prints after each episode, for the progress bar


@dataclass
class PolicyResult:
    """One guide file or trained agent, and what happened when it was checked, run and (optionally) judged."""

    name: str  # the file's name without its suffix (numbered when two files share it)
    path: Optional[str] = None  # its file (None for a generated candidate whose response held no code)
    kind: str = "guide"  # "guide" (a policy(obs) file) or "agent" (a .cleanrl_model)
    error: Optional[str] = None  # why it failed, if it did (one line)
    episodes: list = field(default_factory=list)  # per-episode metrics, see run_episodes
    video: Optional[str] = None
    warnings: list = field(default_factory=list)
    # summary over the episodes (None until evaluated)
    score: Optional[float] = None
    mean_return: Optional[float] = None
    std_return: Optional[float] = None
    mean_length: Optional[float] = None
    forward_distance: Optional[float] = None
    falls: Optional[int] = None
    mean_abs_action: Optional[float] = None
    # a multimodal model's verdict on its video (camel_utils/judge.py), shown beside the score and never part of the ranking
    verdict: Optional[str] = None
    verdict_reason: Optional[str] = None


# ---------------------------------------------------------------------------------------------------------
# Small helpers both scripts use
# ---------------------------------------------------------------------------------------------------------
def one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def now():
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def write_text(path, text):
    """Write a file whole or not at all (write, then rename), so that Ctrl-C never leaves half a file."""
    partial = Path(f"{path}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def write_json(path, data):
    """write_text of data as indented JSON, ending in a newline."""
    write_text(path, json.dumps(data, indent=2) + "\n")


def writable(path, flag, folder=False):
    """Make sure `path` (a file, or with `folder` a folder) can be written, creating folders; one error line if not."""
    target = Path(path) if folder else Path(path).parent
    try:
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=target):
            pass
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write there ({e.strerror or e})")
    if not folder and Path(path).is_dir():
        raise UsageError(f"{flag} {path} is a folder; give a file name")


def make_env(env_id, max_episode_steps=None, render=False):
    kwargs = {"max_episode_steps": max_episode_steps} if max_episode_steps else {}
    return gym.make(env_id, render_mode="rgb_array" if render else None, **kwargs)


def check_env(env_id):
    """The env's default step limit; one error line if the env does not exist or its actions are not continuous."""
    try:
        env = make_env(env_id)
    except gym.error.Error as e:
        raise UsageError(f"--env-id {env_id}: {one_line(e)}")
    if not isinstance(env.action_space, gym.spaces.Box):
        raise UsageError(f"{env_id} has a {type(env.action_space).__name__} action space; CAMEL guides need a continuous (Box) one")
    steps = env.spec.max_episode_steps
    env.close()
    return steps


# ---------------------------------------------------------------------------------------------------------
# Guides and agents: what is checked before anything runs
# ---------------------------------------------------------------------------------------------------------
def is_agent(path):
    return str(path).endswith(AGENT_SUFFIX)


def agent_for(path, env):
    """A trained agent (camel_utils.agent.load_agent) that fits the env: obs -> action in the env's units; GuideError
    with one line naming the file if it is not a CleanRL-format model or was trained on another env."""
    from camel_utils.agent import load_agent  # torch: only agents need it, so judging guides stays light

    try:
        return load_agent(path, env)
    except (OSError, ValueError) as e:
        raise GuideError(f"{path}: {e}") from None


def checked(paths, env_id):
    """A PolicyResult per file, named after it (numbered when two share a name, e.g. policies/hopper.py and
    candidates/hopper.py), holding the refusal if there is one: a guide's static checks, an agent's loading."""
    results = []
    for i, path in enumerate(paths):
        name = Path(path).name.removesuffix(AGENT_SUFFIX) if is_agent(path) else Path(path).stem
        if name in {r.name for r in results}:
            name = f"{name}_{i + 1}"
        result = PolicyResult(name=name, path=str(path), kind="agent" if is_agent(path) else "guide")
        try:
            if result.kind == "agent":
                env = make_env(env_id)
                try:
                    agent_for(path, env)
                finally:
                    env.close()
            else:
                read_and_check(path)
        except GuideError as e:
            result.error = str(e) if result.kind == "agent" else f"refused by the checks: {e}"
        results.append(result)
    return results


# ---------------------------------------------------------------------------------------------------------
# One policy's episodes (run in the child process)
# ---------------------------------------------------------------------------------------------------------
class Video:
    """Streams rendered frames into an MP4 file (moviepy's ffmpeg writer), so no episode has to fit in memory."""

    def __init__(self, path, fps):
        self.path, self.fps, self.writer = path, fps, None

    def add(self, frame):
        if self.writer is None:
            from moviepy.video.io.ffmpeg_writer import FFMPEG_VideoWriter

            self.writer = FFMPEG_VideoWriter(self.path, (frame.shape[1], frame.shape[0]), self.fps)
        self.writer.write_frame(frame)

    def close(self):
        if self.writer is not None:
            self.writer.close()


def start_video(env, path):
    """A Video for the env's frames, about 30 per second of simulated time (plenty to judge a gait), and the
    frame stride that gives them; MuJoCo's camera is set up to follow the robot."""
    fps = env.metadata.get("render_fps") or 30
    stride = max(1, round(fps / 30))
    track_robot_camera(env)
    return Video(path, fps / stride), stride


def run_episodes(policy_path, env_id, seeds, max_episode_steps=None, video_path=None, trial_timeout=20.0, on_episode=lambda: None):
    """Run a guide or a trained agent for one episode per seed and measure each episode. Called in the child.

    A guide is loaded with camel_utils.guide.load_guide, the same gate the trainers use (static checks, then a trial on
    sample observations in a further child), and acts through the Guide wrapper: a call that raises, takes over a
    second, or returns NaN or the wrong shape ends the evaluation with that reason; its normalised action is mapped to
    the env's units. An agent (.cleanrl_model) is loaded with camel_utils.agent.load_agent and acts in the env's units,
    as the run's unmasked evaluation did.
    Returns {"episodes": [...], "error": ..., "video_error": ..., "max_episode_steps": ...}.
    """
    result = {"episodes": [], "error": None, "video_error": None}
    env = make_env(env_id, max_episode_steps, render=video_path is not None)
    result["max_episode_steps"] = env.spec.max_episode_steps
    video = None
    if video_path:
        try:
            video, stride = start_video(env, video_path)
        except Exception as e:  # no video is no reason to fail the policy
            result["video_error"] = f"{type(e).__name__}: {one_line(e)}"
    try:
        action_dim = int(np.prod(env.action_space.shape))
        if is_agent(policy_path):
            act = partial(agent_action, agent_for(policy_path, env))
        else:
            guide = load_guide(policy_path, sample_observations(env, seed=seeds[0]), action_dim, timeout=trial_timeout)
            act = partial(guide_action, guide, action_space=env.action_space)
        for episode, seed in enumerate(seeds):
            obs, _ = env.reset(seed=seed)
            x_start = float(env.unwrapped.data.qpos[0]) if hasattr(env.unwrapped, "data") else None
            total_reward, steps, abs_action, info = 0.0, 0, 0.0, {}
            recording = video is not None and episode == 0
            while True:
                if recording and steps % stride == 0:
                    try:
                        video.add(env.render())
                    except Exception as e:  # no video is no reason to fail the policy
                        result["video_error"], recording = f"{type(e).__name__}: {one_line(e)}", False
                try:
                    action, env_action = act(obs)
                except GuideError as e:
                    raise GuideError(f"policy(obs) failed at step {steps} of episode {episode + 1} (seed {seed}): {e}") from None
                obs, reward, terminated, truncated, info = env.step(env_action)
                total_reward, steps, abs_action = total_reward + float(reward), steps + 1, abs_action + float(np.mean(np.abs(action)))
                if terminated or truncated:
                    break
            # forward distance only where the env measures forward progress (its info reports x_position)
            has_x = x_start is not None and "x_position" in info
            result["episodes"].append({
                "seed": seed, "return": total_reward, "length": steps, "fell": bool(terminated),
                "forward_distance": float(env.unwrapped.data.qpos[0]) - x_start if has_x else None,
                "mean_abs_action": abs_action / steps,
            })  # fmt: skip
            on_episode()
    except GuideError as e:
        result["error"] = str(e)
    finally:
        if video is not None:
            video.close()
        env.close()
    return result


def guide_action(guide, obs, action_space):
    """A guide's action, normalised to [-1, 1] as the trainers read it, and in the env's units; GuideError with the
    guide's reason if its call failed."""
    action = guide(obs)
    if action is None:
        raise GuideError(guide.last_error)
    return action, to_env_units(action, action_space)


def agent_action(agent, obs):
    """A trained agent's action, normalised and in the env's units: the latter exactly what its run's evaluation
    stepped the env with."""
    action = agent.normalized_action(obs)
    return action, agent.to_env_units(action)


def worker(job_file):
    """The child's side: run the episodes, announce each on stdout for the progress bar, write the result file."""
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    result = run_episodes(job["policy"], job["env_id"], job["seeds"], job["max_episode_steps"], job["video"], job["trial_timeout"],
                          on_episode=lambda: print(EPISODE_DONE, flush=True))  # fmt: skip
    Path(job["result"]).write_text(json.dumps(result), encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------
# The parent's side: one child process per policy, with a wall-clock timeout
# ---------------------------------------------------------------------------------------------------------
def run_child(command, cwd, timeout, on_line):
    """Run `command` in its own process group with one BLAS thread, passing each stdout line to `on_line`; kill the
    whole group (the guide's trial child included) after `timeout` seconds or on Ctrl-C.
    Returns (exit code, timed out, stderr)."""
    with tempfile.TemporaryFile("w+") as stderr:
        child = subprocess.Popen(command, cwd=cwd, env=one_thread_env(), stdout=subprocess.PIPE, stderr=stderr, text=True,
                                 start_new_session=True)  # fmt: skip
        start = time.monotonic()
        timer = threading.Timer(timeout, os.killpg, (child.pid, signal.SIGKILL))
        timer.start()
        try:
            for line in child.stdout:
                on_line(line)
            child.wait()
        finally:
            timer.cancel()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)  # whatever is left of the group
        stderr.seek(0)
        return child.returncode, time.monotonic() - start >= timeout, stderr.read()


def evaluate_one(result, env_id, seeds, max_episode_steps=None, video_path=None, timeout=300.0, on_episode=lambda: None):
    """Run one policy's episodes in a child process and fill in its metrics, video and error."""
    video_path = Path(video_path).resolve() if video_path else None
    with tempfile.TemporaryDirectory(prefix="camel_eval_") as tmp:
        job_file, result_file = Path(tmp) / "job.json", Path(tmp) / "result.json"
        job = {"policy": str(Path(result.path).resolve()), "env_id": env_id, "seeds": list(seeds), "max_episode_steps": max_episode_steps,
               "video": video_path and str(video_path), "result": str(result_file),
               "trial_timeout": min(20.0, timeout / 3)}  # load_guide's trial gets a share of the time  # fmt: skip
        job_file.write_text(json.dumps(job), encoding="utf-8")
        command = [sys.executable, "-m", "camel_utils.guide_eval", str(job_file)]

        def on_line(line):  # the guide may print too; only the child's own lines count as episodes
            if line.startswith(EPISODE_DONE):
                on_episode()

        code, timed_out, stderr = run_child(command, tmp, timeout, on_line)
        outcome = json.loads(result_file.read_text(encoding="utf-8")) if result_file.exists() else None
    result.warnings = [line for line in stderr.splitlines() if line.startswith("warning:")]
    if timed_out:
        result.error = f"did not finish {len(seeds)} episodes within --eval-timeout {timeout:g} s (does it hang?)"
    elif outcome is None:
        last_line = (stderr.strip().splitlines() or ["no output"])[-1]
        result.error = f"the evaluation process died (exit code {code}): {one_line(last_line)}"
    else:
        # the child saw the file's absolute path; the report names it as the user gave it
        result.error = outcome["error"] and outcome["error"].replace(job["policy"], str(result.path))
        result.episodes = outcome["episodes"]
        if outcome["video_error"]:
            result.warnings.append(f"warning: no video: {outcome['video_error']}")
        summarize(result, outcome["max_episode_steps"])
    if video_path is not None and video_path.exists():
        result.video = str(video_path)


def evaluate_all(results, env_id, seeds, max_episode_steps=None, video_dir=None, timeout=300.0, after_each=lambda result: None):
    """Evaluate the policies that passed the checks, one child process each, under one progress bar;
    `after_each(result)` runs when each is done (the judge looks at its video there, generate_policy.py rewrites
    its report)."""
    runnable = [r for r in results if r.error is None]
    with Progress(len(runnable) * len(seeds), "evaluating", "episode") as progress:
        for result in runnable:
            progress.set_postfix(result.name)
            done = progress.n
            video_path = Path(video_dir) / f"{result.name}.mp4" if video_dir else None
            evaluate_one(result, env_id, seeds, max_episode_steps, video_path, timeout, on_episode=progress.update)
            progress.advance_to(done + len(seeds))  # a policy that failed early skips its remaining episodes
            if result.error:
                progress.write(f"{result.name}: failed: {result.error}")
            else:
                progress.write(f"{result.name}: score {result.score:.2f}, return {result.mean_return:.1f}, "
                               f"fell in {result.falls} of {len(result.episodes)}")  # fmt: skip
            after_each(result)


# ---------------------------------------------------------------------------------------------------------
# Score, ranking, report
# ---------------------------------------------------------------------------------------------------------
def summarize(result, max_episode_steps):
    """The policy's summary metrics and score over its episodes (the score is explained at the top)."""
    episodes = result.episodes
    if not episodes or result.error:
        return
    returns = [e["return"] for e in episodes]
    result.mean_return, result.std_return = float(np.mean(returns)), float(np.std(returns))
    result.mean_length = float(np.mean([e["length"] for e in episodes]))
    result.falls = sum(e["fell"] for e in episodes)
    result.mean_abs_action = float(np.mean([e["mean_abs_action"] for e in episodes]))
    if all(e["forward_distance"] is not None for e in episodes):
        result.forward_distance = float(np.mean([e["forward_distance"] for e in episodes]))
        survived = [e["length"] / max_episode_steps if max_episode_steps else 1.0 for e in episodes]
        result.score = float(np.mean([e["forward_distance"] * s for e, s in zip(episodes, survived)]))
    else:
        result.score = result.mean_return


NO_PROGRESS = 0.1  # scores between -0.1 and 0.1: no real progress (the score rule above)


def rank(results):
    """Best first: by score (-0.1 to 0.1 counting as 0), then by return; failed policies last, in their order.
    A judge's verdict plays no part."""

    def key(r):
        if r.error or r.score is None:
            return (1, 0.0, 0.0)
        return (0, 0.0 if abs(r.score) < NO_PROGRESS else -r.score, -r.mean_return)

    return sorted(results, key=key)


def best_of(ranked):
    """The winner of a ranking, or None if no policy was evaluated successfully."""
    return ranked[0] if ranked and ranked[0].error is None and ranked[0].score is not None else None


def makes_progress(result):
    """Whether a policy moves the robot forward: a score of at least 0.1 (below, the score rule counts it as 0), or any
    score where the env has no forward position (its score is the return)."""
    return result.forward_distance is None or (result.score or 0.0) >= NO_PROGRESS


def train_command(result, env_id):
    """How to train CAMEL with a ranked guide file (never with a trained agent: it is what training makes), as the
    user can paste it where they stand."""
    return command("camel_td3.py", "--env-id", env_id, "--llm-policy", shown_path(result.path))


def advice(ranked, env_id):
    """The ranking's last word: which guide to train with, and how; or, where no guide moves the robot or only trained
    agents were ranked, that none is worth training with, and why."""
    guides = [r for r in ranked if r.kind == "guide" and r.error is None and r.score is not None]
    agents = [r for r in ranked if r.kind == "agent" and r.error is None and r.score is not None]
    if not guides:
        return f"best: {agents[0].name} (a trained agent; no guide file was ranked)" if agents else None
    best = guides[0]
    if not makes_progress(best):
        return (f"no guide makes progress: the best, {best.name}, scores {best.score:.2f} ({best.forward_distance:.2f} m forward); "
                "training with it would mask towards standing still. Write or generate a better one (generate_policy.py)")  # fmt: skip
    return f"best guide: {best.name}; train with: {train_command(best, env_id)}"


def markdown_table(rows):
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(str(cell).ljust(w) for cell, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def results_table(ranked, out=None):
    """The ranking as a Markdown table; with `out` (a folder), names and videos link to their files relative to it.
    Where a judge looked at the videos, its verdict and reason stand beside the numbers (they do not rank)."""

    def link(text, path):
        return f"[{text}]({Path(os.path.relpath(path, out)).as_posix()})" if out and path else text

    def cell(text):
        return (text or "").replace("|", "\\|")

    judged = any(r.verdict for r in ranked)
    columns = ["rank", "candidate", "score", "return", "length", "forward (m)", "falls", "mean abs action"]
    rows = [columns + (["video"] if out else []) + (["judge", "judge's reason"] if judged else []) + ["error"]]
    for i, r in enumerate(ranked, 1):
        ok = r.error is None and r.score is not None
        n = len(r.episodes)
        rows.append([
            i if ok else "-", link(r.name, r.path),
            f"{r.score:.2f}" if ok else "", f"{r.mean_return:.1f} ± {r.std_return:.1f}" if ok else "",
            f"{r.mean_length:.0f}" if ok else "", f"{r.forward_distance:.2f}" if ok and r.forward_distance is not None else "",
            f"{r.falls}/{n}" if ok else "", f"{r.mean_abs_action:.2f}" if ok else "",
        ] + ([link("mp4", r.video) if r.video else ""] if out else []) + ([r.verdict or "", cell(r.verdict_reason)] if judged else [])
          + [cell(r.error)])  # fmt: skip
    return markdown_table(rows)


def report(ranked, info, out=None):
    """A ranking as (Markdown text, JSON data), headed by `info` (settings, provenance; env_id first); with `out`,
    the Markdown links each policy and video relative to that folder."""
    best = best_of(ranked)
    data = {**info, "score_rule": SCORE_RULE, "best": best and best.name, "candidates": [asdict(r) for r in ranked]}
    what = "Guide policies and trained agents" if any(r.kind == "agent" for r in ranked) else "Guide policies"
    lines = [f"# {what} for {info['env_id']}", ""]
    lines += [f"- {key.replace('_', ' ')}: {value}" for key, value in info.items() if key != "env_id" and value is not None]
    lines += [f"- ranked by: {SCORE_RULE}", ""]
    if best:
        lines += [advice(ranked, info["env_id"]), ""]
    else:
        lines += ["No candidate has passed evaluation (yet).", ""]
    lines += [results_table(ranked, out), ""]
    if any(r.video for r in ranked):
        lines += ["Videos show each candidate's first episode; the return alone can mislead, so watch them before you choose.", ""]
    if any(r.verdict for r in ranked):
        lines += ["The judge's verdicts come from a few frames of each video; they stand beside the score and do not change the ranking.", ""]
    notes = [f"- {r.name}: {w}" for r in ranked for w in r.warnings]
    lines += ["Warnings:", *notes, ""] if notes else []
    return "\n".join(lines), data


if __name__ == "__main__":  # `python -m camel_utils.guide_eval JOB.json`: one policy's episodes, in the child process evaluate_one starts
    worker(sys.argv[1])
