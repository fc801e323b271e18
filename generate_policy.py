# Ask a language model to write CAMEL guide policies, then check, evaluate, show, rank and select them.
# Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896), section 3.1.
#
# The paper prompts Gemini with the env's observation and action spaces, its task and its MuJoCo XML, asks it
# to think step by step and to write `policy(obs)` in NumPy, generates five candidates, runs each for one
# episode and picks one by watching videos, because the return alone misleads (a Hopper that stands still
# scores well and goes nowhere). This script does that loop and automates the screening:
#   1. fill a prompt template from prompts/ with the env's own documentation and XML (from Gymnasium's files)
#   2. ask the model once per candidate; save each code file, raw response and prompt as soon as it arrives
#   3. refuse code that fails the checks in camel_guide.py (the same ones camel_td3.py applies)
#   4. run each candidate for several episodes in a child process with a wall-clock timeout, rendering a video
#   5. rank by the score below, write report.md / report.json, optionally copy the best (--select best)
#   6. beyond the paper: --iterations K sends the best candidate and its measurements back for a better version
#
# Usage:
#   export GEMINI_API_KEY=...        # or GOOGLE_API_KEY
#   python generate_policy.py --env-id Hopper-v4 --num-candidates 5 --output-dir policies/candidates/hopper
#   python generate_policy.py --env-id Hopper-v4 --base-url http://localhost:11434/v1 --model qwen2.5-coder:32b
#   python generate_policy.py --env-id Hopper-v4 --evaluate policies/hopper.py --video   # score any policy file
#   python generate_policy.py --env-id Hopper-v4 --print-prompt                          # no model called
#
# The score rewards progress on the task, not standing still: for each episode, the forward distance
# travelled (the torso's x position at the end minus at the start, in metres) times the fraction of the
# episode's step limit that the robot stayed up; the score is its mean over episodes. So steady forward
# motion beats unstable forward motion that falls, which beats standing still, which beats going backwards;
# a robot that stands still for the whole episode scores about 0 whatever its return. Progress counts from
# 10 cm on: scores between -0.1 and 0.1 (standing, or falling on the spot) count as 0, and among equal
# scores the higher return (here: staying up longer) wins. Envs without a forward position are scored by return.
#
# The checks are a guard against accidents, not a security sandbox: only run code you would run yourself.
import ast
import contextlib
import hashlib
import inspect
import json
import os
import re
import signal
import string
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal, Optional

if sys.platform.startswith("linux"):
    os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering, CPU-only machines included; before MuJoCo loads

import gymnasium as gym
import numpy as np
import tyro
from tqdm import tqdm

from camel_guide import GuideError, load_guide, one_thread_env, read_and_check, sample_observations, track_robot_camera

# The paper's envs are the v4 MuJoCo ones; Gymnasium's reminder that v5 exists is not news here.
warnings.filterwarnings("ignore", message=r".*is out of date\. You should consider upgrading")

PROMPTS = Path(__file__).resolve().parent / "prompts"
DEFAULT_GEMINI_MODEL = "gemini-pro-latest"  # an alias that follows Google's current Pro model; the paper's gemini-exp-1206 is retired
SCORE_RULE = (
    "score = mean over episodes of (forward distance in metres) x (fraction of the episode's step limit survived); "
    "scores between -0.1 and 0.1 (no real progress) count as 0, and among equal scores the higher return wins; "
    "an environment without a forward position is scored by its mean return"
)
WORKER_FLAG = "--_evaluation-worker"  # hidden entry point: `python generate_policy.py --_evaluation-worker JOB`
EPISODE_DONE = "generate_policy: episode done"  # what the worker prints after each episode, for the progress bar


@dataclass
class Args:
    """Ask a language model for CAMEL guide policies `policy(obs)`, then check, evaluate, rank and select them."""

    env_id: str = "Hopper-v4"
    """the Gymnasium environment (its prompt is prompts/{env_id}.md if that exists, else prompts/generic.md)"""
    num_candidates: int = 5
    """candidate policies to ask for in each round (one request each)"""
    output_dir: Optional[str] = None
    """folder for candidates, responses, prompts, videos and the report
    (if unset: policies/candidates/{env_id}__{time}, or runs/evaluate__{env_id}__{time} with --evaluate)"""

    # the language model
    model: Optional[str] = None
    """the model to ask (if unset: gemini-pro-latest with Gemini; needed with --base-url)"""
    base_url: Optional[str] = None
    """ask an OpenAI-compatible server instead of Gemini, e.g. http://localhost:11434/v1 (Ollama) or
    http://localhost:8000/v1 (vLLM); its key, if any, is read from OPENAI_API_KEY"""
    temperature: Optional[float] = None
    """sampling temperature (if unset: the model's own)"""
    max_output_tokens: Optional[int] = None
    """the most tokens one response may use, thinking included (if unset: the model's own limit)"""
    request_timeout: float = 600.0
    """seconds one request may take (thinking models are slow)"""
    request_attempts: int = 5
    """tries per request when the server answers 408, 429 or 5xx or the connection fails, with exponential backoff"""
    iterations: int = 0
    """refinement rounds after the first: each sends the best candidate so far, with its measurements or error,
    back to the model and asks for improved versions (while no candidate has code, it asks afresh)"""
    prompt_template: Optional[str] = None
    """a prompt template to use instead of the one in prompts/ (placeholders: see prompts/README.md)"""
    print_prompt: bool = False
    """print the filled prompt and exit, without calling any model"""

    # evaluation
    evaluate: tuple[str, ...] = ()
    """score these policy files instead of generating new ones (no model is called)"""
    episodes: int = 5
    """evaluation episodes per candidate, with seeds seed, seed+1, ..."""
    seed: int = 1
    """seed of the first evaluation episode"""
    max_episode_steps: Optional[int] = None
    """cut evaluation episodes to this many steps (if unset: the env's own limit, 1000 for the MuJoCo robots)"""
    video: bool = True
    """render each candidate's first episode to MP4 (turn off with --no-video)"""
    eval_timeout: float = 300.0
    """wall-clock seconds one candidate's evaluation (all its episodes and its video) may take"""

    # selection
    select: Optional[Literal["best"]] = None
    """`best`: copy the top-ranked candidate to --policy-path (without it, the report names the best and you choose)"""
    policy_path: Optional[str] = None
    """where --select best writes the chosen policy (if unset: {output_dir}/selected.py)"""


@dataclass
class Candidate:
    """One guide policy: where it came from, and what happened when it was checked and run."""

    name: str  # round{r}_candidate{i}, or the file's name with --evaluate
    round: int  # 1 for the first generation, 2.. for refinements, 0 for --evaluate
    path: Optional[str] = None  # its .py file (None when the response held no code)
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


class ModelError(Exception):
    """A request that still failed after its retries, or a response without text. The message is one line."""

    def __init__(self, message, details=None):
        super().__init__(message)
        self.details = details or {}


# ---------------------------------------------------------------------------------------------------------
# The environment and its prompt (paper, section 3.1 and Figure 2)
# ---------------------------------------------------------------------------------------------------------
def make_env(env_id, max_episode_steps=None, render=False):
    kwargs = {"max_episode_steps": max_episode_steps} if max_episode_steps else {}
    return gym.make(env_id, render_mode="rgb_array" if render else None, **kwargs)


DOC_SECTIONS = ("Description", "Action", "Observation", "Reward", "Starting", "Episode")  # the rest is about gym.make's arguments


def env_documentation(spec):
    """(id of the documented version, its documentation) from the env class's docstring, keeping the sections
    about the task. The v4 MuJoCo envs have no docstring; then the nearest newer version's (v5) is used."""
    same_env = [s for s in gym.registry.values() if (s.namespace, s.name) == (spec.namespace, spec.name)]
    for other in sorted([s for s in same_env if (s.version or 0) >= (spec.version or 0)], key=lambda s: s.version or 0):
        creator = other.entry_point
        if isinstance(creator, str):
            creator = gym.envs.registration.load_env_creator(creator)
        if creator.__doc__ and creator.__doc__.strip():  # __doc__, not inspect.getdoc: that would fall back to the base class's
            doc = inspect.cleandoc(creator.__doc__)
            sections = re.split(r"^(?=## )", doc, flags=re.M)
            kept = [s for s in sections if s.startswith("## ") and s[3:].startswith(DOC_SECTIONS)]
            doc = "".join(kept) if kept else doc
            return other.id, re.sub(r"```\{figure\}.*?```\s*", "", doc, flags=re.S).strip()  # figures do not survive as text
    return spec.id, "(Gymnasium has no documentation for this environment)"


def fill_template(path, values):
    try:
        return string.Template(Path(path).read_text(encoding="utf-8")).substitute(values)
    except OSError as e:
        raise SystemExit(f"error: cannot read prompt template {path}: {e.strerror or e}")
    except (KeyError, ValueError) as e:
        raise SystemExit(f"error: prompt template {path} has an unknown placeholder ({e}); known: {', '.join(sorted(values))}")


def build_prompt(env, template=None):
    """The filled task prompt and the template it came from: the env's own template in prompts/, else the generic one."""
    spec, unwrapped = env.spec, env.unwrapped
    if template is None:
        template = PROMPTS / f"{spec.id}.md"
        template = template if template.is_file() else PROMPTS / "generic.md"
    docs_id, docs = env_documentation(spec)
    docs_source = f"Gymnasium {gym.__version__}, documentation of {docs_id}"
    if docs_id != spec.id:
        docs_source += f" ({spec.id} has none of its own; where the two differ, the spaces above, read from {spec.id} itself, hold)"
    xml_path = getattr(unwrapped, "fullpath", None)  # the MuJoCo model file the env really loads
    steps, dt = spec.max_episode_steps, getattr(unwrapped, "dt", None)
    episode_length = f"An episode lasts at most {steps} steps" if steps else "Episodes have no step limit"
    episode_length += f"; one step is {dt:g} s of simulated time." if dt else "."
    values = {
        "env_id": spec.id,
        "obs_dim": int(np.prod(env.observation_space.shape)),
        "action_dim": int(np.prod(env.action_space.shape)),
        "observation_space": str(env.observation_space),
        "action_space": str(env.action_space),
        "episode_length": episode_length,
        "docs_source": docs_source,
        "env_docs": docs,
        "xml_file": os.path.basename(xml_path) if xml_path else "none",
        "mujoco_xml": "(none: this environment is not a MuJoCo model)",
    }
    if xml_path:
        values["mujoco_xml"] = Path(xml_path).read_text(encoding="utf-8").strip()
    return fill_template(template, values), Path(template)


# ---------------------------------------------------------------------------------------------------------
# The language model: one function `ask(prompt) -> (text, details)` per backend, one request per candidate
# ---------------------------------------------------------------------------------------------------------
def one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def gemini_backend(model, temperature=None, max_output_tokens=None, timeout=600.0, attempts=5, http_client=None):
    """Gemini through google-genai. `http_client` (an httpx2.Client) is for tests, which pass a mock transport."""
    from google import genai  # imported here: slow to import, and not needed to evaluate or print prompts
    from google.genai import errors, types

    api_key = os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")  # the SDK's order when both are set
    if not api_key:
        raise SystemExit("error: no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), "
                         "or use --base-url and --model for an OpenAI-compatible server")
    http_options = types.HttpOptions(
        timeout=int(timeout * 1000),  # milliseconds
        retry_options=types.HttpRetryOptions(attempts=attempts, http_status_codes=[408, 429, 500, 502, 503, 504]),
        httpx_client=http_client,
    )
    client = genai.Client(api_key=api_key, http_options=http_options)
    # newer Gemini models reject candidate_count > 1, hence one request per candidate
    config = types.GenerateContentConfig(temperature=temperature, max_output_tokens=max_output_tokens)

    def ask(prompt):
        try:
            response = client.models.generate_content(model=model, contents=prompt, config=config)
        except errors.APIError as e:
            raise ModelError(f"Gemini answered {e.code} {e.status or ''}: {one_line(e.message)}") from None
        except Exception as e:  # connection errors and timeouts, once the retries are spent
            raise ModelError(f"request failed: {type(e).__name__}: {one_line(e)}") from None
        first = response.candidates[0] if response.candidates else None
        reason = getattr(first.finish_reason, "value", first.finish_reason) if first else None
        usage = response.usage_metadata.model_dump(mode="json", exclude_none=True) if response.usage_metadata else None
        details = {"model_version": response.model_version, "finish_reason": reason, "usage": usage}
        if not response.text:  # thinking models can spend the whole token budget before writing anything
            blocked = response.prompt_feedback.block_reason if response.prompt_feedback else None
            why = f"prompt blocked: {getattr(blocked, 'value', blocked)}" if blocked else f"finish reason {reason}"
            raise ModelError(f"the response has no text ({why}; if MAX_TOKENS, raise --max-output-tokens)", details)
        return response.text, details

    return ask


def openai_backend(base_url, model, temperature=None, max_output_tokens=None, timeout=600.0, attempts=5):
    """Any OpenAI-compatible chat server: Ollama, vLLM, llama.cpp, or OpenAI itself."""
    import openai

    api_key = os.environ.get("OPENAI_API_KEY") or "unused"  # local servers ignore it, the SDK insists on one
    client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=attempts - 1)
    options = {k: v for k, v in [("temperature", temperature), ("max_tokens", max_output_tokens)] if v is not None}

    def ask(prompt):
        try:
            response = client.chat.completions.create(model=model, messages=[{"role": "user", "content": prompt}], **options)
        except openai.APIStatusError as e:
            raise ModelError(f"{base_url} answered {e.status_code}: {one_line(e.message)}") from None
        except openai.APIError as e:  # connection errors and timeouts, once the retries are spent
            raise ModelError(f"request to {base_url} failed: {type(e).__name__}: {one_line(e)}") from None
        first = response.choices[0] if response.choices else None
        usage = response.usage.model_dump(mode="json", exclude_none=True) if response.usage else None
        details = {"model_version": response.model, "finish_reason": first.finish_reason if first else None, "usage": usage}
        if not first or not first.message.content:
            raise ModelError(f"the response has no text (finish reason {details['finish_reason']})", details)
        return first.message.content, details

    return ask


# ---------------------------------------------------------------------------------------------------------
# From a response to a checked candidate file
# ---------------------------------------------------------------------------------------------------------
def code_blocks(text):
    """The complete ``` fenced blocks of a Markdown text, as (language, code) pairs."""
    blocks, language, lines = [], None, []
    for line in text.splitlines():
        if line.strip().startswith("```"):
            if language is None:
                language, lines = line.strip()[3:].strip().lower(), []
            else:
                blocks.append((language, "\n".join(lines)))
                language = None
        elif language is not None:
            lines.append(line)
    return blocks  # a block left open (a response cut off mid-code) is not complete, so not returned


def defines_policy(code):
    return re.search(r"^(def policy\s*\(|policy\s*=)", code, re.M) is not None


def extract_code(response):
    """The code to keep from a response: the last Python block that defines `policy` (chain-of-thought
    answers often show fragments before the final version); a reply that is bare Python is taken whole."""
    blocks = [code for language, code in code_blocks(response) if language in ("", "python", "py", "python3")]
    blocks = [code for code in blocks if defines_policy(code)]
    if blocks:
        return blocks[-1].strip() + "\n"
    if "```" not in response and defines_policy(response):
        with contextlib.suppress(SyntaxError):
            ast.parse(response)
            return response.strip() + "\n"
    return None


def now():
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def write_text(path, text):
    """Write a file whole or not at all (write, then rename), so that Ctrl-C never leaves half a file."""
    partial = Path(f"{path}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def write_json(path, data):
    write_text(path, json.dumps(data, indent=2) + "\n")


def ask_for_candidate(ask, prompt, prompt_file, name, round_no, out, provenance):
    """Ask once and save what comes back at once: the raw response, the code as `{name}.py` (with a header
    saying where it came from), and `{name}.json` with the provenance. The code is then statically checked."""
    record = {**provenance, "candidate": name, "round": round_no, "requested_at": now(), "prompt_file": prompt_file.name,
              "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest()}  # fmt: skip
    candidate = Candidate(name=name, round=round_no)
    start = time.perf_counter()
    try:
        text, details = ask(prompt)
    except ModelError as e:
        candidate.error = f"request failed: {e}"
        write_json(out / f"{name}.json", {**record, **e.details, "seconds": round(time.perf_counter() - start, 1), "error": str(e)})
        return candidate
    record.update(details, seconds=round(time.perf_counter() - start, 1), response_file=f"{name}.response.md")
    write_text(out / f"{name}.response.md", text)

    code = extract_code(text)
    if code is None:
        candidate.error = "the response has no complete ```python block defining policy(obs)"
    else:
        header = (f"# Guide policy candidate {name} for {provenance['env_id']}, written by {provenance['model']} "
                  f"({provenance['backend']}) at {record['requested_at']}.\n"
                  f"# Prompt: {prompt_file.name}; raw response: {name}.response.md; details: {name}.json\n\n")  # fmt: skip
        candidate.path = str(out / f"{name}.py")
        write_text(candidate.path, header + code)
        try:
            read_and_check(candidate.path)  # the same static checks camel_td3.py applies
        except GuideError as e:
            candidate.error = f"refused by the checks: {e}"
    write_json(out / f"{name}.json", {**record, "code_file": candidate.path and Path(candidate.path).name, "error": candidate.error})
    return candidate


# ---------------------------------------------------------------------------------------------------------
# Evaluation: whole episodes in a child process, so a candidate that hangs or crashes cannot stop the run
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
    trial on sample observations in a further child), and acts through its SafePolicy: a call that raises,
    takes over a second, or returns NaN or the wrong shape ends the evaluation with that reason.
    Returns {"episodes": [...], "error": ..., "video_error": ..., "max_episode_steps": ...}.
    """
    result = {"episodes": [], "error": None, "video_error": None}
    env = make_env(env_id, max_episode_steps, render=video_path is not None)
    result["max_episode_steps"] = env.spec.max_episode_steps
    low, high = env.action_space.low, env.action_space.high
    video = None
    if video_path:
        try:
            video, stride = start_video(env, video_path)
        except Exception as e:  # no video is no reason to fail the candidate
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
                    except Exception as e:  # no video is no reason to fail the candidate
                        result["video_error"], recording = f"{type(e).__name__}: {one_line(e)}", False
                action = guide(obs)  # normalised to [-1, 1], as camel_td3.py reads it
                if action is None:
                    raise GuideError(f"policy(obs) failed at step {steps} of episode {episode + 1} (seed {seed}): {guide.last_error}")
                env_action = (low + (action + 1) / 2 * (high - low)).astype(env.action_space.dtype)
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


def evaluation_worker(job):
    """The child's side: run the episodes, announce each on stdout for the progress bar, write the result file."""
    job = json.loads(job)
    result = run_episodes(job["policy"], job["env_id"], job["seeds"], job["max_episode_steps"], job["video"], job["trial_timeout"],
                          on_episode=lambda: print(EPISODE_DONE, flush=True))  # fmt: skip
    Path(job["result"]).write_text(json.dumps(result), encoding="utf-8")


def run_child(command, cwd, timeout, on_line):
    """Run `command` in its own process group, passing each stdout line to `on_line`; kill the whole group
    (the guide's trial child included) after `timeout` seconds or on Ctrl-C. Returns (exit code, timed out, stderr)."""
    env = one_thread_env()
    with tempfile.TemporaryFile("w+") as stderr:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True, start_new_session=True)
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


def evaluate_candidate(candidate, args, out, progress):
    """Run the candidate's episodes in a child process and fill in its metrics, video and error."""
    seeds = [args.seed + k for k in range(args.episodes)]
    video = (out / f"{candidate.name}.mp4").resolve() if args.video else None
    with tempfile.TemporaryDirectory(prefix="camel_eval_") as tmp:
        result_file = Path(tmp) / "result.json"
        job = {"policy": str(Path(candidate.path).resolve()), "env_id": args.env_id, "seeds": seeds,
               "max_episode_steps": args.max_episode_steps, "video": video and str(video), "result": str(result_file),
               "trial_timeout": min(20.0, args.eval_timeout / 3)}  # load_guide's trial gets a share of the time  # fmt: skip
        command = [sys.executable, str(Path(__file__).resolve()), WORKER_FLAG, json.dumps(job)]

        def on_line(line):  # the guide may print too; only the worker's own lines move the progress bar
            if line.startswith(EPISODE_DONE):
                progress.update(1)

        code, timed_out, stderr = run_child(command, tmp, args.eval_timeout, on_line)
        result = json.loads(result_file.read_text(encoding="utf-8")) if result_file.exists() else None
    candidate.warnings = [line for line in stderr.splitlines() if line.startswith("warning:")]
    if timed_out:
        candidate.error = f"did not finish {len(seeds)} episodes within --eval-timeout {args.eval_timeout:g} s (does it hang?)"
    elif result is None:
        last_line = (stderr.strip().splitlines() or ["no output"])[-1]
        candidate.error = f"the evaluation process died (exit code {code}): {one_line(last_line)}"
    else:
        candidate.error = result["error"]
        candidate.episodes = result["episodes"]
        if result["video_error"]:
            candidate.warnings.append(f"warning: no video: {result['video_error']}")
        summarize(candidate, result["max_episode_steps"])
    if video is not None and video.exists():
        candidate.video = str(video)


def summarize(candidate, max_episode_steps):
    """The candidate's summary metrics and score over its episodes (the score is explained at the top)."""
    episodes = candidate.episodes
    if not episodes or candidate.error:
        return
    returns = [e["return"] for e in episodes]
    candidate.mean_return, candidate.std_return = float(np.mean(returns)), float(np.std(returns))
    candidate.mean_length = float(np.mean([e["length"] for e in episodes]))
    candidate.falls = sum(e["fell"] for e in episodes)
    candidate.mean_abs_action = float(np.mean([e["mean_abs_action"] for e in episodes]))
    if all(e["forward_distance"] is not None for e in episodes):
        candidate.forward_distance = float(np.mean([e["forward_distance"] for e in episodes]))
        survived = [e["length"] / max_episode_steps if max_episode_steps else 1.0 for e in episodes]
        candidate.score = float(np.mean([e["forward_distance"] * s for e, s in zip(episodes, survived)]))
    else:
        candidate.score = candidate.mean_return


def rank(candidates):
    """Best first: by score (-0.1 to 0.1 counting as 0), then by return; failed candidates last, in their order."""

    def key(c):
        if c.error or c.score is None:
            return (1, 0.0, 0.0)
        return (0, 0.0 if abs(c.score) < 0.1 else -c.score, -c.mean_return)

    return sorted(candidates, key=key)


def best_of(ranked):
    """The winner of a ranking, or None if no candidate was evaluated successfully."""
    return ranked[0] if ranked and ranked[0].error is None and ranked[0].score is not None else None


# ---------------------------------------------------------------------------------------------------------
# Report, refinement feedback
# ---------------------------------------------------------------------------------------------------------
def markdown_table(rows):
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(str(cell).ljust(w) for cell, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def results_table(ranked, out=None):
    """The ranking as a Markdown table; with `out`, names and videos link to their files (relative to `out`)."""

    def link(text, path):
        return f"[{text}]({Path(os.path.relpath(path, out)).as_posix()})" if out and path else text

    columns = ["rank", "candidate", "score", "return", "length", "forward (m)", "falls", "mean abs action"]
    rows = [columns + (["video"] if out else []) + ["error"]]
    for i, c in enumerate(ranked, 1):
        ok = c.error is None and c.score is not None
        n = len(c.episodes)
        rows.append([
            i if ok else "-", link(c.name, c.path),
            f"{c.score:.2f}" if ok else "", f"{c.mean_return:.1f} ± {c.std_return:.1f}" if ok else "",
            f"{c.mean_length:.0f}" if ok else "", f"{c.forward_distance:.2f}" if ok and c.forward_distance is not None else "",
            f"{c.falls}/{n}" if ok else "", f"{c.mean_abs_action:.2f}" if ok else "",
        ] + ([link("mp4", c.video) if c.video else ""] if out else []) + [(c.error or "").replace("|", "\\|")])  # fmt: skip
    return markdown_table(rows)


def write_report(out, candidates, info):
    """Write report.md and report.json (after every evaluation, so an interrupted run keeps its report)."""
    ranked = rank(candidates)
    best = best_of(ranked)
    report = {**info, "score_rule": SCORE_RULE, "best": best and best.name, "candidates": [asdict(c) for c in ranked]}
    write_json(out / "report.json", report)
    lines = [f"# Guide policies for {info['env_id']}", ""]
    lines += [f"- {key.replace('_', ' ')}: {value}" for key, value in info.items() if key != "env_id" and value is not None]
    lines += [f"- ranked by: {SCORE_RULE}", ""]
    if best:
        train = f"python camel_td3.py --env-id {info['env_id']} --llm-policy {best.path}"
        lines += [f"Best: **{best.name}**. Train with it: `{train}`", ""]
    else:
        lines += ["No candidate has passed evaluation (yet).", ""]
    lines += [results_table(ranked, out), ""]
    lines += ["Videos show each candidate's first episode; the return alone can mislead, so watch them before you choose.", ""]
    notes = [f"- {c.name}: {w}" for c in ranked for w in c.warnings]
    lines += ["Warnings:", *notes, ""] if notes else []
    write_text(out / "report.md", "\n".join(lines))
    return ranked


def describe_results(candidate, max_episode_steps):
    """What was measured, in words, for the refinement prompt."""
    if candidate.error and not candidate.episodes:
        return f"It failed: {candidate.error}"
    lines = []
    if candidate.error:
        lines.append(f"It failed: {candidate.error}\nEpisodes finished before that:")
    else:
        n = len(candidate.episodes)
        lines += [
            f"Over {n} episodes of at most {max_episode_steps} steps:",
            f"- score {candidate.score:.2f}",
            f"- return {candidate.mean_return:.1f} ± {candidate.std_return:.1f}",
            f"- episode length {candidate.mean_length:.0f} steps; it fell (the episode ended early) in {candidate.falls} of {n}",
            f"- mean |action| {candidate.mean_abs_action:.2f} (1.0 means every action sits at its limit)",
        ]
        if candidate.forward_distance is not None:
            lines.append(f"- forward distance {candidate.forward_distance:.2f} m (torso x position at the end minus at the start)")
        lines.append("Per episode:")
    for k, e in enumerate(candidate.episodes, 1):
        forward = f", forward {e['forward_distance']:.2f} m" if e["forward_distance"] is not None else ""
        fell = "fell" if e["fell"] else "did not fall"
        lines.append(f"- episode {k} (seed {e['seed']}): return {e['return']:.1f}, length {e['length']}{forward}, {fell}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------------------
def flag_problems(args):
    problems = []
    if args.num_candidates < 1 or args.episodes < 1 or args.iterations < 0:
        problems.append("--num-candidates and --episodes must be at least 1, --iterations at least 0")
    if args.max_episode_steps is not None and args.max_episode_steps < 1:
        problems.append("--max-episode-steps must be at least 1")
    if args.evaluate:
        generation_flags = [("--iterations", args.iterations), ("--select", args.select), ("--policy-path", args.policy_path),
                            ("--base-url", args.base_url), ("--model", args.model), ("--print-prompt", args.print_prompt)]  # fmt: skip
        used = [flag for flag, value in generation_flags if value]
        if used:
            problems.append(f"--evaluate scores existing files and asks no model, so {', '.join(used)} cannot go with it")
    if args.policy_path and not args.select:
        problems.append("--policy-path is where --select best writes; add --select best")
    if args.base_url and not args.model:
        problems.append("--base-url needs --model, the name your server knows the model by (e.g. qwen2.5-coder:32b)")
    return problems


def prepare_output_dir(path):
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        raise SystemExit(f"error: cannot write to --output-dir {path}: {e.strerror or e}")
    if (path / "report.json").exists() or any(path.glob("round*_candidate*")):
        raise SystemExit(f"error: --output-dir {path} already holds the results of an earlier run; choose another folder")


def main(args, ask=None):
    """Returns the exit status. `ask` replaces the model backend (for tests)."""
    problems = flag_problems(args)
    if problems:
        raise SystemExit(f"error: {problems[0]}")

    # the environment, and the prompt built from its documentation and MuJoCo XML
    try:
        env = make_env(args.env_id)
    except gym.error.Error as e:
        raise SystemExit(f"error: --env-id {args.env_id}: {one_line(e)}")
    if not isinstance(env.action_space, gym.spaces.Box):
        space = type(env.action_space).__name__
        raise SystemExit(f"error: {args.env_id} has a {space} action space; CAMEL guides need a continuous (Box) one")
    task_prompt, template = build_prompt(env, args.prompt_template)
    max_steps = args.max_episode_steps or env.spec.max_episode_steps
    env.close()
    if args.print_prompt:
        print(task_prompt)
        return 0

    # the model (or, with --evaluate, the files to score)
    if args.evaluate:
        model, backend = None, None
        missing = [path for path in args.evaluate if not Path(path).is_file()]
        if missing:
            raise SystemExit(f"error: --evaluate {missing[0]}: no such policy file")
    elif args.base_url:
        model, backend = args.model, f"OpenAI-compatible server at {args.base_url}"
        options = (args.temperature, args.max_output_tokens, args.request_timeout, args.request_attempts)
        ask = ask or openai_backend(args.base_url, model, *options)
    else:
        model, backend = args.model or DEFAULT_GEMINI_MODEL, "Gemini API"
        ask = ask or gemini_backend(model, args.temperature, args.max_output_tokens, args.request_timeout, args.request_attempts)

    # the output folder, and where --select best will write
    default_dir = "runs/evaluate__{}__{}" if args.evaluate else "policies/candidates/{}__{}"
    out = Path(args.output_dir or default_dir.format(args.env_id, int(time.time())))
    prepare_output_dir(out)
    policy_path = Path(args.policy_path or out / "selected.py")
    if args.select:
        with contextlib.suppress(OSError):
            policy_path.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(policy_path.parent, os.W_OK) or policy_path.is_dir():
            raise SystemExit(f"error: --policy-path {policy_path}: cannot write a file there")
    info = {"env_id": args.env_id, "model": model, "backend": backend, "started": now(),
            "prompt_template": None if args.evaluate else os.path.relpath(template), "episodes_per_candidate": args.episodes,
            "seeds": f"{args.seed}..{args.seed + args.episodes - 1}", "max_episode_steps": max_steps}  # fmt: skip
    provenance = {"env_id": args.env_id, "model": model, "backend": backend, "base_url": args.base_url,
                  "temperature": args.temperature, "max_output_tokens": args.max_output_tokens}  # fmt: skip
    candidates = []

    def evaluate(new):
        """Evaluate the candidates that passed the static checks, one child process each, updating the report."""
        runnable = [c for c in new if c.error is None]
        with tqdm(total=len(runnable) * args.episodes, desc="evaluating", unit="episode") as progress:
            for c in runnable:
                progress.set_postfix_str(c.name)
                done = progress.n
                evaluate_candidate(c, args, out, progress)
                progress.update(done + args.episodes - progress.n)  # a candidate that failed early skips its remaining episodes
                if c.error:
                    tqdm.write(f"{c.name}: failed: {c.error}")
                else:
                    tqdm.write(f"{c.name}: score {c.score:.2f}, return {c.mean_return:.1f}, fell in {c.falls} of {args.episodes}")
                write_report(out, candidates, info)

    try:
        if args.evaluate:  # score existing files: no model, no rounds
            for i, path in enumerate(args.evaluate):
                name = Path(path).stem
                if name in {c.name for c in candidates}:  # e.g. policies/hopper.py and candidates/hopper.py
                    name = f"{name}_{i + 1}"
                candidate = Candidate(name=name, round=0, path=str(path))
                try:
                    read_and_check(path)
                except GuideError as e:
                    candidate.error = f"refused by the checks: {e}"
                candidates.append(candidate)
            evaluate(candidates)
        else:
            for round_no in range(1, args.iterations + 2):
                # round 1 asks with the task prompt; later rounds send the best candidate so far back with its results
                best = next((c for c in rank(candidates) if c.path), None)
                prompt = task_prompt
                if best is not None:
                    code = Path(best.path).read_text(encoding="utf-8").split("\n\n", 1)[-1].strip()  # without our provenance header
                    feedback = describe_results(best, max_steps)
                    prompt = fill_template(PROMPTS / "refine.md", {"task_prompt": task_prompt, "candidate": best.name, "code": code,
                                                                   "feedback": feedback, "score_rule": SCORE_RULE})  # fmt: skip
                prompt_file = out / f"round{round_no}_prompt.md"
                write_text(prompt_file, prompt)
                new = []
                for i in tqdm(range(1, args.num_candidates + 1), desc=f"round {round_no}: asking {model}", unit="candidate"):
                    candidate = ask_for_candidate(ask, prompt, prompt_file, f"round{round_no}_candidate{i}", round_no, out, provenance)
                    if candidate.error:
                        tqdm.write(f"{candidate.name}: failed: {candidate.error}")
                    new.append(candidate)
                    candidates.append(candidate)
                write_report(out, candidates, info)
                evaluate(new)
    except KeyboardInterrupt:
        for c in candidates:
            if c.error is None and c.score is None:
                c.error = "not evaluated: the run was interrupted"
        write_report(out, candidates, info)
        print(f"\ninterrupted: everything received so far is saved in {out}", file=sys.stderr)
        return 130

    # the ranking, and the selection
    ranked = write_report(out, candidates, info)
    print(results_table(ranked))
    print(f"\nreport: {out / 'report.md'}")
    best = best_of(ranked)
    if best is None:
        print("error: no candidate passed evaluation; the report says why", file=sys.stderr)
        return 1
    if args.select == "best":
        note = f"# Selected by generate_policy.py --select best: {best.name}, ranked 1 of {len(ranked)} in {out / 'report.md'}\n"
        write_text(policy_path, note + Path(best.path).read_text(encoding="utf-8"))
        print(f"selected {best.name} -> {policy_path}")
    chosen = policy_path if args.select else best.path
    print(f"best: {best.name}; train with: python camel_td3.py --env-id {args.env_id} --llm-policy {chosen}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == [WORKER_FLAG]:
        evaluation_worker(sys.argv[2])
    else:
        sys.exit(main(tyro.cli(Args)))
