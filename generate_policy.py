# Ask a language model to write CAMEL guide policies, then check, evaluate, show, rank and select them.
# Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896), section 3.1.
#
# The paper prompts Gemini with the env's observation and action spaces, its task and its MuJoCo XML, asks it
# to think step by step and to write `policy(obs)` in NumPy, generates five candidates, runs each for one
# episode and picks one by watching videos, because the return alone misleads (a Hopper that stands still
# scores well and goes nowhere). This script does that loop and automates the screening:
#   1. fill a prompt template from prompts/ with the env's own documentation and XML (from Gymnasium's files)
#   2. ask the model once per candidate; save each code file, raw response and prompt as soon as it arrives
#   3. refuse code that fails the checks in camel_utils/guide.py (the same ones camel_td3.py applies)
#   4. run each candidate for several episodes, as evaluate_policy.py does (camel_utils/guide_eval.py: a child process with a
#      wall-clock timeout, rendering a video)
#   5. rank by camel_utils/guide_eval.py's score, write report.md / report.json, optionally copy the best (--select best)
#   6. beyond the paper: --iterations K sends the best candidate and its measurements back for a better version
#   7. beyond the paper: --judge-model, a multimodal model shown frames of each video, gives a verdict (walks
#      forward, stands still, falls, ...) that the report shows beside the score; the ranking stays the score's
#
# Usage:
#   export GEMINI_API_KEY=...        # or GOOGLE_API_KEY
#   python generate_policy.py --env-id Hopper-v4 --num-candidates 5 --output-dir policies/candidates/hopper
#   python generate_policy.py --env-id Hopper-v4 --base-url http://localhost:11434/v1 --model qwen2.5-coder:32b
#   python generate_policy.py --env-id Hopper-v4 --print-prompt                          # no model called
#   python generate_policy.py --env-id Hopper-v4 --judge-model gemini-2.5-flash         # with a judge of the videos
#   python evaluate_policy.py --env-id Hopper-v4 policies/hopper.py                     # score any policy file
#
# Evaluation, the score, the ranking and the report live in camel_utils/guide_eval.py (its header explains the score), the
# model backends in camel_utils/llm.py, the judge in camel_utils/judge.py; this script asks, checks, and hands each candidate
# to them. `--evaluate FILE...` is kept as an alias of `python evaluate_policy.py FILE...`.
#
# The checks are a guard against accidents, not a security sandbox: only run code you would run yourself.
import ast
import contextlib
import hashlib
import inspect
import json
import os
import re
import string
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

import gymnasium as gym
import numpy as np
import tyro

from camel_utils.cli import Progress, UsageError, command, shown_path
from camel_utils.guide_eval import (
    SCORE_RULE, PolicyResult, advice, best_of, makes_progress, evaluate_all, make_env, now, one_line, rank, report, results_table, writable,
    write_json, write_text,
)  # fmt: skip
from camel_utils.guide import GuideError, read_and_check
from camel_utils.judge import UNJUDGED, make_judge
from camel_utils.llm import DEFAULT_GEMINI_MODEL, ModelError, check_server_listens, gemini_backend, openai_backend

# The paper's envs are the v4 MuJoCo ones; Gymnasium's reminder that v5 exists is not news here.
warnings.filterwarnings("ignore", message=r".*is out of date\. You should consider upgrading")

PROMPTS = Path(__file__).resolve().parent / "prompts"
EVALUATE_POLICY = Path(__file__).resolve().parent / "evaluate_policy.py"  # what --evaluate runs


@dataclass
class Args:
    """Ask a language model for CAMEL guide policies `policy(obs)`, then check, evaluate, rank and select them.
    Candidates are evaluated as evaluate_policy.py evaluates files, each in its own child process with one BLAS
    thread (OMP/MKL/OPENBLAS_NUM_THREADS=1), killed after --eval-timeout."""

    env_id: str = "Hopper-v4"
    """the Gymnasium environment (its prompt is prompts/{env_id}.md if that exists, else prompts/generic.md)"""
    num_candidates: int = 5
    """candidate policies to ask for in each round (one request each)"""
    output_dir: Optional[str] = None
    """folder for candidates, responses, prompts, videos and the report (if unset: policies/candidates/{env_id}__{time})"""

    # the language model
    model: Optional[str] = None
    """the model to ask (if unset: gemini-pro-latest with Gemini; needed with --base-url)"""
    base_url: Optional[str] = None
    """ask an OpenAI-compatible server instead of Gemini, e.g. http://localhost:11434/v1 (Ollama),
    or http://localhost:8000/v1 (vLLM); its key, if any, is read from OPENAI_API_KEY"""
    temperature: Optional[float] = None
    """sampling temperature (if unset: the model's own)"""
    max_output_tokens: Optional[int] = None
    """the most tokens one response may use, thinking included (if unset: the model's own limit)"""
    request_timeout: float = 600.0
    """seconds one request may take (thinking models are slow), the judge's too"""
    request_attempts: int = 5
    """tries per request when the server answers 408, 429 or 5xx or the connection fails,
    with exponential backoff (the judge's too)"""
    iterations: int = 0
    """refinement rounds after the first:
    each sends the best candidate so far, with its measurements or error, back to the model,
    and asks for improved versions (while no candidate has code, it asks afresh)"""
    prompt_template: Optional[str] = None
    """a prompt template to use instead of the one in prompts/ (placeholders: see prompts/README.md)"""
    print_prompt: bool = False
    """print the filled prompt and exit, without calling any model"""
    answers: tuple[str, ...] = ()
    """answer files: what a model answered outside this script (a prompt pasted into a chat window,
    the answer saved as a file), one candidate each.
    They get the same extraction, checks, evaluation, ranking, report and --select as an API run,
    and no model is called; --model names the model that wrote them.
    A file whose name holds roundN (e.g. round2_answer1.md) answers round N's prompt, any other answers round 1.
    With --iterations, the first round with no answer files has its prompt written to --output-dir and printed:
    ask it the same way, then run again with those answers added (into a new --output-dir)"""

    # evaluation (as evaluate_policy.py does it)
    evaluate: tuple[str, ...] = ()
    """score these policy files and ask no model:
    an alias of `python evaluate_policy.py FILE...`, kept for older commands
    (with --output-dir, its report.md, report.json and videos go there)"""
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

    # beyond the paper: a multimodal model looks at the videos
    judge_model: Optional[str] = None
    """a multimodal model that looks at --judge-frames frames of each candidate's video and gives a verdict
    (walks_forward, stands_still, falls, moves_backward, other) with a one-sentence reason,
    shown in the report beside the numbers.
    The ranking (and --select best) stays the score's: the verdict never changes it.
    Gemini unless --judge-base-url is given"""
    judge_base_url: Optional[str] = None
    """ask the judge on an OpenAI-compatible server with image input instead of Gemini,
    e.g. http://localhost:11434/v1 (its key, if any, from OPENAI_API_KEY)"""
    judge_frames: int = 6
    """frames of each video, evenly spaced from the first to the last, that the judge sees"""

    # selection
    select: Optional[Literal["best"]] = None
    """`best`: copy the top-ranked candidate to --policy-path (without it, the report names the best and you choose)"""
    policy_path: Optional[str] = None
    """where --select best writes the chosen policy (if unset: {output_dir}/selected.py)"""


@dataclass
class Candidate(PolicyResult):
    """One generated guide (named round{r}_candidate{i}): guide_eval's record of it, and the round it came from."""

    round: int = 1  # 1 for the first generation, 2.. for refinements


# ---------------------------------------------------------------------------------------------------------
# The environment and its prompt (paper, section 3.1 and Figure 2)
# ---------------------------------------------------------------------------------------------------------
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
        raise UsageError(f"cannot read prompt template {path}: {e.strerror or e}")
    except (KeyError, ValueError) as e:
        raise UsageError(f"prompt template {path} has an unknown placeholder ({e}); known: {', '.join(sorted(values))}")


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


def answers_by_round(paths):
    """{round: [answer files]} from --answers: a file whose name holds roundN answers round N, any other round 1."""
    rounds = {}
    for path in paths:
        if not Path(path).is_file():
            raise UsageError(f"--answers {path}: no such file")
        match = re.search(r"round(\d+)", Path(path).name)
        rounds.setdefault(int(match.group(1)) if match else 1, []).append(Path(path))
    if 0 in rounds:
        raise UsageError(f"--answers {rounds[0][0]}: rounds are numbered from 1")
    return rounds


def answers_backend(files):
    """An `ask` that, instead of calling a model, returns the given answer files in order, each read exactly as
    saved (a model asked outside this script, e.g. in a chat window)."""
    pending = list(files)

    def ask(prompt):
        path = pending.pop(0)
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ModelError(f"cannot read the answer file {path}: {one_line(e)}") from None
        if not text.strip():
            raise ModelError(f"the answer file {path} is empty")
        return text, {"answer_file": str(path), "answer_sha256": hashlib.sha256(text.encode()).hexdigest()}

    return ask


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
        source = (f"its answer was obtained outside generate_policy.py and read from {Path(details['answer_file']).name}"
                  if "answer_file" in details else f"{provenance['backend']}, asked at {record['requested_at']}")
        header = (f"# Guide policy candidate {name} for {provenance['env_id']}, written by {provenance['model']} ({source}).\n"
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
# Report, refinement feedback
# ---------------------------------------------------------------------------------------------------------
def write_provenance(out, info, round_no, prompt_file):
    """provenance.json: who wrote the candidates (the model as named, the backend), when, and the sha256 of each
    round's prompt file as kept in the folder, so that a reader can check what the model was asked."""
    path = out / "provenance.json"
    record = json.loads(path.read_text(encoding="utf-8")) if round_no > 1 and path.exists() else {}
    record.update({key: info[key] for key in ("env_id", "model", "backend")})
    record.setdefault("date", info["started"])
    record.setdefault("prompts", {})[f"round{round_no}"] = {
        "prompt_file": prompt_file.name, "prompt_sha256": hashlib.sha256(prompt_file.read_bytes()).hexdigest()}
    if round_no == 1:
        record["prompt_file"], record["prompt_sha256"] = prompt_file.name, record["prompts"]["round1"]["prompt_sha256"]
    write_json(path, record)


def write_report(out, candidates, info):
    """Write report.md and report.json in evaluate_policy.py's format (after every evaluation, so an interrupted run
    keeps its report). Returns the ranking."""
    ranked = rank(candidates)
    markdown, data = report(ranked, info, out)
    write_json(out / "report.json", data)
    write_text(out / "report.md", markdown)
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
        if candidate.verdict and candidate.verdict != UNJUDGED:
            lines.append(f"- a viewer shown frames of its first episode's video said: {candidate.verdict} ({candidate.verdict_reason})")
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
    if args.eval_timeout <= 0 or args.request_timeout <= 0 or args.request_attempts < 1:
        problems.append("--eval-timeout and --request-timeout must be positive, --request-attempts at least 1")
    if args.evaluate:
        generation_flags = [("--iterations", args.iterations), ("--select", args.select), ("--policy-path", args.policy_path),
                            ("--base-url", args.base_url), ("--model", args.model), ("--print-prompt", args.print_prompt)]  # fmt: skip
        used = [flag for flag, value in generation_flags if value]
        if used:
            problems.append(f"--evaluate scores existing files and asks no model, so {', '.join(used)} cannot go with it")
    if args.policy_path and not args.select:
        problems.append("--policy-path is where --select best writes; add --select best")
    if args.answers:
        if not args.model:
            problems.append("--answers needs --model, the name of the model that wrote the answers (as the model gives it)")
        if args.base_url:
            problems.append("--answers takes answers obtained elsewhere and calls no model, so --base-url cannot go with it")
        if args.evaluate:
            problems.append("--answers and --evaluate cannot go together")
    if args.base_url and not args.model:
        problems.append("--base-url needs --model, the name your server knows the model by (e.g. qwen2.5-coder:32b)")
    return problems


def refuse_earlier_results(path):
    if (path / "report.json").exists() or any(path.glob("round*_candidate*")):
        raise UsageError(f"--output-dir {path} already holds the results of an earlier run; choose another folder")


def evaluate_files(args):
    """`--evaluate FILE...`, kept for older commands: the same as `python evaluate_policy.py FILE...`, with the
    report (report.md, report.json) and the videos in --output-dir if one is given."""
    out = Path(args.output_dir) if args.output_dir else None
    if out is not None:
        refuse_earlier_results(out)
    flags = ["--env-id", args.env_id, "--episodes", str(args.episodes), "--seed", str(args.seed), "--eval-timeout", str(args.eval_timeout)]
    flags += ["--max-episode-steps", str(args.max_episode_steps)] if args.max_episode_steps is not None else []
    flags += [] if args.video else ["--no-video"]
    flags += ["--video-dir", str(out), "--json", str(out / "report.json"), "--markdown", str(out / "report.md")] if out else []
    for flag, value in [("--judge-model", args.judge_model), ("--judge-base-url", args.judge_base_url)]:
        flags += [flag, value] if value else []
    flags += ["--judge-frames", str(args.judge_frames)] if args.judge_model else []
    sys.stdout.flush()
    try:
        status = subprocess.run([sys.executable, str(EVALUATE_POLICY), *flags, *args.evaluate]).returncode
    except KeyboardInterrupt:  # evaluate_policy.py has said so itself
        return 130
    if status in (0, 1):  # 2: evaluate_policy.py has printed the mistake
        print(f"note: --evaluate runs evaluate_policy.py; next time: {command('evaluate_policy.py', '--env-id', args.env_id, *args.evaluate)}",
              file=sys.stderr)  # fmt: skip
    return status


def main(args, ask=None):
    """Returns the exit status. `ask` replaces the model backend (for tests)."""
    problems = flag_problems(args)
    if problems:
        raise UsageError(problems[0])
    if args.evaluate:
        return evaluate_files(args)

    # the environment, and the prompt built from its documentation and MuJoCo XML
    try:
        env = make_env(args.env_id)
    except gym.error.Error as e:
        raise UsageError(f"--env-id {args.env_id}: {one_line(e)}")
    if not isinstance(env.action_space, gym.spaces.Box):
        space = type(env.action_space).__name__
        raise UsageError(f"{args.env_id} has a {space} action space; CAMEL guides need a continuous (Box) one")
    task_prompt, template = build_prompt(env, args.prompt_template)
    max_steps = args.max_episode_steps or env.spec.max_episode_steps
    env.close()
    if args.print_prompt:
        print(task_prompt)
        return 0

    # the model, or the answers it gave elsewhere
    answer_files = answers_by_round(args.answers) if args.answers else None
    if answer_files and max(answer_files) > args.iterations + 1:
        raise UsageError(f"--answers has answers to round {max(answer_files)}, so it needs --iterations {max(answer_files) - 1} or more")
    if answer_files:
        model, backend = args.model, "answers given with --answers (obtained outside generate_policy.py; no model called)"
    elif args.base_url:
        if ask is None:
            check_server_listens(args.base_url)
        model, backend = args.model, f"OpenAI-compatible server at {args.base_url}"
        options = (args.temperature, args.max_output_tokens, args.request_timeout, args.request_attempts)
        ask = ask or openai_backend(args.base_url, model, *options)
    else:
        model, backend = args.model or DEFAULT_GEMINI_MODEL, "Gemini API"
        ask = ask or gemini_backend(model, args.temperature, args.max_output_tokens, args.request_timeout, args.request_attempts)
    judge = None  # beyond the paper: a multimodal model's verdict on each video, beside the score
    if args.judge_model or args.judge_base_url:
        judge = make_judge(args.judge_model, args.judge_base_url, args.env_id, max_steps, args.judge_frames, video=args.video,
                           timeout=args.request_timeout, attempts=args.request_attempts)  # fmt: skip

    # the output folder, and where --select best will write
    out = Path(args.output_dir or f"policies/candidates/{args.env_id}__{int(time.time())}")
    refuse_earlier_results(out)
    writable(out, "--output-dir", folder=True)
    policy_path = Path(args.policy_path or out / "selected.py")
    if args.select:
        with contextlib.suppress(OSError):
            policy_path.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(policy_path.parent, os.W_OK) or policy_path.is_dir():
            raise UsageError(f"--policy-path {policy_path}: cannot write a file there")
    seeds = [args.seed + k for k in range(args.episodes)]
    info = {"env_id": args.env_id, "model": model, "backend": backend, "started": now(), "prompt_template": os.path.relpath(template),
            "episodes_per_candidate": args.episodes, "seeds": f"{seeds[0]}..{seeds[-1]}", "max_episode_steps": max_steps,
            "judge": judge and judge.description}  # fmt: skip
    provenance = {"env_id": args.env_id, "model": model, "backend": backend, "base_url": args.base_url,
                  "temperature": args.temperature, "max_output_tokens": args.max_output_tokens}  # fmt: skip
    candidates = []
    waiting_for = None  # with --answers: the first round whose answers are still to be obtained

    try:
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
            write_provenance(out, info, round_no, prompt_file)
            num_candidates = args.num_candidates
            if answer_files is not None:
                if round_no not in answer_files:
                    waiting_for = round_no
                    break
                num_candidates, ask = len(answer_files[round_no]), answers_backend(answer_files[round_no])

            # ask: one request per candidate, each saved as it arrives
            new = []
            with Progress(num_candidates, f"round {round_no}: asking {model}", "candidate") as progress:
                for i in range(1, num_candidates + 1):
                    candidate = ask_for_candidate(ask, prompt, prompt_file, f"round{round_no}_candidate{i}", round_no, out, provenance)
                    if candidate.error:
                        progress.write(f"{candidate.name}: failed: {candidate.error}")
                    new.append(candidate)
                    candidates.append(candidate)
                    progress.update()
            write_report(out, candidates, info)

            # evaluate: each candidate that passed the checks runs in its own child; the judge (if any) looks at its
            # video; the report is rewritten after each
            def after_each(candidate):
                if judge is not None:
                    judge.look(candidate)
                write_report(out, candidates, info)

            evaluate_all(new, args.env_id, seeds, args.max_episode_steps, out if args.video else None, args.eval_timeout, after_each)
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
    if not makes_progress(best):
        print(advice(ranked, args.env_id))
    else:
        chosen = policy_path if args.select else best.path
        print(f"best: {best.name}; train with: {command('camel_td3.py', '--env-id', args.env_id, '--llm-policy', shown_path(chosen))}")
    if waiting_for is not None:
        prompt_file = out / f"round{waiting_for}_prompt.md"
        print(f"\n----- round {waiting_for} prompt ({prompt_file}) -----\n{prompt_file.read_text(encoding='utf-8')}\n"
              f"----- end of the round {waiting_for} prompt -----\n"
              f"round {waiting_for}: give the prompt above to the model (a new conversation), save each answer as "
              f"round{waiting_for}_answer1.md, round{waiting_for}_answer2.md, ..., then run this command again with those "
              f"files added to --answers and a new --output-dir")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(tyro.cli(Args)))  # a UsageError exits with its one line and status 2
