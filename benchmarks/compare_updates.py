"""How fast camel_td3.py's TD3 update runs when computed in different ways, side by side in one process on one thread:
the written-out fast update (camel_td3_fast.py, the default), the plain update (autograd, --no-fast-update), and each
of them compiled with torch.compile (Inductor's CPU backend: C++ for the element-wise work, library calls for the
matrix products), with Inductor's options named in VARIANTS. Every variant gets its own networks (torch seed 1) and
samples the same replay buffer of real env transitions; each is warmed up (compiled, and Adam's moments decayed as in
training), then all are timed round-robin, so a change in the machine's speed touches them alike. Prints the median
milliseconds per update, the range over the repeats and the ratio to the fast update.

With --stages it then times the fast update stage by stage (time.perf_counter around each: the target actor, the
target critics, the critics' forward and backward, each Adam step, ...), on its own copy: where an update's time goes
in the middle of training, caches as they are then, which a profiler or a product timed alone does not show. With
--layouts, the batched product of the twin critics with its operands stored as is or transposed.

    taskset -c 0 python benchmarks/compare_updates.py                 # every variant, about 4 minutes
    taskset -c 0 python benchmarks/compare_updates.py --variants fast plain --stages --layouts
"""

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import tyro

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark import cpu_model, cpu_simd  # noqa: E402
from camel_common import make_env  # noqa: E402
from profile_update import filled_buffer, seconds_per_update, td3_update  # noqa: E402

# name -> (fast update, torch.compile's keyword arguments or None for eager, fused Adam); compiled updates use
# torch.optim.Adam unfused, which Inductor compiles into the update, as camel_td3.py's --compile does
VARIANTS = {
    "fast": (True, None, True),
    "plain": (False, None, True),
    "fast-compiled": (True, {}, False),
    "fast-compiled-max-autotune": (True, {"mode": "max-autotune-no-cudagraphs"}, False),
    "plain-compiled": (False, {}, False),
}


@dataclass
class Args:
    env_id: str = "Hopper-v4"
    """env whose observations and actions fill the replay buffer"""
    variants: list[str] = field(default_factory=lambda: list(VARIANTS))
    """which ways of computing the update to time (fast is always among them: the ratios divide by it)"""
    buffer_steps: int = 20000
    """env steps of random actions in the replay buffer"""
    warmup_updates: int = 3000
    """updates each variant runs before timing (compiling happens in the first ones)"""
    updates: int = 300
    """updates per timed repeat"""
    repeats: int = 7
    """timed repeats of each variant (round-robin; their median is printed)"""
    stages: bool = False
    """then time the fast update stage by stage"""
    layouts: bool = False
    """then time the twin critics' 2x256x256x256 batched product with each operand stored as is or transposed (the
    update's products use three of the four)"""


def main(args):
    unknown = [name for name in args.variants if name not in VARIANTS]
    if unknown:
        sys.exit(f"compare_updates.py: unknown variant {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    names = ["fast"] + [name for name in dict.fromkeys(args.variants) if name != "fast"]
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)  # as camel_td3.py does by default
    env = make_env(args.env_id, 1, 0, False, "compare")()
    rb = filled_buffer(env, args.buffer_steps)
    updates = {}
    for name in names:
        fast_update, compile_options, fused_adam = VARIANTS[name]
        update = td3_update(env, rb, fast_update, compile_options=compile_options, fused_adam=fused_adam)
        warmup_seconds = seconds_per_update(update, args.warmup_updates) * args.warmup_updates
        print(f"{name}: {args.warmup_updates} warm-up updates in {warmup_seconds:.0f} s", flush=True)
        updates[name] = update
    timings = {name: [] for name in names}
    for _ in range(args.repeats):
        for name, update in updates.items():
            timings[name].append(seconds_per_update(update, args.updates) * 1e3)
    fast = float(np.median(timings["fast"]))
    print(f"\nCPU: {cpu_model()} ({' '.join(cpu_simd())}; torch kernels: {torch.backends.cpu.get_cpu_capability()}), one thread; "
          f"torch {torch.__version__}; {args.env_id}, median of {args.repeats} x {args.updates} updates after {args.warmup_updates}")
    print("| update | ms per update (median) | min-max | speed vs fast |\n|---|---|---|---|")
    for name, ms in timings.items():
        print(f"| {name} | {np.median(ms):.2f} | {min(ms):.2f}-{max(ms):.2f} | {fast / np.median(ms):.2f} |")
    if args.stages:
        stages = {}
        update = td3_update(env, rb, stages=stages)
        seconds_per_update(update, args.warmup_updates)
        stages.clear()
        count = args.updates * args.repeats
        total = seconds_per_update(update, count) * 1e6
        print(f"\nThe fast update stage by stage ({count} updates): {total:.0f} us per update, "
              f"{sum(stages.values()) / count * 1e6:.0f} of them inside the stages")
        print("| stage | us per update | share |\n|---|---|---|")
        for name, seconds in stages.items():
            print(f"| {name} | {seconds / count * 1e6:.0f} | {seconds / count * 1e6 / total:.0%} |")
    if args.layouts:
        print("\nThe batched product (2, 256, 256) @ (2, 256, 256), operands stored as is (N) or transposed (T), "
              f"median of {args.repeats} x 300 calls\n| layout | us per product | GFLOP/s |\n|---|---|---|")
        for layout, microseconds in product_layouts(args.repeats).items():
            print(f"| {layout} | {microseconds:.0f} | {2 * 2 * 256**3 / microseconds / 1e3:.0f} |")


def product_layouts(repeats, calls=300):
    """Microseconds per torch.bmm of two (2, 256, 256) operands, each given as is or as a transposed view (NN, NT, TN,
    TT): the forward pass multiplies by a transposed weight (NT), the backward by the weight (NN) and by a transposed
    activation (TN)."""
    a, b = torch.randn(2, 256, 256), torch.randn(2, 256, 256)
    operands = {"NN": (a, b), "NT": (a, b.transpose(1, 2)), "TN": (a.transpose(1, 2), b), "TT": (a.transpose(1, 2), b.transpose(1, 2))}
    timings = {layout: [] for layout in operands}
    for _ in range(repeats + 1):  # the first round warms up, untimed
        for layout, (x, y) in operands.items():
            start = time.perf_counter()
            for _ in range(calls):
                torch.bmm(x, y)
            timings[layout].append((time.perf_counter() - start) / calls * 1e6)
    return {layout: float(np.median(times[1:])) for layout, times in timings.items()}


if __name__ == "__main__":
    main(tyro.cli(Args))
