# Judge CAMEL guide policies: run each `policy(obs)` file for whole episodes, measure it, film it, score and rank.
# Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896), section 3.1: the
# authors ran each Gemini-written candidate for an episode and chose one by watching the videos. This script does
# that judging for any policy file; generate_policy.py calls it on every candidate it receives.
#
# Usage:
#   python evaluate_policy.py --env-id Hopper-v4 policies/hopper.py                    # metrics, and a video in videos/
#   python evaluate_policy.py --env-id Hopper-v4 policies/candidates/hopper/*.py --markdown ranking.md   # a ranking
#   python evaluate_policy.py --env-id Hopper-v4 policies/hopper.py --seed 0 --episodes 5 --no-video --json hopper.json
#
# Each policy runs in its own child process (`python evaluate_policy.py --worker JOB.json`, internal) with NumPy's
# BLAS on one thread, and is killed with everything it started after --eval-timeout seconds, so a policy that hangs
# or crashes cannot stop the others. Inside, it is loaded with camel_guide.load_guide, the same gate camel_td3.py
# uses, and its actions are read as camel_td3.py reads them: normalised to [-1, 1], then mapped to the env's units.
#
# The score rewards progress on the task, not standing still: for each episode, the forward distance travelled
# (the torso's x position at the end minus at the start, in metres) times the fraction of the episode's step limit
# that the robot stayed up; the score is its mean over episodes. So steady forward motion beats unstable forward
# motion that falls, which beats standing still, which beats going backwards; a robot that stands still for the
# whole episode scores about 0 whatever its return. Progress counts from 10 cm on: scores between -0.1 and 0.1
# (standing, or falling on the spot) count as 0, and among equal scores the higher return (here: staying up
# longer) wins. Envs without a forward position are scored by return.
#
# The checks are a guard against accidents, not a security sandbox: only run code you would run yourself.
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
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Optional

if sys.platform.startswith("linux"):
    os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering, CPU-only machines included; before MuJoCo loads

import gymnasium as gym
import numpy as np
import tyro
from tqdm import tqdm

from camel_guide import GuideError, load_guide, one_thread_env, read_and_check, sample_observations, to_env_units, track_robot_camera

# The paper's envs are the v4 MuJoCo ones; Gymnasium's reminder that v5 exists is not news here.
warnings.filterwarnings("ignore", message=r".*is out of date\. You should consider upgrading")

SCORE_RULE = (
    "score = mean over episodes of (forward distance in metres) x (fraction of the episode's step limit survived); "
    "scores between -0.1 and 0.1 (no real progress) count as 0, and among equal scores the higher return wins; "
    "an environment without a forward position is scored by its mean return"
)
WORKER_MODE = "--worker"  # `python evaluate_policy.py --worker JOB.json`: one policy's episodes, in a child process
EPISODE_DONE = "evaluate_policy: episode done"  # what the worker prints after each episode, for the progress bar


@dataclass
class Args:
    """Run guide policies `policy(obs)` for whole episodes, measure, film, score and rank them. Each policy runs in
    its own child process with one BLAS thread (OMP/MKL/OPENBLAS_NUM_THREADS=1), killed after --eval-timeout."""

    policies: Annotated[tuple[str, ...], tyro.conf.Positional, tyro.conf.arg(metavar="POLICY.py...", help_behavior_hint="(one or more)")]
    """the policy files to evaluate; several are ranked"""
    env_id: str = "Hopper-v4"
    """the Gymnasium environment the policies were written for"""
    episodes: int = 5
    """evaluation episodes per policy, with seeds seed, seed+1, ..."""
    seed: int = 1
    """seed of the first evaluation episode"""
    max_episode_steps: Optional[int] = None
    """cut episodes to this many steps (if unset: the env's own limit, 1000 for the MuJoCo robots)"""
    video: bool = True
    """render each policy's first episode to {video_dir}/{name}.mp4 (turn off with --no-video)"""
    video_dir: Optional[str] = None
    """where the videos go (if unset: videos/evaluate__{env_id}__{time})"""
    eval_timeout: float = 300.0
    """wall-clock seconds one policy's evaluation (all its episodes and its video) may take"""
    json: Optional[str] = None
    """also write the metrics (summary and per episode) and the ranking to this JSON file"""
    markdown: Optional[str] = None
    """also write the ranking as a Markdown report to this file (with links to the policies and videos)"""


class UsageError(Exception):
    """A mistake in the command (a flag, a file, the env): reported as one `error:` line, exit status 2."""


@dataclass
class PolicyResult:
    """One policy file, and what happened when it was checked and run."""

    name: str  # the file's name without .py (numbered when two files share it)
    path: Optional[str] = None  # its .py file (None for a generated candidate whose response held no code)
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


def make_env(env_id, max_episode_steps=None, render=False):
    kwargs = {"max_episode_steps": max_episode_steps} if max_episode_steps else {}
    return gym.make(env_id, render_mode="rgb_array" if render else None, **kwargs)


class Progress:
    """A tqdm bar while stderr is a terminal; in a log file, a plain line at most every `every` seconds instead of
    a bar redrawn with carriage returns. `write` prints a line (on stdout) without breaking the bar."""

    def __init__(self, total, desc, unit, every=30.0):
        self.total, self.desc, self.unit, self.every = total, desc, unit, every
        self.n, self.postfix, self.last_line = 0, "", time.monotonic()
        self.bar = tqdm(total=total, desc=desc, unit=unit) if sys.stderr.isatty() else None

    def update(self, n=1):
        self.n += n
        if self.bar is not None:
            self.bar.update(n)
        elif time.monotonic() - self.last_line >= self.every:
            postfix = f" ({self.postfix})" if self.postfix else ""
            print(f"{self.desc}: {self.n}/{self.total} {self.unit}s{postfix}", file=sys.stderr, flush=True)
            self.last_line = time.monotonic()

    def advance_to(self, n):
        if n > self.n:
            self.update(n - self.n)

    def set_postfix(self, text):
        self.postfix = text
        if self.bar is not None:
            self.bar.set_postfix_str(text)

    def write(self, line):
        if self.bar is not None:
            tqdm.write(line)
        else:
            print(line, flush=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False


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
    """Run a guide for one episode per seed and measure each episode. Called in the evaluation child.

    The guide is loaded with camel_guide.load_guide, the same gate camel_td3.py uses (static checks, then a
    trial on sample observations in a further child), and acts through its Guide wrapper: a call that raises,
    takes over a second, or returns NaN or the wrong shape ends the evaluation with that reason.
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
        observations, action_dim = sample_observations(env, seed=seeds[0]), int(np.prod(env.action_space.shape))
        guide = load_guide(policy_path, observations, action_dim, timeout=trial_timeout)
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
                action = guide(obs)  # normalised to [-1, 1], as camel_td3.py reads it
                if action is None:
                    raise GuideError(f"policy(obs) failed at step {steps} of episode {episode + 1} (seed {seed}): {guide.last_error}")
                obs, reward, terminated, truncated, info = env.step(to_env_units(action, env.action_space))
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
        command = [sys.executable, str(Path(__file__).resolve()), WORKER_MODE, str(job_file)]

        def on_line(line):  # the guide may print too; only the worker's own lines count as episodes
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
        result.error = outcome["error"]
        result.episodes = outcome["episodes"]
        if outcome["video_error"]:
            result.warnings.append(f"warning: no video: {outcome['video_error']}")
        summarize(result, outcome["max_episode_steps"])
    if video_path is not None and video_path.exists():
        result.video = str(video_path)


def evaluate_all(results, env_id, seeds, max_episode_steps=None, video_dir=None, timeout=300.0, after_each=lambda result: None):
    """Evaluate the policies that passed the static checks, one child process each, under one progress bar;
    `after_each(result)` runs when each is done (generate_policy.py rewrites its report there)."""
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


def rank(results):
    """Best first: by score (-0.1 to 0.1 counting as 0), then by return; failed policies last, in their order."""

    def key(r):
        if r.error or r.score is None:
            return (1, 0.0, 0.0)
        return (0, 0.0 if abs(r.score) < 0.1 else -r.score, -r.mean_return)

    return sorted(results, key=key)


def best_of(ranked):
    """The winner of a ranking, or None if no policy was evaluated successfully."""
    return ranked[0] if ranked and ranked[0].error is None and ranked[0].score is not None else None


def markdown_table(rows):
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(str(cell).ljust(w) for cell, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def results_table(ranked, out=None):
    """The ranking as a Markdown table; with `out` (a folder), names and videos link to their files relative to it."""

    def link(text, path):
        return f"[{text}]({Path(os.path.relpath(path, out)).as_posix()})" if out and path else text

    columns = ["rank", "candidate", "score", "return", "length", "forward (m)", "falls", "mean abs action"]
    rows = [columns + (["video"] if out else []) + ["error"]]
    for i, r in enumerate(ranked, 1):
        ok = r.error is None and r.score is not None
        n = len(r.episodes)
        rows.append([
            i if ok else "-", link(r.name, r.path),
            f"{r.score:.2f}" if ok else "", f"{r.mean_return:.1f} ± {r.std_return:.1f}" if ok else "",
            f"{r.mean_length:.0f}" if ok else "", f"{r.forward_distance:.2f}" if ok and r.forward_distance is not None else "",
            f"{r.falls}/{n}" if ok else "", f"{r.mean_abs_action:.2f}" if ok else "",
        ] + ([link("mp4", r.video) if r.video else ""] if out else []) + [(r.error or "").replace("|", "\\|")])  # fmt: skip
    return markdown_table(rows)


def report(ranked, info, out=None):
    """A ranking as (Markdown text, JSON data), headed by `info` (settings, provenance; env_id first); with `out`,
    the Markdown links each policy and video relative to that folder."""
    best = best_of(ranked)
    data = {**info, "score_rule": SCORE_RULE, "best": best and best.name, "candidates": [asdict(r) for r in ranked]}
    lines = [f"# Guide policies for {info['env_id']}", ""]
    lines += [f"- {key.replace('_', ' ')}: {value}" for key, value in info.items() if key != "env_id" and value is not None]
    lines += [f"- ranked by: {SCORE_RULE}", ""]
    if best:
        train = f"python camel_td3.py --env-id {info['env_id']} --llm-policy {best.path}"
        lines += [f"Best: **{best.name}**. Train with it: `{train}`", ""]
    else:
        lines += ["No candidate has passed evaluation (yet).", ""]
    lines += [results_table(ranked, out), ""]
    if any(r.video for r in ranked):
        lines += ["Videos show each candidate's first episode; the return alone can mislead, so watch them before you choose.", ""]
    notes = [f"- {r.name}: {w}" for r in ranked for w in r.warnings]
    lines += ["Warnings:", *notes, ""] if notes else []
    return "\n".join(lines), data


# ---------------------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------------------
def checked(paths):
    """A PolicyResult per file, named after it (numbered when two share a name, e.g. policies/hopper.py and
    candidates/hopper.py), holding the static checks' refusal if there is one."""
    results = []
    for i, path in enumerate(paths):
        name = Path(path).stem
        if name in {r.name for r in results}:
            name = f"{name}_{i + 1}"
        result = PolicyResult(name=name, path=str(path))
        try:
            read_and_check(path)
        except GuideError as e:
            result.error = f"refused by the checks: {e}"
        results.append(result)
    return results


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


def main(args):
    """Returns the exit status: 0 when at least one policy passed, 1 when none did. Mistakes raise UsageError."""
    # the settings, the env and the files: each mistake is one error line, before anything is written
    if args.episodes < 1 or args.eval_timeout <= 0 or (args.max_episode_steps is not None and args.max_episode_steps < 1):
        raise UsageError("--episodes and --max-episode-steps must be at least 1, --eval-timeout positive")
    if not args.policies:
        raise UsageError("give at least one policy file, e.g. python evaluate_policy.py --env-id Hopper-v4 policies/hopper.py")
    env_steps = check_env(args.env_id)
    missing = [path for path in args.policies if not Path(path).is_file()]
    if missing:
        raise UsageError(f"{missing[0]}: no such policy file")
    results = checked(args.policies)
    if all(r.error for r in results):  # nothing would run: a bad file, not a ranking
        more = f" (and {len(results) - 1} more files refused)" if len(results) > 1 else ""
        raise UsageError(f"{results[0].error}{more}")

    # where the results go
    video_dir = Path(args.video_dir or f"videos/evaluate__{args.env_id}__{int(time.time())}") if args.video else None
    for path, flag in [(args.json, "--json"), (args.markdown, "--markdown")]:
        if path:
            writable(path, flag)
    if video_dir is not None:
        writable(video_dir, "--video-dir", folder=True)

    # the episodes, one child process per policy
    seeds = [args.seed + k for k in range(args.episodes)]
    try:
        evaluate_all(results, args.env_id, seeds, args.max_episode_steps, video_dir, args.eval_timeout)
    except KeyboardInterrupt:
        print("\ninterrupted: nothing written", file=sys.stderr)
        return 130

    # the ranking, printed and written
    ranked = rank(results)
    print(results_table(ranked))
    info = {"env_id": args.env_id, "evaluated": now(), "episodes_per_candidate": args.episodes,
            "seeds": f"{seeds[0]}..{seeds[-1]}", "max_episode_steps": args.max_episode_steps or env_steps}  # fmt: skip
    if args.json:
        write_text(args.json, json.dumps(report(ranked, info)[1], indent=2) + "\n")
    if args.markdown:
        write_text(args.markdown, report(ranked, info, Path(args.markdown).parent)[0])
    for path in (args.json, args.markdown, video_dir):
        if path:
            print(f"written: {path}")
    best = best_of(ranked)
    if best is None:
        reason = f": {ranked[0].error}" if len(ranked) == 1 else "; the table says why"
        print(f"error: no policy passed evaluation{reason}", file=sys.stderr)
        return 1
    if len(ranked) > 1:
        print(f"best: {best.name}; train with: python camel_td3.py --env-id {args.env_id} --llm-policy {best.path}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == [WORKER_MODE]:
        worker(sys.argv[2])
        sys.exit(0)
    try:
        status = main(tyro.cli(Args))
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        status = 2
    sys.exit(status)
