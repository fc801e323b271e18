"""Putting a trained agent on the Hugging Face Hub, as CleanRL's cleanrl_utils/huggingface.py does, for every trainer.

    python camel_plus_td3.py --llm-policy policies/hopper.py --upload-model you/Hopper-v4-camel_plus_td3-seed1   # at the end
    python -m camel_utils.hub upload runs/RUN --repo-id you/Hopper-v4-camel_plus_td3-seed1   # a finished run (e.g. a retry)

What goes into the repo, from a finished run folder (finished.json and {exp_name}.cleanrl_model present):
- {exp_name}.cleanrl_model: the agent in CleanRL's format (torch.save of the actor's, qf1's and qf2's state dicts);
- README.md: the model card. What the agent is (env, the method and the script that trained it, as finished.json
  names them, the guide file's path and sha256), the key hyperparameters, the final unmasked evaluation return, how to
  evaluate it with evaluate_policy.py, load it in your own code (camel_utils/agent.py) and use it as an expert guide;
  its YAML front matter has the library, tags and a model-index with that return, as the Hub expects of RL models;
- {run_name}.json: the run's scalars, exported as `python plot.py export` writes them (plot.py reads it back), and
  the TensorBoard event files, which the Hub shows as training metrics;
- args.json: the run's arguments, as the run logged them.

Named {env_id}-{exp_name}-seed{seed}, as CleanRL names its models, the repo is found by `--expert-model REPO_ID`
without a lookup; any other name is looked up on the Hub (camel_utils.guide.download_expert).

The token is huggingface_hub's: HF_TOKEN, or the one `hf auth login` saved; HF_ENDPOINT points at another Hub.
"""

import ast
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import tyro

from camel_utils.cli import module_command, shown_path
from camel_utils.conditions import CAMEL_PLUS, CAMEL_PLUS_PARTS, is_hub_repo_id, method_name

PAPER = "[CAMEL: Continuous Action Masking Enabled by Large Language Models](https://arxiv.org/abs/2502.11896)"


class UploadError(Exception):
    """An upload that could not be made; the message is one line for the user."""


class NotUploadable(UploadError):
    """A run folder that has nothing to upload: not finished, or finished without its model."""


# ---- Before the run: the flag ---------------------------------------------------------------------------------------
def upload_problem(repo_id, flag="--upload-model"):
    """What is wrong with `flag` REPO_ID before a run starts (its form, no token), or None."""
    if not is_hub_repo_id(repo_id):
        return f"{flag} {repo_id} is not a Hugging Face repo id; give owner/name, e.g. you/Hopper-v4-camel_plus_td3-seed1"
    from huggingface_hub import get_token

    if get_token() is None:
        return f"{flag} needs a Hugging Face token that may write: set HF_TOKEN or run `hf auth login`"
    return None


def retry_command(run_dir, repo_id):
    """The command that uploads the run again, as the user can paste it where they stand."""
    return module_command("camel_utils.hub", "upload", shown_path(run_dir), "--repo-id", repo_id)


# ---- What the run was -----------------------------------------------------------------------------------------------
def logged_value(text):
    """A hyperparameter as the run logged it (text) as a Python value where it reads as one: 3e-4, True, None."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def trainer_and_method(args, finished):
    """(the script that trained the run, the method it ran), as finished.json names them ("camel_plus_td3.py", "CAMEL+").
    A run from before finished.json named them was made by camel_td3.py (camel_sac.py: the one with --autotune), which
    with a guide then ran CAMEL+ wherever one of CAMEL+'s parts was on (method_name names those it turned off), else the
    paper's CAMEL; without a guide, TD3."""
    trainer = finished.get("script") or ("camel_sac.py" if "autotune" in args else "camel_td3.py")
    if finished.get("method"):
        return trainer, finished["method"]
    guided = bool(args.get("llm_policy") or args.get("expert_model") or args.get("random_guide"))
    plus = guided and trainer == "camel_td3.py" and any(arg in args and args[arg] != off for arg, (_, off, _, _) in CAMEL_PLUS_PARTS.items())
    return trainer, method_name("camel_plus_td3.py" if plus else trainer, args, guided)


def algorithm_name(method, args):
    """The agent's name on the Hub: its method, with the guide where the paper names its controls by it (expert or
    random masking) and "w/o MA EM" for the paper's control without the masking-aware actor and epsilon masking."""
    guided = args.get("llm_policy") or args.get("expert_model") or args.get("random_guide")
    ablation = [name for flag, name in [("masking_aware", "MA"), ("epsilon_masking", "EM")] if guided and args.get(flag) is False]
    guide = " with expert masking" if args.get("expert_model") else " with random masking" if args.get("random_guide") else ""
    return method + guide + (f" w/o {' '.join(ablation)}" if ablation else "")


def guide_lines(args, finished):
    """The card's words on the guide the agent was trained with."""
    record = finished.get("guide_file") or {}
    if args.get("llm_policy"):
        path = record.get("path", args["llm_policy"])
        sha = record.get("sha256", "not recorded by this run")
        w = args.get("mask_width", 0.6)
        when = ("at every step" if args.get("epsilon_masking") is False else
                f"with probability epsilon, falling linearly from 1 to 0 over the first {args.get('epsilon_fraction', 0.5):.0%} of training,")  # fmt: skip
        return [f"- guide: the policy file `{path}` (a guide file defining `policy(obs)`: LLM-written, tuned or hand-written, which the run does not record), sha256 `{sha}`",
                f"- masking: {when} each action was confined to the box [g(s) - {w:g}, g(s) + {w:g}] around the guide's action g(s)"]  # fmt: skip
    if args.get("expert_model"):
        return [f"- guide: the expert `{args['expert_model']}` (expert masking, the paper's control)"]
    if args.get("random_guide"):
        return ["- guide: a uniformly random action at every step (random masking, the paper's control)"]
    return ["- guide: none (the plain baseline)"]


def method_lines(trainer, method):
    """The card's words on the method: its name and the script that ran it; for CAMEL+, what CAMEL+ is (the parts a run
    turned off are named in its method: "CAMEL+ w/o guide warm-up")."""
    lines = [f"- algorithm: {method}, trained by `{trainer}`"]
    return lines + ([f"- {CAMEL_PLUS}"] if method.startswith("CAMEL+") else [])


KEY_HYPERPARAMETERS = ("env_id", "seed", "total_timesteps", "learning_starts", "batch_size", "buffer_size", "gamma", "tau",
                       "learning_rate", "policy_lr", "q_lr", "policy_frequency", "exploration_noise", "policy_noise",
                       "noise_clip", "autotune", "alpha", "mask_width", "epsilon_fraction", "masking_aware",
                       "epsilon_masking", "guide_bc_coef", "guide_bootstrap", "warmup_actions",
                       "critic_updates_per_step", "critic_layer_norm", "eval_episodes")  # fmt: skip


def model_card(repo_id, args, finished, model_name, scalars_name, masking_aware):
    """README.md for the repo: YAML front matter (library, tags, the model-index with the final unmasked return)
    and what the agent is and how to use it (masking_aware: whether its actor reads the bounds, as the loaded agent
    says)."""
    from huggingface_hub import EvalResult, ModelCardData

    trainer, method = trainer_and_method(args, finished)
    env_id, algorithm, steps = args["env_id"], algorithm_name(method, args), finished.get("total_timesteps") or args.get("total_timesteps")
    final, seed = finished.get("final_eval_return"), finished.get("seed", args.get("seed"))
    results = []
    if final is not None:
        results = [EvalResult(task_type="reinforcement-learning", task_name="reinforcement-learning", dataset_type=env_id,
                              dataset_name=env_id, metric_type="mean_reward", metric_name="mean_reward",
                              metric_value=round(final, 2))]  # fmt: skip
    metadata = ModelCardData(library_name="cleanrl", model_name=algorithm, eval_results=results or None,
                             tags=[env_id, "reinforcement-learning", "deep-reinforcement-learning", "custom-implementation",
                                   "camel", "sac" if trainer == "camel_sac.py" else "td3"])  # fmt: skip
    episodes = args.get("eval_episodes", 5)
    result = (f"**{final:.2f}**, the mean return of {episodes} deterministic episode{'s' if episodes != 1 else ''} of the actor **without any mask** "
              f"(full action bounds), from fixed start states, after {steps} steps (the run's last `eval/episodic_return`)"
              if final is not None else "not recorded")  # fmt: skip
    table = "\n".join(f"| `{name}` | `{args[name]}` |" for name in KEY_HYPERPARAMETERS if name in args)
    local = f"agents/{repo_id}"
    actor = ("Its actor is masking-aware: it reads the observation, then the action bounds `low` and `high` in `[-1, 1]`;\n"
             "  unmasked, it acts with `low = -1`, `high = 1`." if masking_aware else "Its actor is CleanRL's: it reads the observation only.")  # fmt: skip
    # the start states of the run's own evaluations (the trainers reset them with seed + 100000, + 100001, ...)
    evaluate = f"python evaluate_policy.py --env-id {env_id} {local}/{model_name} --seed {seed + 100_000} --episodes {episodes}"
    return f"""---
{metadata.to_yaml()}
---

# {algorithm[:1].upper() + algorithm[1:]} on {env_id}

An agent for `{env_id}` trained with {algorithm} for {steps} steps (seed {seed}) by `{trainer}` of CAMEL, a
CleanRL-style implementation of {PAPER}: TD3 (or SAC) whose exploration is guided by a hard-coded policy. The run
was `{finished.get('run_name')}`.

{chr(10).join(method_lines(trainer, method) + guide_lines(args, finished))}
- final unmasked evaluation return: {result}

## Files

- `{model_name}`: the agent in CleanRL's format, `torch.save((actor.state_dict(), qf1.state_dict(), qf2.state_dict()))`.
  {actor}
- `{scalars_name}`: the run's curves and settings as `python plot.py export` writes them (`python plot.py FOLDER` draws
  them); the `events.out.tfevents.*` files are its TensorBoard logs.
- `args.json`: every argument of the run.

## Evaluate it

With CAMEL's `evaluate_policy.py` (deterministic, unmasked; it reports return, forward distance and falls, and
films the first episode); from the start states of the run's own evaluations, as here, it gives the return above
(exactly, for a run trained on a CPU):

```bash
hf download {repo_id} {model_name} --local-dir {local}
{evaluate}
```

## Use it in your own code

In a clone of CAMEL, after `pip install -e .` (the agent acts as the run's unmasked evaluations did):

```python
from camel_utils.agent import load_agent
policy = load_agent("{local}/{model_name}")
action = policy(obs)  # an action in the env's units, for env.step
```

## Use it as an expert guide

Expert masking with this agent as the guide (downloaded once, then cached):

```bash
python camel_td3.py --env-id {env_id} --expert-model {repo_id}
```

## Hyperparameters

| argument | value |
|---|---|
{table}
"""


# ---- The upload -----------------------------------------------------------------------------------------------------
def read_run(run_dir):
    """(finished.json, args, the model file, the agent in it, the exported record, the event files) of a finished run
    folder; UploadError (one line) when it is not finished or has no model that camel_utils.agent can load."""
    from camel_utils.agent import load_agent
    from camel_utils.results.export import export_record
    from camel_utils.results.runs import event_files, read_events

    run_dir = Path(run_dir)
    if not (run_dir / "finished.json").is_file():
        raise NotUploadable(f"{run_dir} holds no finished run (no finished.json); only a finished run's agent is uploaded")
    finished = json.loads((run_dir / "finished.json").read_text())
    model_file = run_dir / f"{finished.get('exp_name')}.cleanrl_model"
    if not model_file.is_file():
        raise NotUploadable(f"{run_dir} has no {model_file.name}: the run was made with --no-save-model")
    try:  # what the card tells users to run must load
        agent = load_agent(model_file)
    except ValueError as e:
        raise NotUploadable(f"{model_file}: {e}") from None
    curves, hyperparameters = read_events(str(run_dir))
    args = {name: logged_value(value) for name, value in hyperparameters.items()}
    args.setdefault("env_id", finished.get("env_id"))
    record = export_record(str(run_dir), finished, curves, hyperparameters, max_points=200)
    events = [Path(f) for f in event_files(run_dir)]
    return finished, args, model_file, agent, record, events


def upload_run(run_dir, repo_id):
    """Create the model repo repo_id on the Hub (or use it, if it exists) and commit the run's agent, model card,
    scalars and arguments to it in one commit. Returns the repo's address; UploadError (one line) on failure."""
    from huggingface_hub import CommitOperationAdd, HfApi

    from camel_utils.results.export import export_text

    finished, args, model_file, agent, record, events = read_run(run_dir)
    scalars_name = f"{record['run_name']}.json"
    card = model_card(repo_id, args, finished, model_file.name, scalars_name, agent.masking_aware)
    operations = [CommitOperationAdd("README.md", card.encode()),
                  CommitOperationAdd(model_file.name, str(model_file)),
                  CommitOperationAdd(scalars_name, export_text(record).encode()),
                  CommitOperationAdd("args.json", (json.dumps(args, indent=2) + "\n").encode()),
                  *[CommitOperationAdd(path.name, str(path)) for path in events]]  # fmt: skip
    api = HfApi()
    try:
        url = api.create_repo(repo_id, exist_ok=True)
        api.create_commit(repo_id, operations, commit_message=f"{algorithm_name(trainer_and_method(args, finished)[1], args)} on {args['env_id']}: {record['run_name']}")
    except Exception as e:
        reason = (str(e).strip().splitlines() or [""])[0]
        raise UploadError(f"{type(e).__name__}: {reason}" if reason else type(e).__name__) from None
    return str(url)


def upload_after_run(run_dir, repo_id):
    """The trainers' --upload-model at the end of a run: upload, and say where it went. On failure, one `error:` line
    that says the run is saved and how to retry, and exit status 1 (the run itself finished)."""
    print(f"uploading {run_dir} to the Hugging Face Hub as {repo_id} ...", flush=True)
    try:
        url = upload_run(run_dir, repo_id)
    except UploadError as e:
        sys.exit(f"error: the upload to {repo_id} failed ({e}); the run and its model are saved in {run_dir}; "
                 f"retry without retraining: {retry_command(run_dir, repo_id)}")  # fmt: skip
    print(f"uploaded to {url}")


# ---- The command line -----------------------------------------------------------------------------------------------
@dataclass
class UploadArgs:
    """Upload a finished run's agent to the Hugging Face Hub: its .cleanrl_model, a model card, its scalars and
    arguments (what --upload-model does at the end of a run)."""

    run_dir: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="RUN_DIR")]
    """the finished run's folder, runs/{run_name}"""
    repo_id: str
    """the model repo to create or update, owner/name (CleanRL names its models {env_id}-{exp_name}-seed{seed})"""


def main(args):
    problem = upload_problem(args.repo_id, flag="--repo-id")
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if not os.path.isdir(args.run_dir):
        print(f"error: {args.run_dir}: no such run folder", file=sys.stderr)
        return 2
    print(f"uploading {args.run_dir} to the Hugging Face Hub as {args.repo_id} ...", flush=True)
    try:
        url = upload_run(args.run_dir, args.repo_id)
    except NotUploadable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except UploadError as e:
        print(f"error: the upload to {args.repo_id} failed ({e}); nothing in {args.run_dir} was changed", file=sys.stderr)
        return 1
    print(f"uploaded to {url}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] != ["upload"]:
        print("usage: python -m camel_utils.hub upload RUN_DIR --repo-id OWNER/NAME (see python -m camel_utils.hub upload --help)", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(tyro.cli(UploadArgs, args=sys.argv[2:], prog="python -m camel_utils.hub upload")))
