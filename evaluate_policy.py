# Judge CAMEL guide policies and trained agents: run each for whole episodes, measure it, film it, score and rank.
# Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896), section 3.1: the
# authors ran each Gemini-written candidate for an episode and chose one by watching the videos. This script does
# that judging for any guide file, and for a trained agent beside it, as CleanRL's cleanrl_utils/evals does for
# agents; generate_policy.py does the same for every candidate it receives.
#
# Usage:
#   python evaluate_policy.py --env-id Hopper-v4 policies/hopper.py                    # metrics, and a video in videos/
#   python evaluate_policy.py --env-id Hopper-v4 policies/candidates/hopper/*.py --markdown ranking.md   # a ranking
#   python evaluate_policy.py --env-id Hopper-v4 policies/hopper.py --seed 0 --episodes 5 --no-video --json hopper.json
#   python evaluate_policy.py --env-id Hopper-v4 policies/hopper.py runs/RUN/camel_plus_td3.cleanrl_model --episodes 10  # guide and agent
#   python evaluate_policy.py --env-id Hopper-v4 runs/RUN/camel_td3.cleanrl_model --seed 100001   # the return the run logged last
#     (a run of seed S evaluates its agent on seeds S+100000, S+100001, ...; here S = 1 and the default 5 episodes)
#   python evaluate_policy.py --env-id Hopper-v4 policies/*.py --judge-model gemini-2.5-flash   # and a multimodal model's verdicts
#
# The evaluation itself (the child process per policy, the measurements, the score, the ranking, the report) is
# camel_utils/guide_eval.py's, whose header explains the score; the optional judge is camel_utils/judge.py's; a trained
# agent acts through camel_utils/agent.py, the loader your own code uses. This script reads the command line, checks it,
# and prints and writes what they give.
#
# The checks are a guard against accidents, not a security sandbox: only run code you would run yourself.
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Optional

import tyro

from camel_utils.cli import UsageError
from camel_utils.guide_eval import advice, best_of, makes_progress, check_env, checked, evaluate_all, now, rank, report, results_table, writable, write_json, write_text
from camel_utils.judge import make_judge


@dataclass
class Args:
    """Run guide policies `policy(obs)` and trained agents (.cleanrl_model) for whole episodes, measure, film,
    score and rank them in one table. Each runs in its own child process with one BLAS thread
    (OMP/MKL/OPENBLAS_NUM_THREADS=1), killed after --eval-timeout."""

    policies: Annotated[tuple[str, ...], tyro.conf.Positional, tyro.conf.arg(metavar="POLICY...", help_behavior_hint="(one or more)")]
    """the files to evaluate: guide files (.py), and trained agents
    (.cleanrl_model, CleanRL's format, as the trainers save them, e.g. runs/RUN/camel_plus_td3.cleanrl_model;
    run deterministically, unmasked, as the run's evaluations ran them: camel_utils/agent.py);
    several are ranked in one table"""
    env_id: str = "Hopper-v4"
    """the Gymnasium environment the policies were written or trained for"""
    episodes: int = 5
    """evaluation episodes per policy, with seeds seed, seed+1, ..."""
    seed: int = 1
    """seed of the first evaluation episode (a run of seed S evaluated its agent on S+100000, S+100001, ...)"""
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

    # beyond the paper: a multimodal model looks at the videos
    judge_model: Optional[str] = None
    """a multimodal model that looks at --judge-frames frames of each video and gives a verdict
    (walks_forward, stands_still, falls, moves_backward, other) with a one-sentence reason, shown beside the numbers.
    The ranking stays the score's: the verdict never changes it.
    Gemini unless --judge-base-url is given"""
    judge_base_url: Optional[str] = None
    """ask the judge on an OpenAI-compatible server with image input instead of Gemini,
    e.g. http://localhost:11434/v1 (its key, if any, from OPENAI_API_KEY)"""
    judge_frames: int = 6
    """frames of each video, evenly spaced from the first to the last, that the judge sees"""


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
    judge = None
    if args.judge_model or args.judge_base_url:
        judge = make_judge(args.judge_model, args.judge_base_url, args.env_id, args.max_episode_steps or env_steps, args.judge_frames,
                           video=args.video)  # fmt: skip
    results = checked(args.policies, args.env_id)
    refused_agent = next((r for r in results if r.kind == "agent" and r.error), None)
    if refused_agent is not None:  # a model for another env (or no model) is a mistake in the command, not a rank
        raise UsageError(refused_agent.error)
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

    # the episodes, one child process per policy (and the judge's look at each video as it is written)
    seeds = [args.seed + k for k in range(args.episodes)]
    try:
        evaluate_all(results, args.env_id, seeds, args.max_episode_steps, video_dir, args.eval_timeout,
                     after_each=judge.look if judge else lambda result: None)  # fmt: skip
    except KeyboardInterrupt:
        print("\ninterrupted: nothing written", file=sys.stderr)
        return 130

    # the ranking, printed and written
    ranked = rank(results)
    print(results_table(ranked))
    info = {"env_id": args.env_id, "evaluated": now(), "episodes_per_candidate": args.episodes,
            "seeds": f"{seeds[0]}..{seeds[-1]}", "max_episode_steps": args.max_episode_steps or env_steps,
            "judge": judge and judge.description}  # fmt: skip
    if args.json:
        write_json(args.json, report(ranked, info)[1])
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
    if len(ranked) > 1 or not makes_progress(best):
        print(advice(ranked, args.env_id))
    return 0


if __name__ == "__main__":
    sys.exit(main(tyro.cli(Args)))  # a UsageError exits with its one line and status 2
