"""Training speed of CAMEL-TD3 (camel_td3.py) and CAMEL-SAC (camel_sac.py) beside CleanRL's TD3 and SAC, in
environment steps per second.

Each configuration ("variant": a name and extra camel_td3.py or camel_sac.py flags) and CleanRL's own script for
the same algorithm (cleanrl/td3_continuous_action.py, and cleanrl/sac_continuous_action.py when a variant runs
camel_sac.py) are run as separate processes, in fresh temporary folders, for the same
steps, seed and hyperparameters; round-robin over the repeats, so that a change in the machine's load
touches every variant alike. The table gives the median and the range over the repeats, and the ratios
to CleanRL and to our own baseline at the same thread count. Beside the TD3 variants it also runs CleanRL's
JAX TD3 (cleanrl/td3_continuous_action_jax.py, row cleanrl-jax-td3) in its own venv, when that venv exists
(benchmarks/setup_cleanrl.sh --jax), and adds a "vs CleanRL JAX" column; "vs CleanRL" stays the ratio to
CleanRL's PyTorch script.

How training-phase steps/s is measured, the same way for both scripts: both log `charts/SPS` to
TensorBoard every 100 steps once learning has started, and every event carries the wall-clock time at
which it was logged. We read both runs' event files and take
    steps/s = (step_b - step_a) / (wall_time_b - wall_time_a)
between the first event at or after warm-up + settling steps (a) and the last (b). That leaves out the
process start, imports, the guide's trial run, the warm-up (random actions filling the replay buffer,
`--learning-starts`) and the first updates (where a compiled path compiles), and times nothing but the
training loop. camel_td3.py's periodic evaluation, which CleanRL's script does not do, is moved to the end
of the run, past the measured window (`--eval-frequency` = total steps).

Beside the runs it reports the guide's cost (microseconds per `policy(obs)` call, raw and through the
Guide wrapper that training uses, and their share of one training step) and the size of the replay
buffer of a 1M-step Ant-v4 run in our layout (observations, next observations, action, reward, done,
and the action bounds of s and s', all float32), computed without allocating it.

Threads: `--torch-threads` sets both torch's threads (camel_td3.py's own flag) and OMP_NUM_THREADS /
MKL_NUM_THREADS for both scripts (CleanRL has no flag; torch takes its default thread count from
OMP_NUM_THREADS). 0 leaves torch's default (one thread per physical core). Give several (`--torch-threads
1 2`) to measure each. JAX has no such setting: XLA on the CPU runs its own thread pool, sized by the cores
the process may run on, and the benchmark leaves it alone; only the JAX script's torch part (its replay buffer)
follows OMP_NUM_THREADS. `--pin-cores 0` runs every measured process, ours and CleanRL's, under
`taskset -c 0`: with `--torch-threads 1` that is "each pinned to one core", for JAX too (its pool shrinks to
the one core it may use).

Examples:
    # CleanRL's venv, once (see benchmarks/setup_cleanrl.sh for the pins); --jax: the venv of its JAX TD3
    bash benchmarks/setup_cleanrl.sh /tmp/cleanrl
    bash benchmarks/setup_cleanrl.sh --jax /tmp/cleanrl
    # the full comparison on a quiet machine
    python benchmarks/benchmark.py --cleanrl /tmp/cleanrl --torch-threads 1 2
    # beside CleanRL's JAX TD3: every library at its default threads, then each run pinned to one core
    python benchmarks/benchmark.py --cleanrl /tmp/cleanrl --torch-threads 0
    python benchmarks/benchmark.py --cleanrl /tmp/cleanrl --torch-threads 1 --pin-cores 0
    # add a variant (flags are camel_td3.py's; {guide} is --guide-policy)
    python benchmarks/benchmark.py --cleanrl /tmp/cleanrl --variant "camel-epsilon=--llm-policy {guide}"
    # SAC: a variant whose flags start with camel_sac.py runs that trainer, beside CleanRL's SAC (row cleanrl-sac)
    python benchmarks/benchmark.py --cleanrl /tmp/cleanrl --variants "sac=camel_sac.py" \
        "sac-camel=camel_sac.py --llm-policy {guide} --no-epsilon-masking" --reference-variant sac
    # a quick look while developing
    python benchmarks/benchmark.py --warmup-steps 1000 --train-steps 1000 --repeats 1
"""

import datetime
import glob
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, NamedTuple, Optional

import tyro

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # camel_td3 and camel_utils.guide, when run as `python benchmarks/benchmark.py`

from camel_utils.machine import cpu_kind, cpu_model, cpu_simd  # noqa: E402

SPS_TAG = "charts/SPS"  # logged every 100 steps by camel_td3.py, camel_sac.py and CleanRL's TD3 and SAC
TRAINERS = ("camel_td3.py", "camel_plus_td3.py", "camel_sac.py")  # a variant's flags may start with one of these; camel_td3.py otherwise
# each trainer's counterpart in a CleanRL checkout, and the name of its row
CLEANRL_SCRIPTS = {"camel_td3.py": ("cleanrl", "td3_continuous_action.py"), "camel_plus_td3.py": ("cleanrl", "td3_continuous_action.py"),
                   "camel_sac.py": ("cleanrl-sac", "sac_continuous_action.py")}  # fmt: skip
# CleanRL's JAX TD3, a second counterpart of camel_td3.py, run in a venv of its own (JAX's pins, not the PyTorch one's)
CLEANRL_JAX_ROW, CLEANRL_JAX_SCRIPT = "cleanrl-jax-td3", "td3_continuous_action_jax.py"
CLEANRL_ROW_SCRIPTS = {**dict(CLEANRL_SCRIPTS.values()), CLEANRL_JAX_ROW: CLEANRL_JAX_SCRIPT}  # each CleanRL row's script
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
DEFAULT_CLEANRL_PYTHON = CACHE / "camel/cleanrl-venv/bin/python"
DEFAULT_CLEANRL_JAX_PYTHON = CACHE / "camel/cleanrl-jax-venv/bin/python"


@dataclass
class Args:
    env_id: str = "Hopper-v4"
    """the environment every run trains on"""
    warmup_steps: int = 2000
    """steps of random actions before learning starts (passed as --learning-starts to both scripts)"""
    settle_steps: int = 500
    """steps after warm-up left out of the measurement (first updates, compilation, CUDA-graph capture)"""
    train_steps: int = 5000
    """training steps measured after warm-up and settling (a multiple of 100, the logging interval)"""
    repeats: int = 3
    """runs of each variant; the table gives their median and range"""
    seed: int = 1
    """seed of the first repeat (repeat i uses seed + i, the same for every variant and CleanRL)"""
    variants: tuple[str, ...] = (
        "baseline=",
        "camel-plus=camel_plus_td3.py --llm-policy {guide} --no-epsilon-masking",
        "camel=--llm-policy {guide} --no-epsilon-masking",
        "camel-two-qnetworks=--llm-policy {guide} --no-epsilon-masking --no-fast-update",
        "camel-compile=--llm-policy {guide} --no-epsilon-masking --compile",
    )
    """configurations to measure, each NAME=FLAGS ({guide} stands for --guide-policy), camel_td3.py's flags unless
    FLAGS starts with another trainer: our TD3 baseline (camel_td3.py without a guide), CAMEL+ (camel_plus_td3.py), the
    paper's CAMEL (camel_td3.py), the same with the plain update (CleanRL's two separate critics and autograd), and
    compiled.
    The camel variants mask every step (--no-epsilon-masking), so the guide is called at every step: the
    most the masking can cost; with epsilon masking the guide is called on fewer steps"""
    variant: tyro.conf.UseAppendAction[tuple[str, ...]] = ()
    """one more variant NAME=FLAGS, measured after --variants; repeat the flag for several"""
    guide_policy: str = "policies/hopper.py"
    """the guide file used by {guide} in the variants and timed for the guide-cost table"""
    cleanrl: Optional[str] = None
    """path of a CleanRL checkout (github.com/vwxyzjn/cleanrl, outside this repo); runs its
    cleanrl/td3_continuous_action.py beside camel_td3.py variants and cleanrl/sac_continuous_action.py (row
    cleanrl-sac) beside camel_sac.py variants (none: no CleanRL rows)"""
    cleanrl_python: Optional[str] = None
    """the Python of CleanRL's venv (default: ~/.cache/camel/cleanrl-venv/bin/python, as made by
    benchmarks/setup_cleanrl.sh)"""
    cleanrl_jax: bool = True
    """with --cleanrl and camel_td3.py variants, also run CleanRL's JAX TD3, cleanrl/td3_continuous_action_jax.py
    (row cleanrl-jax-td3, and a 'vs CleanRL JAX' column), when its venv exists (--no-cleanrl-jax: never)"""
    cleanrl_jax_python: Optional[str] = None
    """the Python of CleanRL's JAX venv (default: ~/.cache/camel/cleanrl-jax-venv/bin/python, as made by
    benchmarks/setup_cleanrl.sh --jax; when that is missing, the JAX row is skipped with a message)"""
    torch_threads: tuple[int, ...] = (1,)
    """torch threads per run (0: torch's default, one per physical core); several values measure each (e.g. 1 2).
    Sets camel_td3.py's --torch-threads and OMP_NUM_THREADS / MKL_NUM_THREADS of every run. CleanRL's JAX TD3
    has no thread setting and is left at its default: XLA on the CPU runs its own thread pool, sized by the cores
    the process may run on (all, or those of --pin-cores); only its torch part (replay buffer) follows
    OMP_NUM_THREADS"""
    pin_cores: Optional[str] = None
    """run every measured process, ours and CleanRL's, under `taskset -c PIN_CORES` (a CPU list: 0, or 0,1, or
    2-3), still one process at a time. `--pin-cores 0 --torch-threads 1` measures each pinned to one core, JAX
    included (its pool shrinks to the cores it may use); none: not pinned, each process may use every core"""
    device: Literal["cpu", "cuda"] = "cpu"
    """the device of every run (cuda: both venvs' torch must see a GPU)"""
    reference_variant: str = "baseline"
    """the variant the 'vs baseline' column divides by"""
    guide_calls: int = 10000
    """calls of the guide timed for the guide-cost table (0: skip that table)"""
    memory_env_id: str = "Ant-v4"
    """the environment whose replay buffer size is reported"""
    memory_transitions: int = 1000000
    """transitions in that replay buffer (a 1M-step run)"""
    output_dir: str = "benchmarks/results"
    """where results.json and results.md are written"""
    keep_runs: bool = False
    """keep each run's temporary folder (TensorBoard events and log) and print its path"""


class Variant(NamedTuple):
    name: str
    flags: list  # camel_td3.py flags, or a trainer in TRAINERS and its flags; None for CleanRL's script
    trainer: str = "camel_td3.py"  # ours, or for a CleanRL row the trainer it stands beside


def trainer_of(flags):
    return flags[0] if flags[:1] and flags[0] in TRAINERS else "camel_td3.py"


class Window(NamedTuple):
    """The measured part of one run: from first_step to last_step in seconds."""

    first_step: int
    last_step: int
    seconds: float

    @property
    def steps_per_second(self):
        return (self.last_step - self.first_step) / self.seconds


def parse_variants(specs, guide):
    """NAME=FLAGS strings into Variants; relative paths in the flags are made absolute, as runs start elsewhere."""
    variants = []
    for spec in specs:
        name, sep, flags = spec.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f'error: variant {spec!r} is not NAME=FLAGS (e.g. "camel=--llm-policy {{guide}}")')
        tokens = [token.replace("{guide}", guide) for token in shlex.split(flags)]
        trainer = [tokens.pop(0)] if tokens[:1] and tokens[0] in TRAINERS else []
        tokens = [os.path.abspath(t) if not t.startswith("-") and os.path.exists(t) else t for t in tokens]
        variants.append(Variant(name.strip(), trainer + tokens, trainer_of(trainer)))
    names = [v.name for v in variants]
    reserved = list(CLEANRL_ROW_SCRIPTS)
    if len(set(names)) != len(names) or set(names) & set(reserved):
        raise SystemExit(f"error: variant names must be distinct and not {' or '.join(reserved)}: {names}")
    return variants


def camel_command(args, variant, seed, threads, total_steps):
    trainer, flags = (variant.flags[0], variant.flags[1:]) if variant.flags[:1] and variant.flags[0] in TRAINERS else ("camel_td3.py", variant.flags)
    return [
        sys.executable, str(REPO / trainer),
        "--env-id", args.env_id, "--seed", str(seed), "--total-timesteps", str(total_steps),
        "--learning-starts", str(args.warmup_steps), "--run-name", "benchmark", "--torch-threads", str(threads),
        "--eval-frequency", str(total_steps), "--eval-episodes", "1", "--checkpoint-frequency", "0",
        "--cuda" if args.device == "cuda" else "--no-cuda",
        *flags,
    ]  # fmt: skip


def cleanrl_command(args, python, script, seed, total_steps, device_flags):
    return [
        python, os.path.join(args.cleanrl, "cleanrl", script),
        "--env-id", args.env_id, "--seed", str(seed), "--total-timesteps", str(total_steps),
        "--learning-starts", str(args.warmup_steps), *device_flags,
    ]  # fmt: skip


def pinned(command, cores):
    """The command run under `taskset -c cores` (the CPUs it and its threads may run on); as it is when cores is None."""
    return command if cores is None else ["taskset", "-c", cores, *command]


def child_env(threads, pythonpath=None):
    """The environment of a run: thread counts, no wandb, CleanRL's checkout on PYTHONPATH for its own runs."""
    env = dict(os.environ, WANDB_MODE="disabled", PYTHONUNBUFFERED="1")
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in [pythonpath, os.environ.get("PYTHONPATH")] if p)
    return env


def jax_env(env, device):
    """A JAX run's environment: JAX_PLATFORMS picks its device (the JAX script has no --cuda flag); its threads
    are left to XLA."""
    return dict(env, JAX_PLATFORMS="cuda" if device == "cuda" else "cpu")


def measure_window(run_folder, from_step):
    """Training-phase timing of one run from its TensorBoard events: the span between the first charts/SPS
    event at or after `from_step` and the last one, by the events' own wall times."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    event_files = sorted(glob.glob(os.path.join(run_folder, "**", "events.out.tfevents.*"), recursive=True))
    if not event_files:
        raise ValueError(f"no TensorBoard event file under {run_folder}")
    events = []
    for folder in sorted({os.path.dirname(f) for f in event_files}):
        accumulator = EventAccumulator(folder, size_guidance={"scalars": 0})
        accumulator.Reload()
        if SPS_TAG in accumulator.Tags()["scalars"]:
            events += [(e.step, e.wall_time) for e in accumulator.Scalars(SPS_TAG)]
    events = sorted(e for e in events if e[0] >= from_step)
    if len(events) < 2 or events[-1][1] <= events[0][1]:
        raise ValueError(f"fewer than two {SPS_TAG} events at or after step {from_step} under {run_folder}")
    (first_step, first_time), (last_step, last_time) = events[0], events[-1]
    return Window(first_step, last_step, last_time - first_time)


def run_and_measure(command, env, from_step, keep):
    """Run one training process in a fresh folder and measure its training phase; returns a dict for results.json."""
    folder = tempfile.mkdtemp(prefix="camel-benchmark-")
    start = time.time()
    with open(os.path.join(folder, "log.txt"), "w") as log:
        returncode = subprocess.run(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    record = {"command": shlex.join(command), "process_seconds": round(time.time() - start, 2), "returncode": returncode}
    try:
        if returncode != 0:
            with open(os.path.join(folder, "log.txt")) as log:
                raise ValueError(f"exit code {returncode}: {(log.read().strip().splitlines() or ['no output'])[-1]}")
        window = measure_window(folder, from_step)
        record.update(steps_per_second=window.steps_per_second, **window._asdict())
    except ValueError as e:
        record["error"] = str(e)
    if keep:
        record["folder"] = folder
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return record


def probe_python(python, env, jax=False):
    """Versions seen by an interpreter (ours or a CleanRL venv), and whether it has CUDA; with jax, also the
    versions of JAX, jaxlib, flax and optax, and the backend JAX runs on ('cpu', or 'gpu' with a CUDA jaxlib)."""
    code = (
        "import json, torch, gymnasium, mujoco, numpy; found = {'torch': torch.__version__, "
        "'gymnasium': gymnasium.__version__, 'mujoco': mujoco.__version__, 'numpy': numpy.__version__, "
        "'cuda_available': torch.cuda.is_available(), 'default_threads': torch.get_num_threads(), "
        "'cpu_capability': torch.backends.cpu.get_cpu_capability()}"
    )
    if jax:
        code += (
            "; import jax, jaxlib, flax, optax; found.update(jax=jax.__version__, jaxlib=jaxlib.__version__, "
            "flax=flax.__version__, optax=optax.__version__, jax_backend=jax.default_backend())"
        )
    child = subprocess.run([python, "-c", code + "; print(json.dumps(found))"], env=env, capture_output=True, text=True)
    if child.returncode != 0:
        modules = "torch, gymnasium, mujoco, jax, flax and optax" if jax else "torch, gymnasium and mujoco"
        raise SystemExit(f"error: {python} cannot import {modules}: {child.stderr.strip().splitlines()[-1:]}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def cleanrl_cuda_flags(python, script, env):
    """CleanRL's tyro spells booleans --cuda/--no-cuda (tyro >= 0.5) or --cuda True/False (older)."""
    help_text = subprocess.run([python, script, "--help"], env=env, capture_output=True, text=True).stdout
    if "--no-cuda" in help_text:
        return {"cpu": ["--no-cuda"], "cuda": ["--cuda"]}
    return {"cpu": ["--cuda", "False"], "cuda": ["--cuda", "True"]}


def guide_cost(guide_path, env_id, calls):
    """Microseconds per guide call: the raw `policy(obs)` and the Guide wrapper that training calls, plus the
    bounds computed from its action (mask_bounds), on observations the guide would meet."""
    import gymnasium as gym
    import numpy as np

    from camel_td3 import mask_bounds
    from camel_utils.guide import load_guide, sample_observations
    from camel_td3 import Args as TrainerArgs

    env = gym.make(env_id)
    observations = sample_observations(env, seed=0)
    guide = load_guide(guide_path, observations, int(np.prod(env.action_space.shape)))
    action = guide(observations[0])

    def microseconds_per_call(function, inputs):
        block = 100
        for obs in inputs[:block]:  # warm-up
            function(obs)
        blocks = []
        for b in range(max(calls // block, 1)):
            start = time.perf_counter()
            for i in range(block):
                function(inputs[(b * block + i) % len(inputs)])
            blocks.append((time.perf_counter() - start) / block * 1e6)
        return statistics.median(blocks)

    env.close()
    return {
        "guide": guide_path,
        "calls": calls,
        "raw_policy_us": microseconds_per_call(guide.policy, [obs.copy() for obs in observations])
        if hasattr(guide, "policy")
        else None,
        "safe_policy_us": microseconds_per_call(guide, list(observations)),
        "mask_bounds_us": microseconds_per_call(lambda a: mask_bounds(a, TrainerArgs.mask_width), [action] * len(observations)),
    }


def replay_buffer_memory(env_id, transitions):
    """Bytes of the trainers' ReplayBuffer (camel_td3.py) for `transitions` steps of env_id, from its own layout on
    the 'meta' device (which allocates nothing)."""
    import gymnasium as gym
    import numpy as np
    import torch

    import camel_td3

    env = gym.make(env_id)
    obs_dim, action_dim = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))
    env.close()
    buffer = camel_td3.ReplayBuffer(transitions, obs_dim, action_dim, torch.device("meta"))
    tensors = [t for t in vars(buffer).values() if isinstance(t, torch.Tensor)]
    total = sum(t.numel() * t.element_size() for t in tensors)
    memory = {"env_id": env_id, "obs_dim": obs_dim, "action_dim": action_dim, "transitions": transitions,
              "dtypes": sorted({str(t.dtype).replace("torch.", "") for t in tensors}),
              "bytes": total, "bytes_per_transition": total / transitions}  # fmt: skip
    widths = getattr(buffer, "widths", None)
    if widths:  # the fields of a buffer without the optional guide-action columns
        memory["fields"] = dict(zip(camel_td3.ReplayBatch._fields, widths))
    return memory


# Environment variables that hold the libraries below an instruction set (e.g. all three at AVX2 on an AVX-512 CPU:
# the kernels an AVX2-only CPU such as the AMD EPYC gets): recorded, and named in the table, whenever they are set.
KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")


def machine_info(args):
    info = {"cpu": cpu_model(), "cpu_simd": cpu_simd(), "cpu_kind": cpu_kind(), "cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_average_at_start": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            "kernel_variables": {name: os.environ[name] for name in KERNEL_VARIABLES if name in os.environ}}  # fmt: skip
    git = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True, text=True)
    info["camel_commit"] = git.stdout.strip() or None
    if args.cleanrl:
        git = subprocess.run(["git", "-C", args.cleanrl, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        info["cleanrl_commit"] = git.stdout.strip() or None
    if args.device == "cuda":
        import torch

        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def summarise(runs, reference_variant, cleanrl_rows=None, cleanrl_jax_rows=None):
    """One row per (variant, threads): median and range of steps/s, and ratios at the same thread count (to
    cleanrl_rows[variant], the CleanRL row of the variant's algorithm, 'cleanrl' when not given; to
    cleanrl_jax_rows[variant], CleanRL's JAX row, for the variants that have one; and to reference_variant)."""
    rows = []
    for key in dict.fromkeys((r["variant"], r["threads"]) for r in runs):
        sps = [r["steps_per_second"] for r in runs if (r["variant"], r["threads"]) == key and "steps_per_second" in r]
        errors = [r["error"] for r in runs if (r["variant"], r["threads"]) == key and "error" in r]
        rows.append({"variant": key[0], "threads": key[1], "median": statistics.median(sps) if sps else None,
                     "min": min(sps, default=None), "max": max(sps, default=None), "repeats": len(sps), "errors": errors})  # fmt: skip
    for row in rows:
        cleanrl = (cleanrl_rows or {}).get(row["variant"], "cleanrl")
        cleanrl_jax = (cleanrl_jax_rows or {}).get(row["variant"])
        for column, name in [("vs_cleanrl", cleanrl), ("vs_cleanrl_jax", cleanrl_jax), ("vs_baseline", reference_variant)]:
            other = next((r for r in rows if name and r["variant"] == name and r["threads"] == row["threads"]), None)
            row[column] = row["median"] / other["median"] if row["median"] and other and other["median"] else None
    return rows


def shown(path):
    """A path as the table shows it: relative to the repo when inside it."""
    return os.path.relpath(path, REPO) if os.path.isabs(path) and path.startswith(str(REPO) + os.sep) else path


def markdown(results):
    """The results as the README shows them: the command, the machine, the speed table, the guide's cost
    and the replay buffer's size."""
    s, m, cleanrl, cleanrl_jax = results["settings"], results["machine"], results.get("cleanrl_venv"), results.get("cleanrl_jax_venv")  # fmt: skip

    def number(x, spec=".0f"):
        return "-" if x is None else format(x, spec)

    simd = f" ({' '.join(m['cpu_simd'])})" if m.get("cpu_simd") else ""  # not in results from before the field
    machine = f"{m['cpu']}{simd}, {m['cores']} cores" + (f", {m['gpu']}" if m.get("gpu") else "")
    kernels = f" ({results['ours']['cpu_capability']} kernels)" if results["ours"].get("cpu_capability") else ""  # not in older results
    machine += f"; torch {results['ours']['torch']}{kernels}, gymnasium {results['ours']['gymnasium']}, mujoco {results['ours']['mujoco']}"
    if m.get("kernel_variables"):
        machine += "; kernels held below the CPU's by " + ", ".join(f"{k}={v}" for k, v in m["kernel_variables"].items()) + " in every run"
    if cleanrl:
        machine += (f"; CleanRL {m.get('cleanrl_commit') or 'checkout'} in its venv: torch {cleanrl['torch']},"
                    f" gymnasium {cleanrl['gymnasium']}, mujoco {cleanrl['mujoco']}")  # fmt: skip
    if cleanrl_jax:
        machine += (f"; its JAX TD3 in its own venv: jax {cleanrl_jax['jax']}, jaxlib {cleanrl_jax['jaxlib']} ({cleanrl_jax['jax_backend']}),"
                    f" flax {cleanrl_jax['flax']}, optax {cleanrl_jax['optax']}, torch {cleanrl_jax['torch']},"
                    f" gymnasium {cleanrl_jax['gymnasium']}, mujoco {cleanrl_jax['mujoco']}")  # fmt: skip
    machine += f"; camel {m['camel_commit']}; {m['date']}"
    machine += f"; load average {number(m['load_average_at_start'], '.2f')} at start, {number(m['load_average_at_end'], '.2f')} at end."
    pinned_to = s.get("pin_cores")  # None in results from before --pin-cores
    pinning = f"every run pinned with `taskset -c {pinned_to}`" if pinned_to is not None else "runs not pinned to cores"
    # the JAX column only when CleanRL's JAX TD3 ran; "vs CleanRL" is always to CleanRL's PyTorch script
    jax_ran = CLEANRL_JAX_ROW in results.get("cleanrl_rows", {})
    columns = ["variant", "camel_td3.py flags (or a trainer named first, and its flags)", "threads", "steps/s (median)",
               "min-max", "vs CleanRL"] + ["vs CleanRL JAX"] * jax_ran + ["vs baseline"]  # fmt: skip
    lines = [
        f"## Training speed: {s['env_id']}, {s['device']}", "", f"`{results['command']}`", "", machine, "",
        f"Each run: {s['warmup_steps']} warm-up steps (random actions), {s['settle_steps']} settling steps, then "
        f"{s['train_steps']} measured training steps; steps/s from the runs' own TensorBoard wall times; "
        f"median and range of {s['repeats']} repeats; {pinning}.",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]  # fmt: skip
    flags = {v["name"]: v["flags"] for v in results["variants"]}
    for row in results["summary"]:
        if row["variant"] not in flags:
            command = f"(CleanRL's {results['cleanrl_rows'][row['variant']]})"
        else:
            command = " ".join(map(shown, flags[row["variant"]])) or "(none)"
        failed = f" ({len(row['errors'])} failed: {row['errors'][0]})" if row["errors"] else ""
        cells = [row["variant"], command, row["threads"] or "default", number(row["median"]) + failed,
                 f"{number(row['min'])}-{number(row['max'])}", number(row["vs_cleanrl"], ".2f")]  # fmt: skip
        cells += [number(row.get("vs_cleanrl_jax"), ".2f")] * jax_ran + [number(row["vs_baseline"], ".2f")]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    if jax_ran:
        cores = f"those of `taskset -c {pinned_to}`" if pinned_to is not None else f"all {m['cores']} cores"
        lines += ["", f"{CLEANRL_JAX_ROW}: JAX has no thread setting; XLA runs its own CPU thread pool, sized by the cores "
                  f"the process may run on (here {cores}). The threads column (OMP_NUM_THREADS) reaches only the script's "
                  "torch part (its replay buffer). 'vs CleanRL' divides by CleanRL's PyTorch TD3, 'vs CleanRL JAX' by its JAX TD3."]  # fmt: skip
    if results.get("cleanrl_jax_skipped"):
        lines += ["", f"{CLEANRL_JAX_ROW} not run: {results['cleanrl_jax_skipped']}."]

    if results.get("guide"):
        g = results["guide"]
        share_of = f"; share of one training step of '{g['share_of']}' at its median steps/s" if g.get("share_of") else ""
        lines += ["", f"Guide cost ({shown(g['guide'])}, median over {g['calls']} calls{share_of}, for a step that calls the guide):", "",
                  "| call | us per call | share of a training step |", "|---|---|---|"]  # fmt: skip
        for label, key in [("policy(obs), raw", "raw_policy"), ("Guide(obs), as training calls it", "safe_policy"),
                           ("mask_bounds(action, w)", "mask_bounds")]:  # fmt: skip
            share = g.get(f"{key}_share")
            lines.append(f"| {label} | {number(g[f'{key}_us'], '.1f')} | {'-' if share is None else f'{share:.2%}'} |")

    if results.get("memory"):
        mem = results["memory"]
        layout = ", ".join(f"{k} {v}" for k, v in mem.get("fields", {}).items())
        lines += ["", f"Replay buffer of a {mem['transitions']:,}-step {mem['env_id']} run ({'/'.join(mem['dtypes'])}"
                  f"{': ' + layout if layout else ''}): {mem['bytes']:,} bytes ({mem['bytes'] / 2**20:.0f} MiB), "
                  f"{mem['bytes_per_transition']:.0f} bytes per transition."]  # fmt: skip
    return "\n".join(lines) + "\n"


def find_cleanrl_jax(args, ours):
    """The Python of CleanRL's JAX venv and what it has, or why its row is skipped: (python, versions, None) or
    (None, None, reason). A missing default venv skips the row (main refuses a --cleanrl-jax-python that is not there)."""
    script = os.path.join(args.cleanrl, "cleanrl", CLEANRL_JAX_SCRIPT)
    python = args.cleanrl_jax_python or str(DEFAULT_CLEANRL_JAX_PYTHON)
    if not os.path.isfile(script):
        reason = f"no cleanrl/{CLEANRL_JAX_SCRIPT} in {args.cleanrl}"
    elif not os.path.exists(python):  # the default's (main stopped at a --cleanrl-jax-python that is not there)
        reason = f"no JAX venv at {python}; make one with: bash benchmarks/setup_cleanrl.sh --jax {args.cleanrl}"
    else:
        versions = probe_python(python, child_env(0, args.cleanrl), jax=True)
        if versions["torch"] != ours["torch"]:
            print(f"warning: CleanRL's JAX venv has torch {versions['torch']}, ours {ours['torch']}", file=sys.stderr)
        if args.device != "cuda" or versions["jax_backend"] == "gpu":
            return python, versions, None
        reason = f"--device cuda, but JAX in {python} runs on {versions['jax_backend']} (a CPU-only jaxlib)"
    print(f"skipping {CLEANRL_JAX_ROW} (CleanRL's JAX TD3): {reason}", file=sys.stderr)
    return None, None, reason


def main(args):
    # phase 1: check the inputs before spending minutes on runs
    if args.train_steps <= 0 or args.warmup_steps < 0 or args.settle_steps < 0 or args.repeats <= 0:
        raise SystemExit("error: --train-steps and --repeats must be positive, --warmup-steps and --settle-steps not negative")
    if args.train_steps < 200:
        raise SystemExit("error: --train-steps must be at least 200: steps/s is read from events logged every 100 steps")
    guide = os.path.abspath(args.guide_policy)
    variants = parse_variants(args.variants + args.variant, guide)
    uses_guide = any(guide in v.flags for v in variants)
    if (uses_guide or args.guide_calls) and not os.path.isfile(guide):
        raise SystemExit(f"error: guide {args.guide_policy} not found; give one with --guide-policy PATH")
    jax_python = args.cleanrl_jax_python
    if args.cleanrl and args.cleanrl_jax and jax_python and not os.path.exists(jax_python):  # a mistake, not a skip
        raise SystemExit(f"error: --cleanrl-jax-python {jax_python} not found; make that venv with: bash benchmarks/setup_cleanrl.sh "
                         f"--jax {os.path.abspath(args.cleanrl)} {os.path.dirname(os.path.dirname(jax_python))}")  # fmt: skip
    ours = probe_python(sys.executable, child_env(0))
    if args.device == "cuda" and not ours["cuda_available"]:
        raise SystemExit("error: --device cuda, but this venv's torch has no CUDA device; run with --device cpu")
    if args.pin_cores is not None:
        if not shutil.which("taskset"):
            raise SystemExit("error: --pin-cores needs taskset (util-linux), which is not on PATH")
        check = subprocess.run(["taskset", "-c", args.pin_cores, "true"], capture_output=True, text=True)
        if check.returncode != 0:
            raise SystemExit(f"error: --pin-cores {args.pin_cores}: {check.stderr.strip()}")
    cleanrl_python = cleanrl_venv = cuda_flags = cleanrl_jax_python = cleanrl_jax_venv = cleanrl_jax_skipped = None
    if args.cleanrl:
        args.cleanrl = os.path.abspath(args.cleanrl)
        script = os.path.join(args.cleanrl, "cleanrl", "td3_continuous_action.py")
        if not os.path.isfile(script):
            raise SystemExit(f"error: --cleanrl {args.cleanrl}: no cleanrl/td3_continuous_action.py there")
        cleanrl_python = args.cleanrl_python or str(DEFAULT_CLEANRL_PYTHON)
        if not os.path.exists(cleanrl_python):
            raise SystemExit(
                f"error: no CleanRL venv at {cleanrl_python}; make one with: bash benchmarks/setup_cleanrl.sh {args.cleanrl}"
            )
        cleanrl_venv = probe_python(cleanrl_python, child_env(0, args.cleanrl))
        if args.device == "cuda" and not cleanrl_venv["cuda_available"]:
            raise SystemExit(f"error: --device cuda, but the torch in {cleanrl_python} has no CUDA device")
        if cleanrl_venv["torch"] != ours["torch"]:
            print(f"warning: CleanRL's venv has torch {cleanrl_venv['torch']}, ours {ours['torch']}", file=sys.stderr)
        cuda_flags = cleanrl_cuda_flags(cleanrl_python, script, child_env(0, args.cleanrl))
        if args.cleanrl_jax and any(v.trainer in ("camel_td3.py", "camel_plus_td3.py") for v in variants):
            cleanrl_jax_python, cleanrl_jax_venv, cleanrl_jax_skipped = find_cleanrl_jax(args, ours)
        added = set()
        for trainer in dict.fromkeys(v.trainer for v in variants):  # CleanRL's script for each algorithm measured, once
            row, name = CLEANRL_SCRIPTS[trainer]
            if row in added:  # camel_td3.py and camel_plus_td3.py share CleanRL's TD3
                continue
            if not os.path.isfile(os.path.join(args.cleanrl, "cleanrl", name)):
                raise SystemExit(f"error: --cleanrl {args.cleanrl}: no cleanrl/{name} there (for the {trainer} variants)")
            variants.append(Variant(row, None, trainer))
            added.add(row)
            if row == "cleanrl" and cleanrl_jax_python:
                variants.append(Variant(CLEANRL_JAX_ROW, None, trainer))

    # phase 2: the runs, round-robin over repeats, thread counts and variants
    from_step = args.warmup_steps + args.settle_steps
    total_steps = from_step + args.train_steps + 1  # the last step, from_step + train_steps, is logged
    runs = []
    count = args.repeats * len(args.torch_threads) * len(variants)
    for repeat in range(args.repeats):
        seed = args.seed + repeat
        for threads in args.torch_threads:
            for variant in variants:
                if variant.name == CLEANRL_JAX_ROW:
                    command = cleanrl_command(args, cleanrl_jax_python, CLEANRL_JAX_SCRIPT, seed, total_steps, [])
                    env = jax_env(child_env(threads, args.cleanrl), args.device)
                elif variant.flags is None:
                    command = cleanrl_command(args, cleanrl_python, CLEANRL_ROW_SCRIPTS[variant.name], seed, total_steps,
                                              cuda_flags[args.device])  # fmt: skip
                    env = child_env(threads, args.cleanrl)
                else:
                    command = camel_command(args, variant, seed, threads, total_steps)
                    env = child_env(threads)
                record = run_and_measure(pinned(command, args.pin_cores), env, from_step, args.keep_runs)
                runs.append({"variant": variant.name, "threads": threads, "repeat": repeat, "seed": seed, **record})
                outcome = (
                    f"{record['steps_per_second']:.1f} steps/s" if "error" not in record else f"FAILED: {record['error']}"
                )
                print(f"[{len(runs)}/{count}] {variant.name}, {threads or 'default'} thread(s), seed {seed}: {outcome}"
                      f" ({record['process_seconds']:.0f} s){' in ' + record['folder'] if args.keep_runs else ''}", flush=True)  # fmt: skip

    # phase 3: the guide's cost and the replay buffer's size
    cleanrl_rows = {v.name: CLEANRL_SCRIPTS[v.trainer][0] for v in variants}
    jax_ran = any(v.name == CLEANRL_JAX_ROW for v in variants)
    cleanrl_jax_rows = {v.name: CLEANRL_JAX_ROW for v in variants if v.trainer in ("camel_td3.py", "camel_plus_td3.py") and jax_ran}
    summary = summarise(runs, args.reference_variant, cleanrl_rows, cleanrl_jax_rows)
    guide_row = guide_cost(guide, args.env_id, args.guide_calls) if args.guide_calls else None
    if guide_row:
        guided = [v.name for v in variants if v.flags is not None and guide in v.flags]
        masked = next((r for r in summary if r["variant"] in guided and r["median"]), None)
        if masked:
            guide_row["share_of"] = masked["variant"]
            for key in ["raw_policy", "safe_policy", "mask_bounds"]:
                if guide_row[f"{key}_us"] is not None:
                    guide_row[f"{key}_share"] = guide_row[f"{key}_us"] * 1e-6 * masked["median"]
    memory = replay_buffer_memory(args.memory_env_id, args.memory_transitions)

    # phase 4: the table, as Markdown and JSON
    machine = machine_info(args)
    machine["load_average_at_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    results = {
        "command": shlex.join(["python", os.path.relpath(os.path.abspath(sys.argv[0]), os.getcwd()), *sys.argv[1:]]),
        "settings": asdict(args), "machine": machine, "ours": ours, "cleanrl_venv": cleanrl_venv,
        "cleanrl_jax_venv": cleanrl_jax_venv, "cleanrl_jax_skipped": cleanrl_jax_skipped,
        "variants": [{"name": v.name, "flags": v.flags} for v in variants if v.flags is not None],
        "cleanrl_rows": {v.name: CLEANRL_ROW_SCRIPTS[v.name] for v in variants if v.flags is None},
        "summary": summary, "guide": guide_row, "memory": memory, "runs": runs,
    }  # fmt: skip
    os.makedirs(args.output_dir, exist_ok=True)
    with open(os.path.join(args.output_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    table = markdown(results)
    with open(os.path.join(args.output_dir, "results.md"), "w") as f:
        f.write(table)
    print("\n" + table + f"\nwritten to {os.path.join(args.output_dir, 'results.md')} and results.json")
    if any("error" in r for r in runs):
        sys.exit(1)


if __name__ == "__main__":
    main(tyro.cli(Args))
