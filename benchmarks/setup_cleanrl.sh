#!/usr/bin/env bash
# Create the virtual environment in which benchmarks/benchmark.py runs CleanRL's TD3 for the side-by-side.
#
#   usage: benchmarks/setup_cleanrl.sh [--jax] CLEANRL_PATH [VENV_PATH]
#
#   --jax         make the venv of CleanRL's JAX TD3 instead (cleanrl/td3_continuous_action_jax.py, the benchmark's
#                 row cleanrl-jax-td3): CleanRL's mujoco pins plus its JAX pins
#   CLEANRL_PATH  a checkout of github.com/vwxyzjn/cleanrl, kept outside this repo (never copy it in):
#                 git clone https://github.com/vwxyzjn/cleanrl /tmp/cleanrl
#   VENV_PATH     where to create the venv (default: ~/.cache/camel/cleanrl-venv; with --jax ~/.cache/camel/cleanrl-jax-venv)
#
# The venv gets CleanRL's own pins, read from the checkout's requirements/requirements-mujoco.txt
# (gymnasium 0.29.1, mujoco 2.3.3, imageio 2.28.1, numpy 1.24.4, tyro 0.5.10, tensorboard 2.11.2 at the time of writing;
# under gymnasium 1.x its TD3 breaks), and the SAME torch as this project's .venv, so that the benchmark
# compares the two training scripts and not two torch builds. CleanRL itself is not installed: the
# benchmark runs cleanrl/td3_continuous_action.py with the checkout on PYTHONPATH (for cleanrl_utils).
# Older checkouts import stable-baselines3's ReplayBuffer; then SB3 is installed at CleanRL's pin too.
#
# With --jax the venv gets, beside those, the pins of requirements/requirements-jax.txt (jax 0.4.8, jaxlib 0.4.7,
# flax 0.6.8, optax 0.1.4, chex 0.1.5 and what they need at CleanRL's pins: scipy 1.10.1, orbax 0.1.0,
# ml-dtypes 0.5.1, ...), and torch too (the JAX script logs through torch's SummaryWriter and samples
# cleanrl_utils' ReplayBuffer, a torch one). Four pins do not install or import on Python 3.11 and are moved to
# the nearest version that does:
#   jaxlib 0.4.7 -> 0.4.13       PyPI has no jaxlib older than 0.4.13 for Python 3.11
#   jax 0.4.8 -> 0.4.13          jax refuses a jaxlib newer than itself ("jaxlib version 0.4.13 is newer than
#                                and incompatible with jax version 0.4.8"), so it moves with jaxlib
#   chex 0.1.5 -> 0.1.6          (optax's) 0.1.5 fails on import under jax 0.4.13 (it reads
#                                jax.interpreters.xla.DeviceArray, gone from jax); 0.1.6 is the next release
#   tensorstore 0.1.28 -> 0.1.30 (flax's and orbax's) 0.1.28 has no Python 3.11 wheel and its source does not
#                                build; 0.1.30 is the next release
# flax 0.6.8 and optax 0.1.4 stay at CleanRL's pins.
# Its jaxlib is PyPI's CPU build: the JAX row runs on the CPU.
#
# Environment variables:
#   PYTHON  the interpreter the venv is made from (default: python3). CleanRL asks for Python < 3.11 but its
#           pinned wheels install and run on 3.11, the Python this project uses.
#   TORCH   the torch requirement (default: the version in this project's .venv, e.g. torch==2.13.0+cpu).
#           A local build such as +cpu comes from the PyTorch index on a machine that does not have the
#           wheel on disk: PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
set -euo pipefail

jax=0
if [[ ${1:-} == --jax ]]; then
    jax=1
    shift
fi
if [[ $# -lt 1 || $# -gt 2 || $1 == -h || $1 == --help ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
cleanrl=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
pin_files=("$cleanrl/requirements/requirements-mujoco.txt")
if [[ $jax == 1 ]]; then
    venv=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/camel/cleanrl-jax-venv}
    python_flag=--cleanrl-jax-python  # benchmark.py's flag for this venv
    script="$cleanrl/cleanrl/td3_continuous_action_jax.py"
    pin_files+=("$cleanrl/requirements/requirements-jax.txt")
else
    venv=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/camel/cleanrl-venv}
    python_flag=--cleanrl-python
    script="$cleanrl/cleanrl/td3_continuous_action.py"
fi
[[ -f $script ]] || { echo "error: $script not found; is $cleanrl a CleanRL checkout?" >&2; exit 1; }
for pins in "${pin_files[@]}"; do
    [[ -f $pins ]] || { echo "error: $pins not found; this script reads CleanRL's pins from it" >&2; exit 1; }
done

# phase 1: the torch to match
if [[ -z ${TORCH:-} ]]; then
    if [[ -x $repo/.venv/bin/python ]]; then
        TORCH="torch==$("$repo/.venv/bin/python" -c 'import torch; print(torch.__version__)')"
    else
        TORCH="torch==$(grep -E '^torch==' "$repo/requirements.txt" | cut -d= -f3)"
    fi
fi
echo "CleanRL checkout: $cleanrl ($(git -C "$cleanrl" rev-parse --short HEAD 2>/dev/null || echo 'not a git work tree'))"
echo "venv:             $venv"
echo "torch:            $TORCH"

# phase 2: CleanRL's pins as a constraints file, less its torch, the CUDA packages that its torch pulls in,
# and the pins of torch's own requirements (the newer torch needs e.g. setuptools>=77 and sympy>=1.13.3)
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
torch_and_its_requirements='torch|triton|nvidia-[a-z0-9-]+|filelock|fsspec|jinja2|markupsafe|mpmath|networkx|setuptools|sympy|typing-extensions'
cat "${pin_files[@]}" | grep -E '^[A-Za-z0-9_.-]+==' | grep -viE "^($torch_and_its_requirements)==" | sort -u >"$constraints"
if [[ $jax == 1 ]]; then  # the pins that do not install on Python 3.11, to the nearest that do (see above)
    sed -i -E -e 's/^jaxlib==0\.4\.7( |$)/jaxlib==0.4.13\1/' -e 's/^jax==0\.4\.8( |$)/jax==0.4.13\1/' \
        -e 's/^chex==0\.1\.5( |$)/chex==0.1.6\1/' -e 's/^tensorstore==0\.1\.28( |$)/tensorstore==0.1.30\1/' "$constraints"
fi
pin() { grep -iE "^$1==" "$constraints" | head -1 | cut -d' ' -f1; }
packages=("$TORCH" "$(pin gymnasium)" "$(pin mujoco)" "$(pin imageio)" "$(pin numpy)" "$(pin tyro)" "$(pin tensorboard)")
if [[ $jax == 1 ]]; then
    packages+=("$(pin jax)" "$(pin jaxlib)" "$(pin flax)" "$(pin optax)" "$(pin chex)")
fi
if grep -q '^from stable_baselines3' "$script"; then
    packages+=("$(grep -iE '^stable-baselines3==' "$cleanrl/requirements/requirements.txt" | cut -d' ' -f1 || echo 'stable-baselines3==2.0.0')")
fi
echo "packages:         ${packages[*]}"

# phase 3: the venv
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -c "$constraints" "${packages[@]}"

# phase 4: check that it is the environment we meant: same torch, CleanRL's gymnasium, Hopper-v4 builds
# (and with --jax: JAX compiles and runs a function on the CPU)
PYTHONPATH="$cleanrl" "$venv/bin/python" - "$TORCH" "$jax" <<'PY'
import sys

import gymnasium as gym
import mujoco
import numpy
import torch
from cleanrl_utils.buffers import ReplayBuffer  # noqa: F401  (what td3_continuous_action.py imports)

wanted = sys.argv[1].split("==")[1]
assert torch.__version__ == wanted, f"torch {torch.__version__} installed, {wanted} wanted"
gym.make("Hopper-v4").reset(seed=0)
versions = f"torch {torch.__version__} (CUDA {torch.version.cuda}), gymnasium {gym.__version__}, mujoco {mujoco.__version__}, numpy {numpy.__version__}"
if sys.argv[2] == "1":
    import chex, flax, jax, jaxlib, optax  # noqa: E401  (what td3_continuous_action_jax.py imports, and optax's chex)
    from flax.training.train_state import TrainState  # noqa: F401

    assert float(jax.jit(lambda x: (x * x).sum())(jax.numpy.arange(3.0))) == 5.0
    versions += (f", jax {jax.__version__}, jaxlib {jaxlib.__version__} ({jax.default_backend()}), flax {flax.__version__},"
                 f" optax {optax.__version__}, chex {chex.__version__}")
print(f"ok: {versions}")
PY
echo "run the side-by-side with: python benchmarks/benchmark.py --cleanrl $cleanrl $python_flag $venv/bin/python"
