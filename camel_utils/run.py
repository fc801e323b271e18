"""Run bookkeeping shared by the trainers (camel_td3.py and camel_sac.py), kept out of their way as CleanRL keeps
its helpers in cleanrl_utils/. None of this is the algorithm:

- reading and checking the command line before anything is written (a failed start leaves no run folder; a mistake
  is one `error:` line and exit status 2);
- the loop's bookkeeping (Run): the TensorBoard writer, the charts logged every 100 steps, the unmasked
  evaluations, checkpoints between episodes, stopping on Ctrl-C or SIGTERM at a consistent point, resuming, the
  progress display and the finished summary;
- checkpoints that continue a run exactly (every module's state, every random generator and, when a run is stopped
  in the middle of an episode, that episode: the env's whole state, its wrappers' counters, the observation and its
  bounds);
- torch.compile with an eager fallback;
- the agent at the end: where it was saved, what to run next, and the upload with --upload-model (hub.py);
- the env and the guide checked before the run folder is written, and the unmasked evaluation of the agent.
"""

import ast
import copy
import dataclasses
import functools
import inspect
import json
import os
import pickle
import random
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from collections import deque
from dataclasses import asdict, fields
from typing import Annotated

import gymnasium as gym

import numpy as np
import torch
import tyro
from torch.utils.tensorboard import SummaryWriter

from camel_utils.cli import REPO, Progress, UsageError, command, shown_path
from camel_utils.conditions import default_exp_name, method_name
from camel_utils.guide import GuideError, full_bounds, guide_file_record, make_guide
from camel_utils.machine import cpu_kind, cpu_model

# The paper's envs are the v4 MuJoCo ones; Gymnasium's reminder that v5 exists is not news here.
warnings.filterwarnings("ignore", message=r".*is out of date\. You should consider upgrading")


# ---- Before the run: the command line -----------------------------------------------------------------------


def parse_args(args_class, script, positive=(), min_mask_width=None, needs_guide=False):
    """A trainer's args from its command line (tyro reads args_class, whose field docstrings are --help), or with
    --resume those of the run being resumed, with its checkpoint; checked (check_common_args, which `positive`,
    `min_mask_width` and `needs_guide` are passed to) and given CleanRL's exp_name (the script's name; td3 or sac for a
    run without a guide) and run name if none was given. A new run may not take the folder of another. Returns (args,
    checkpoint), the checkpoint None for a new run."""
    args = cli_args(args_class)
    checkpoint = None
    if args.resume:
        args, checkpoint = resume_args(args.resume, args, args_class, script)
    check_common_args(args, positive=positive, min_mask_width=min_mask_width, needs_guide=needs_guide, script=script)
    if args.exp_name is None:
        args.exp_name = default_exp_name(script, has_guide(args))
    if args.run_name is None:
        args.run_name = f"{args.env_id}__{args.exp_name}__{args.seed}__{int(time.time())}"
    if checkpoint is None:
        check_new_run_dir(f"runs/{args.run_name}")
    return args, checkpoint


def cli_args(args_class, argv=None):
    """tyro's reading of the command line (argv: sys.argv[1:]), one box of --help per section of args_class."""
    argv = sys.argv[1:] if argv is None else list(argv)
    grouped, groups = grouped_args_class(args_class)
    parsed = tyro.cli(grouped, args=argv, prog=os.path.basename(sys.argv[0]) or None)
    return args_class(**{name: getattr(getattr(parsed, key), name) for key, _, names in groups for name in names})


def has_guide(args):
    """Whether the run's flags give it a guide (CAMEL); without one a trainer is plain TD3 or SAC."""
    return bool(args.llm_policy or args.expert_model or args.random_guide)


@functools.cache
def class_body(args_class):
    """The class's source lines and its body's statements (ast), parsed once for help_sections and field_docstrings."""
    source = textwrap.dedent(inspect.getsource(args_class))
    return source.splitlines(), ast.parse(source).body[0].body


def help_sections(args_class):
    """The sections of a trainer's Args, as --help shows them: [(heading, description, field names)]. A comment line
    at the class body's level right above a field opens a section, written `# Heading: what its flags are`; a field
    belongs to the last section opened above it (fields above the first: "options"). Other comments (above a class
    constant, between a field and its docstring) are comments. Sections without fields are dropped."""
    lines, body = class_body(args_class)
    sections, end_of_previous = [["options", "", []]], body[0].lineno - 1
    for node in body:
        above = lines[end_of_previous : node.lineno - 1]
        if isinstance(node, ast.AnnAssign) and above and above[-1].startswith("    # "):
            heading, _, description = above[-1][6:].partition(": ")
            sections.append([heading.strip(), description.strip(), []])
        end_of_previous = node.end_lineno
        if isinstance(node, ast.AnnAssign):
            sections[-1][2].append(node.target.id)
    return [tuple(section) for section in sections if section[2]]


def field_docstrings(args_class):
    """{field name: its docstring}, the string literal under each field of the class, as tyro reads them."""
    _, body = class_body(args_class)
    return {node.target.id: inspect.cleandoc(after.value.value) for node, after in zip(body, body[1:])
            if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)}  # fmt: skip


@functools.cache
def grouped_args_class(args_class):
    """args_class with its fields in one nested dataclass per help section, so that --help shows one box per section;
    the flags keep their names (no prefix) and their docstrings. Returns (the class, [(attribute, section class, field
    names)]); cli_args parses with it and gives back a flat args_class, so the trainers read args.x as CleanRL's do."""
    docs, all_fields, groups = field_docstrings(args_class), {f.name: f for f in fields(args_class)}, []
    for index, (heading, description, names) in enumerate(help_sections(args_class)):
        spec = []
        for name in names:
            f = all_fields[name]
            kind = Annotated[f.type, tyro.conf.arg(help=docs[name])] if name in docs else f.type
            spec.append((name, kind, dataclasses.field(default=f.default) if f.default is not dataclasses.MISSING
                         else dataclasses.field(default_factory=f.default_factory)))  # fmt: skip
        section = dataclasses.make_dataclass(f"Section{index}", spec)
        groups.append((f"section{index}", section, names, heading, description))
    grouped = dataclasses.make_dataclass(args_class.__name__, [
        (key, Annotated[section, tyro.conf.OmitArgPrefixes, tyro.conf.arg(name=heading, help=description or None)],
         dataclasses.field(default_factory=section)) for key, section, _, heading, description in groups])  # fmt: skip
    grouped.__doc__ = args_class.__doc__
    return grouped, [(key, section, names) for key, section, names, _, _ in groups]


def check_common_args(args, positive=(), min_mask_width=None, needs_guide=False, script="camel_td3.py"):
    """Refuse contradictory or impossible settings of the flags every trainer has (the guide, masking,
    evaluation, checkpoints) with one line; `positive` names trainer-specific fields that must be > 0,
    `min_mask_width` a trainer's least --mask-width (None: any width above 0) and `needs_guide` a trainer that has no
    meaning without one (camel_plus_td3.py). Warns when the run is too short to reach its first update."""
    guides = [flag for flag, on in [("--llm-policy", args.llm_policy), ("--expert-model", args.expert_model),
                                    ("--random-guide", args.random_guide)] if on]  # fmt: skip
    problems = []
    if needs_guide and not guides:
        problems.append(f"{script} needs a guide (--llm-policy FILE, --expert-model MODEL or --random-guide); "
                        "TD3 without one is camel_td3.py")  # fmt: skip
    if len(guides) > 1:
        problems.append(f"choose one guide, not {' and '.join(guides)}")
    if not guides and (not args.masking_aware or not args.epsilon_masking):
        problems.append("--no-masking-aware and --no-epsilon-masking are CAMEL ablations and need a guide")
    if min_mask_width is None and not 0 < args.mask_width <= 2:
        problems.append(f"--mask-width must be in (0, 2], got {args.mask_width}")
    if min_mask_width is not None and not min_mask_width <= args.mask_width <= 2:
        problems.append(f"--mask-width must be in [{min_mask_width:g}, 2] (see --help), got {args.mask_width:g}")
    if not 0 < args.epsilon_fraction <= 1:
        problems.append(f"--epsilon-fraction must be in (0, 1], got {args.epsilon_fraction}")
    for name in ["total_timesteps", "buffer_size", "batch_size", "eval_frequency", "eval_episodes", *positive]:
        if getattr(args, name) <= 0:
            problems.append(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if getattr(args, "guide_bc_coef", 0.0) < 0:  # camel_plus_td3.py's CAMEL+ flag
        problems.append(f"--guide-bc-coef cannot be negative (it would push the actor away from the guide), got {args.guide_bc_coef}")
    if args.learning_starts < 0 or args.checkpoint_frequency < 0 or args.torch_threads < 0:
        problems.append("--learning-starts, --checkpoint-frequency and --torch-threads cannot be negative")
    if not 0 <= args.gamma <= 1 or not 0 < args.tau <= 1:
        problems.append(f"--gamma must be in [0, 1] and --tau in (0, 1], got {args.gamma:g} and {args.tau:g}")
    if args.guide_timeout <= 0:
        problems.append(f"--guide-timeout must be positive (seconds a guide call may take), got {args.guide_timeout:g}")
    # the trainers' own scales (a noise's standard deviation, a learning rate): a negative one is a typo
    for name in ["exploration_noise", "policy_noise", "noise_clip"]:
        if getattr(args, name, 0.0) < 0:
            problems.append(f"--{name.replace('_', '-')} cannot be negative, got {getattr(args, name):g}")
    for name in ["learning_rate", "policy_lr", "q_lr"]:
        if getattr(args, name, 1.0) <= 0:
            problems.append(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name):g}")
    if args.upload_model is not None:
        from camel_utils.hub import upload_problem

        if not args.save_model:
            problems.append("--upload-model uploads the saved model; drop --no-save-model")
        problems.append(upload_problem(args.upload_model))  # the repo id's form, a token
    problems = [problem for problem in problems if problem]
    if problems:
        raise UsageError(problems[0])
    if not updates_happen(args):
        print(f"warning: no update will happen: the first is at step {args.learning_starts + 1} (after --learning-starts "
              f"{args.learning_starts}), but --total-timesteps {args.total_timesteps} ends the run before it; "
              "the actor stays as initialised", file=sys.stderr)  # fmt: skip


def updates_happen(args):
    """Whether the loop reaches a gradient update: as in CleanRL, updates run at the steps after learning_starts,
    and the steps are 0 .. total_timesteps - 1."""
    return args.total_timesteps > args.learning_starts + 1


def check_new_run_dir(run_dir):
    """A new run never overwrites another: refuse a folder that holds an unfinished or a finished run."""
    if os.path.exists(os.path.join(run_dir, "checkpoint.pt")):
        raise UsageError(f"{run_dir} holds an unfinished run; continue it with --resume {run_dir} or pick another --run-name")
    if os.path.exists(os.path.join(run_dir, "finished.json")):
        raise UsageError(f"{run_dir} holds a finished run; pick another --run-name")


# ---- Stopping ------------------------------------------------------------------------------------------------


class StopRequest:
    """Ctrl-C or SIGTERM (a cluster's preemption, `kill`) asks the loop to stop at the end of the current step,
    where the state is consistent, and save a checkpoint there. A second signal stops at once, unsaved.

    For tests, CAMEL_STOP_AT_STEP=N in the environment makes the process send itself SIGINT at the end of its Nth
    step, as a Ctrl-C during that step would, so a test can stop a run at a step it chooses."""

    def __init__(self):
        self.signal = None
        self.test_step = int(os.environ.get("CAMEL_STOP_AT_STEP", "0"))
        signal.signal(signal.SIGINT, self.handle)
        signal.signal(signal.SIGTERM, self.handle)

    def handle(self, signum, frame):
        if self.signal is not None:
            raise KeyboardInterrupt
        self.signal = signum

    def requested(self, steps_done):
        """Whether a stop was asked for, at the end of a step that made the step count `steps_done`."""
        if steps_done == self.test_step:
            signal.raise_signal(signal.SIGINT)  # delivered and handled before this returns
        return self.signal is not None


# ---- Checkpoints: everything needed to continue a run as if it had never stopped -------------------------------


def rng_state(rng, env):
    """Every random generator a run draws from: Python's, NumPy's global and `rng` (a numpy Generator), torch's
    (and CUDA's, once used), the env's, and its action and observation spaces'."""
    return {"python": random.getstate(), "numpy_global": np.random.get_state(), "numpy": rng.bit_generator.state,
            "torch": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state() if torch.cuda.is_initialized() else None,
            "env": env.unwrapped.np_random.bit_generator.state,
            "spaces": [space.np_random.bit_generator.state for space in (env.action_space, env.observation_space)]}  # fmt: skip


def restore_rng_state(state, rng, env):
    random.setstate(state["python"])
    np.random.set_state(state["numpy_global"])
    rng.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])
    if state["cuda"] is not None and torch.cuda.is_initialized():
        torch.cuda.set_rng_state(state["cuda"])
    env.unwrapped.np_random.bit_generator.state = state["env"]
    for space, space_state in zip((env.action_space, env.observation_space), state["spaces"]):
        space.np_random.bit_generator.state = space_state


# An episode under way is the env's state: the simulator's (for MuJoCo, its whole MjData: positions, velocities,
# actuator activations, time, the solver's warm start, and what the last step computed, such as the body positions
# Ant's reward reads) and every wrapper's counters (TimeLimit's elapsed steps, RecordEpisodeStatistics' running return
# and length). Attributes that are plain data are copied; the constant parts (spaces, spec, the MuJoCo model and
# renderer) are left; an env holding anything else (a Box2D world) cannot be saved mid-episode.
CONSTRUCTOR_RECORDS = ("env", "_saved_kwargs", "_ezpickle_args", "_ezpickle_kwargs")  # how it was made, not its state
VIDEO_FRAMES = ("recorded_frames", "render_history")  # RecordVideo's frames of the video under way are not kept


def is_plain(value):
    """Numbers, strings, arrays, and lists, tuples, deques and dicts of them: state that copies as it is."""
    if value is None or isinstance(value, (bool, int, float, str, np.ndarray, np.generic)):
        return True
    if isinstance(value, (list, tuple, deque)):
        return all(is_plain(v) for v in value)
    return isinstance(value, dict) and all(isinstance(k, str) and is_plain(v) for k, v in value.items())


def is_constant(value):
    """Parts of an env that stepping does not change (the random generators are saved with the others)."""
    from gymnasium.envs.registration import EnvSpec

    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    return isinstance(value, (gym.Space, EnvSpec, np.random.Generator)) or callable(value) or kind in (
        "mujoco._structs.MjModel", "gymnasium.envs.mujoco.mujoco_rendering.MujocoRenderer")  # fmt: skip


def env_layers(env):
    """The env and every env it wraps, outermost first."""
    layers = [env]
    while isinstance(layers[-1], gym.Wrapper):
        layers.append(layers[-1].env)
    return layers


def env_state(env):
    """The state of an episode under way in `env` as [(layer type, {attribute: value})], outermost first; or, when
    some part of it cannot be saved, a string naming that part."""
    state = []
    for layer in env_layers(env):
        attributes = {}
        for name, value in vars(layer).items():
            if name in CONSTRUCTOR_RECORDS or name in VIDEO_FRAMES or is_constant(value):
                continue
            if type(value).__name__ == "MjData":
                value = pickle.dumps(value)  # the whole simulator state, restored with mujoco.mj_copyData
            elif not is_plain(value):
                return f"{type(layer).__name__}.{name} ({type(value).__name__})"
            attributes[name] = copy.deepcopy(value)
        if isinstance(layer, gym.wrappers.RecordVideo):
            attributes["recording"] = False  # the video under way is lost; later ones are numbered on
        state.append((type(layer).__name__, attributes))
    return state


def restore_env_state(env, state):
    """Put an episode saved by env_state back into a freshly made env of the same id."""
    layers = env_layers(env)
    if [type(layer).__name__ for layer in layers] != [name for name, _ in state]:
        raise UsageError(f"the checkpoint's episode was saved from an env wrapped as {' > '.join(n for n, _ in state)}, this one is "
                         f"{' > '.join(type(layer).__name__ for layer in layers)}; resume it with the versions that started it")  # fmt: skip
    for layer, (_, attributes) in zip(layers, state):
        for name, value in attributes.items():
            if isinstance(value, bytes) and type(getattr(layer, name, None)).__name__ == "MjData":
                import mujoco

                mujoco.mj_copyData(getattr(layer, name), layer.model, pickle.loads(value))
            else:
                setattr(layer, name, copy.deepcopy(value))


class Checkpoints:
    """A run's checkpoint file: everything needed to continue the run as if it had never stopped.

    `modules` is a dict of anything with state_dict() / load_state_dict(): networks, optimisers, the replay
    buffer, the guide's call counts. `counters` is a dict of plain numbers, restored in place. Each checkpoint
    also holds the run's args, the next step to take, every random generator (see rng_state) and the episode
    under way, if any: the loop's (obs, low, high, masked, ...) for that step and the env's state (see env_state)."""

    def __init__(self, path, args, modules, counters, rng, env, script):
        self.path, self.args, self.modules, self.counters, self.rng, self.env = path, args, modules, counters, rng, env
        self.script, self.commit = script, source_commit()

    def save(self, global_step, episode=None):
        """Save the state before `global_step`, atomically: a kill during the save leaves the previous checkpoint
        intact. `episode`: the loop's (obs, low, high, masked, ...) in the middle of an episode, None between episodes.
        Returns None, or what kept the episode from being saved (it is then dropped: the resumed run starts a new one)."""
        env, dropped = (env_state(self.env), None) if episode is not None else (None, None)
        if isinstance(env, str):
            env, dropped = None, env
        state = {"script": self.script, "commit": self.commit, "args": asdict(self.args), "global_step": global_step,
                 "counters": dict(self.counters),
                 **{name: module.state_dict() for name, module in self.modules.items()}, "rng": rng_state(self.rng, self.env),
                 "episode": None if env is None else {"loop": episode, "env": env}}  # fmt: skip
        torch.save(state, self.path + ".tmp")
        os.replace(self.path + ".tmp", self.path)
        return dropped

    def restore(self, checkpoint):
        """Load a checkpoint (from load_checkpoint) into the modules, counters, random generators and, if it was
        saved in the middle of an episode, the env; returns the step to continue from and the loop's (obs, low, high,
        masked, ...) there (None between episodes)."""
        for name, module in self.modules.items():
            module.load_state_dict(checkpoint[name])
        self.counters.update(checkpoint["counters"])
        restore_rng_state(checkpoint["rng"], self.rng, self.env)
        episode = checkpoint["episode"]
        if episode is None:
            return checkpoint["global_step"], None
        restore_env_state(self.env, episode["env"])
        return checkpoint["global_step"], episode["loop"]


def load_checkpoint(path):
    return torch.load(path, map_location="cpu", weights_only=False)


@functools.cache
def source_commit():
    """The git commit of the code running (the repository this file lies in), None outside a git checkout: a
    checkpoint and a finished run record it, and a checkpoint is resumed only by the commit that wrote it."""
    try:
        result = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def same_code(commit, other):
    """Whether two commits hold the same Python code (they differ, if at all, in docs, results or tests): a run may
    resume across commits that only added results, such as the experiment queue's."""
    if not commit or not other:
        return False
    changed = subprocess.run(["git", "-C", str(REPO), "diff", "--name-only", commit, other, "--", "*.py", ":!tests"],
                             capture_output=True, text=True, timeout=30)  # fmt: skip
    return changed.returncode == 0 and not changed.stdout.strip()


MACHINE_SETTINGS = ("cuda", "torch_threads")  # describe the machine, not the experiment
AFTER_RUN_SETTINGS = ("upload_model",)  # what happens after the run: the resuming command's, else the run's own


def resume_args(resume, cli_args, args_class, script):
    """The args of the run being resumed (an instance of args_class) and its checkpoint, loaded. The checkpoint must
    have been written by this script at this commit (a checkpoint names both; another is refused in one line saying
    which to run). Flags given on the command line that differ from the run's own are reported and ignored, except
    the machine settings."""
    if not os.path.exists(resume):
        raise UsageError(f"--resume {resume}: no such run folder")
    path = os.path.join(resume, "checkpoint.pt") if os.path.isdir(resume) else resume
    if not os.path.isfile(path):
        if os.path.isfile(os.path.join(resume, "finished.json")):
            raise UsageError(f"the run in {resume} already finished; there is nothing to resume")
        raise UsageError(f"--resume {resume}: no checkpoint.pt there (runs save one every --checkpoint-frequency "
                         "steps and when stopped with Ctrl-C or SIGTERM)")  # fmt: skip
    checkpoint = load_checkpoint(path)
    saved, writer, commit = checkpoint["args"], checkpoint.get("script"), checkpoint.get("commit")
    if writer is None:
        raise UsageError(f"--resume {resume}: the checkpoint names no script and commit: a version before they were "
                         "recorded wrote it; finish it with the commit that started it (its log.txt or git log)")  # fmt: skip
    if writer != script:  # its networks would not fit this trainer's
        raise UsageError(f"--resume {resume}: {writer} wrote this run; continue it with: {command(writer, '--resume', shown_path(resume))}")
    if commit != source_commit() and not same_code(commit, source_commit()):
        raise UsageError(f"--resume {resume}: commit {commit} wrote this run and this is {source_commit()}; resume it with "
                         f"that commit (git checkout {commit}, or a git worktree there)")  # fmt: skip
    args = args_class(**{f.name: saved[f.name] for f in fields(args_class) if f.name in saved})
    for name in MACHINE_SETTINGS:
        setattr(args, name, getattr(cli_args, name))
    for name in AFTER_RUN_SETTINGS:
        if getattr(cli_args, name, None) is not None:
            setattr(args, name, getattr(cli_args, name))
    defaults = args_class()
    ignored = [f.name for f in fields(args_class) if f.name not in ("resume", *MACHINE_SETTINGS, *AFTER_RUN_SETTINGS)
               and getattr(cli_args, f.name) != getattr(defaults, f.name) and getattr(cli_args, f.name) != getattr(args, f.name)]  # fmt: skip
    if ignored:
        print(f"warning: resuming uses the run's own settings; ignoring --{', --'.join(n.replace('_', '-') for n in ignored)}", file=sys.stderr)
    args.resume = resume
    return args, checkpoint


def finish_run(run_dir, summary):
    """Mark a run complete: write finished.json and delete its checkpoint (the replay buffer in it is no longer needed)."""
    with open(os.path.join(run_dir, "finished.json"), "w") as f:
        json.dump(summary, f, indent=2)
    checkpoint_path = os.path.join(run_dir, "checkpoint.pt")
    if os.path.exists(checkpoint_path):
        os.remove(checkpoint_path)


# ---- Before the run: the env and the guide ------------------------------------------------------------------
def checked_env(make_env_thunk, env_id):
    """The env the thunk makes, or one line saying why there is none (an unknown id, no renderer for
    --capture-video, not a bounded continuous action space)."""
    import mujoco

    try:
        env = make_env_thunk()
    except gym.error.Error as e:
        raise UsageError(f"--env-id {env_id}: {e}")
    except mujoco.FatalError as e:  # rendering for --capture-video with no display and no MUJOCO_GL
        raise UsageError(f"{env_id} cannot render here ({e}); without a display, set MUJOCO_GL=egl (or osmesa) to film it")
    if not isinstance(env.action_space, gym.spaces.Box):
        raise UsageError(f"{env_id} has a {type(env.action_space).__name__} action space; only continuous (Box) action spaces are supported")
    if not (np.isfinite(env.action_space.low).all() and np.isfinite(env.action_space.high).all()):
        raise UsageError(f"{env_id}'s actions are unbounded (a Box with infinite bounds): TD3's action scale and CAMEL's box "
                         "need finite ones")  # fmt: skip
    return env


def checked_guide(args, eval_env, rng):
    """CAMEL's guide g(s) of the run (None without one: the plain baseline), or one line saying why it cannot be used,
    before the run folder is written. An LLM-written guide is tried on states sampled from eval_env, so that the
    training env (and its video) starts untouched."""
    try:
        return make_guide(eval_env, llm_policy=args.llm_policy, expert_model=args.expert_model, random_guide=args.random_guide,
                          rng=rng, seed=args.seed, call_timeout=args.guide_timeout)  # fmt: skip
    except GuideError as e:
        raise UsageError(str(e))


# ---- Unmasked evaluation ------------------------------------------------------------------------------------
def evaluate(policy, eval_env, episodes, seed, device):
    """Unmasked evaluation: the deterministic policy(obs, low, high) -> env action over the whole action space
    (low = -1, high = 1), from the same start states at every evaluation. Returns the mean return and length."""
    low, high = (torch.as_tensor(b, device=device).unsqueeze(0) for b in full_bounds(int(np.prod(eval_env.action_space.shape))))
    returns, lengths = [], []
    for episode in range(episodes):
        obs, _ = eval_env.reset(seed=seed + episode)  # the same start states at every evaluation
        done, episode_return, length = False, 0.0, 0
        while not done:
            with torch.no_grad():
                action = policy(torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0), low, high)
            obs, reward, terminated, truncated, _ = eval_env.step(action.cpu().numpy()[0])
            episode_return, length, done = episode_return + float(reward), length + 1, terminated or truncated
        returns.append(episode_return)
        lengths.append(length)
    return float(np.mean(returns)), float(np.mean(lengths))


# ---- The loop's bookkeeping ----------------------------------------------------------------------------------


class Run:
    """A trainer's run beside its algorithm, the same for camel_td3.py and camel_sac.py: the TensorBoard writer (and
    Weights and Biases), checkpoints and resuming, stopping on Ctrl-C or SIGTERM, the progress display, the charts
    logged every 100 steps, the unmasked evaluations and the finished summary (with the guide file's record).

    The trainer makes one after parsing its args (the writer opens here), calls start() before its loop,
    after_step() at the end of every step, stopped_at_once() on a KeyboardInterrupt, and finish() after the loop."""

    def __init__(self, args, script, checkpoint, env, eval_env, guide, rng, device):
        self.args, self.script, self.checkpoint, self.env, self.eval_env = args, script, checkpoint, env, eval_env
        self.guide, self.rng, self.device = guide, rng, device
        self.method = method_name(script, vars(args), guided=guide is not None)  # CAMEL+, the paper's CAMEL, TD3, ...
        self.run_dir = f"runs/{args.run_name}"
        self.model_path = f"{self.run_dir}/{args.exp_name}.cleanrl_model"  # where the trainer saves the agent (CleanRL's)
        self.guide_file = guide_file_record(args.llm_policy) if args.llm_policy else None  # path and sha256, for the run's record
        if args.track:
            try:
                import wandb
            except ImportError:
                raise UsageError("--track needs Weights and Biases: pip install wandb")
            wandb.init(project=args.wandb_project_name, entity=args.wandb_entity, sync_tensorboard=True, config=vars(args),
                       name=args.run_name, monitor_gym=True, save_code=True, resume="allow", id=args.run_name)  # fmt: skip
        # purge_step hides curve points logged after the checkpoint by an interrupted process (or, on a fresh
        # start, those of an earlier attempt that was killed before its first checkpoint)
        self.writer = SummaryWriter(self.run_dir, purge_step=checkpoint["global_step"] if checkpoint else 0)
        if checkpoint is None:
            self.writer.add_text(
                "hyperparameters",
                "|param|value|\n|-|-|\n%s" % ("\n".join([f"|{key}|{value}|" for key, value in vars(args).items()])),
            )
        # CAMEL: window_masked of window_steps were masked since the last charts/masked_fraction point
        self.counters = {"episodes": 0, "window_masked": 0, "window_steps": 0}
        self.last_return = self.eval_return = None
        self.progress, self.stats = None, {}  # the progress line and its latest numbers

    def start(self, modules, policy, loop_size=4):
        """Take the modules the checkpoints hold by name (networks, optimisers, the replay buffer; CAMEL: and the
        guide's call counts are added) and the deterministic policy(obs, low, high) that is evaluated; restore them
        when resuming. Returns the step the loop starts from and the loop's state there, loop_size values as
        after_step is given them (obs, low, high, masked, then the trainer's own): all None when an episode starts at
        the top of the loop, else those of the episode a stopped run was in (the env is restored to that episode); a
        value an older checkpoint did not keep is None."""
        args = self.args
        self.policy = policy
        if self.guide is not None:
            modules = {**modules, "guide": self.guide}
        self.checkpoints = Checkpoints(os.path.join(self.run_dir, "checkpoint.pt"), args, modules, self.counters, self.rng, self.env,
                                       self.script)  # fmt: skip
        self.start_step, episode = 0, None
        if self.checkpoint:
            self.start_step, episode = self.checkpoints.restore(self.checkpoint)
            print(f"resuming {args.run_name} at step {self.start_step}{' in the middle of an episode' if episode else ''}", file=sys.stderr)
        self.stop_request = StopRequest()
        print(f"run {args.run_name}: {args.env_id}, {self.method}{f', guide {self.guide.name}' if self.guide else ''}, "
              f"steps {self.start_step}-{args.total_timesteps} on {self.device}; logs in {shown_path(self.run_dir)}", flush=True)  # fmt: skip
        if self.checkpoint and self.start_step % args.eval_frequency == 0:
            # the evaluation logged at this step before the checkpoint was purged with the points after it
            # (purge_step above), and the loop only evaluates after a step: evaluate again (it draws nothing from
            # the training's random generators, so the run continues as if it had never stopped)
            self.evaluate(self.start_step)
        self.start_time = time.time()
        self.progress = Progress(args.total_timesteps, args.run_name, initial=self.start_step)
        frequency = args.checkpoint_frequency
        self.next_checkpoint = (self.start_step // frequency + 1) * frequency if frequency else None
        episode = tuple(episode or ())
        return self.start_step, episode + (None,) * (loop_size - len(episode))

    def evaluate(self, step):
        """Unmasked evaluation (evaluate, above), logged as eval/episodic_return and eval/episodic_length at `step`."""
        args = self.args
        self.eval_return, eval_length = evaluate(self.policy, self.eval_env, args.eval_episodes, args.seed + 100_000, self.device)
        self.writer.add_scalar("eval/episodic_return", self.eval_return, step)
        self.writer.add_scalar("eval/episodic_length", eval_length, step)
        if self.progress is not None:
            self.progress.set_postfix(self.postfix(eval=self.eval_return))
            self.progress.advance_to(step)

    def after_step(self, global_step, info, epsilon, masked, episode_over, next_state):
        """The end of step `global_step` (whose info, epsilon and mask are given; next_state is the loop's (next_obs,
        next_low, next_high, next_masked, ...), kept by a checkpoint in the middle of an episode): every 100 steps the charts and the progress display, every eval_frequency
        steps (and at the last) an unmasked evaluation, at the first episode end after every checkpoint_frequency
        steps a checkpoint, and on a stop request a checkpoint (with the episode under way) and exit."""
        args, counters = self.args, self.counters
        counters["window_masked"], counters["window_steps"] = counters["window_masked"] + masked, counters["window_steps"] + 1
        if "episode" in info:
            self.last_return = float(info["episode"]["r"])
            self.counters["episodes"] += 1

        if global_step % 100 == 0:
            sps = int((global_step + 1 - self.start_step) / (time.time() - self.start_time))
            self.writer.add_scalar("charts/SPS", sps, global_step)
            # CAMEL: epsilon, the share of steps masked since the last point, and the guide's failed calls
            self.writer.add_scalar("charts/epsilon", epsilon, global_step)
            self.writer.add_scalar("charts/masked_fraction", counters["window_masked"] / counters["window_steps"], global_step)
            self.writer.add_scalar("charts/guide_failures", self.guide.failures if self.guide else 0, global_step)
            counters["window_masked"] = counters["window_steps"] = 0
            self.progress.set_postfix(self.postfix(sps=sps, epsilon=round(epsilon, 3) if self.guide else None,
                                                   **{"return": self.last_return, "eval": self.eval_return}))  # fmt: skip
            self.progress.advance_to(global_step + 1)

        if (global_step + 1) % args.eval_frequency == 0 or global_step + 1 == args.total_timesteps:
            self.evaluate(global_step + 1)  # logged at the step count reached, as CleanRL logs its evaluations

        # checkpoint between episodes, so a resumed run continues exactly where this one stopped
        if episode_over and self.next_checkpoint is not None and self.next_checkpoint <= global_step + 1 < args.total_timesteps:
            self.checkpoints.save(global_step + 1)
            self.next_checkpoint = ((global_step + 1) // args.checkpoint_frequency + 1) * args.checkpoint_frequency

        # a stop request: a checkpoint with the episode under way, so the resumed run continues it as if never stopped
        if self.stop_request.requested(global_step + 1) and global_step + 1 < args.total_timesteps:
            self.progress.close()
            dropped = self.checkpoints.save(global_step + 1, None if episode_over else next_state)
            self.writer.close()
            if dropped:
                print(f"\nwarning: the episode under way was dropped ({dropped} cannot be saved): the resumed run starts a new "
                      "one here, so it will not be the run that never stopped", file=sys.stderr)  # fmt: skip
            print(f"\ninterrupted at step {global_step + 1}; continue with: {command(self.script, '--resume', shown_path(self.run_dir))}", file=sys.stderr)
            sys.exit(130)
        if global_step + 1 == args.total_timesteps:
            self.progress.close()

    def postfix(self, **stats):
        """The progress line's latest numbers: steps/s, epsilon, the last training return, the last evaluation."""
        self.stats.update({k: v for k, v in stats.items() if v is not None})
        return ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in self.stats.items())

    def stopped_at_once(self):
        """A second Ctrl-C or SIGTERM (a KeyboardInterrupt in the loop): exit without saving."""
        self.progress.close()
        self.writer.close()
        sys.exit(f"\nstopped at once without saving; the last checkpoint (if any) is in {self.run_dir}")

    def finish(self):
        """Mark the run finished (finished.json, the checkpoint removed), say how it ended, where the model is and what
        to run next, close the envs and the writer, and with --upload-model put the agent on the Hub (camel_utils/hub.py)."""
        args, guide = self.args, self.guide
        finish_run(self.run_dir, {"run_name": args.run_name, "script": self.script, "method": self.method, "commit": source_commit(),
                                  "env_id": args.env_id, "exp_name": args.exp_name, "seed": args.seed,
                                  "total_timesteps": args.total_timesteps, "final_eval_return": self.eval_return,
                                  "guide_calls": guide.calls if guide else None, "guide_failures": guide.failures if guide else 0,
                                  "guide_file": self.guide_file, "cpu": cpu_model(), "cpu_kind": cpu_kind()})  # fmt: skip
        if updates_happen(args):
            print(f"finished {args.run_name}: eval/episodic_return {self.eval_return:.1f} after {args.total_timesteps} steps")
        else:
            print(f"finished {args.run_name} without learning (no update before --total-timesteps {args.total_timesteps}): "
                  f"eval/episodic_return {self.eval_return:.1f} is the untrained actor's")  # fmt: skip
        if args.save_model:
            print(f"model saved to {shown_path(self.model_path)} (CleanRL's format)\n"
                  f"  evaluate it:   {command('evaluate_policy.py', '--env-id', args.env_id, shown_path(self.model_path), '--seed', args.seed + 100_000, '--episodes', args.eval_episodes)}\n"
                  f"  guide with it: {command('camel_td3.py', '--env-id', args.env_id, '--expert-model', shown_path(self.model_path))}")  # fmt: skip
        self.env.close()
        self.eval_env.close()
        self.writer.close()
        if args.upload_model:
            from camel_utils.hub import upload_after_run

            upload_after_run(self.run_dir, args.upload_model)


# ---- Speed and display ----------------------------------------------------------------------------------------


class CompiledOrEager:
    """torch.compile(fn), or fn itself (with a message) if compiling fails on this machine (no C++ compiler,
    an unsupported op): compilation happens at the first call, before anything runs, so falling back is safe."""

    def __init__(self, fn, mode=None):
        self.fn, self.compiled = fn, torch.compile(fn, mode=mode)

    def __call__(self, *args, **kwargs):
        if self.compiled is not None:
            try:
                return self.compiled(*args, **kwargs)
            except Exception as e:
                print(f"warning: torch.compile failed for {self.fn.__name__} ({type(e).__name__}); running it uncompiled", file=sys.stderr)
                self.compiled = None
        return self.fn(*args, **kwargs)
