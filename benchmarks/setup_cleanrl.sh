#!/usr/bin/env bash
# Create the virtual environment in which benchmarks/benchmark.py runs CleanRL's TD3 for the side-by-side.
#
#   usage: benchmarks/setup_cleanrl.sh CLEANRL_PATH [VENV_PATH]
#
#   CLEANRL_PATH  a checkout of github.com/vwxyzjn/cleanrl, kept outside this repo (never copy it in):
#                 git clone https://github.com/vwxyzjn/cleanrl /tmp/cleanrl
#   VENV_PATH     where to create the venv (default: ~/.cache/camel/cleanrl-venv)
#
# The venv gets CleanRL's own pins, read from the checkout's requirements/requirements-mujoco.txt
# (gymnasium 0.29.1, mujoco 2.3.3, imageio 2.28.1, numpy 1.24.4, tyro 0.5.10, tensorboard 2.11.2 at the time of writing;
# under gymnasium 1.x its TD3 breaks), and the SAME torch as this project's .venv, so that the benchmark
# compares the two training scripts and not two torch builds. CleanRL itself is not installed: the
# benchmark runs cleanrl/td3_continuous_action.py with the checkout on PYTHONPATH (for cleanrl_utils).
# Older checkouts import stable-baselines3's ReplayBuffer; then SB3 is installed at CleanRL's pin too.
#
# Environment variables:
#   PYTHON  the interpreter the venv is made from (default: python3). CleanRL asks for Python < 3.11 but its
#           pinned wheels install and run on 3.11, the Python this project uses.
#   TORCH   the torch requirement (default: the version in this project's .venv, e.g. torch==2.13.0+cpu).
#           A local build such as +cpu comes from the PyTorch index on a machine that does not have the
#           wheel on disk: PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 || $1 == -h || $1 == --help ]]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
cleanrl=$(cd "$1" && pwd)
venv=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/camel/cleanrl-venv}
repo=$(cd "$(dirname "$0")/.." && pwd)
script="$cleanrl/cleanrl/td3_continuous_action.py"
pins="$cleanrl/requirements/requirements-mujoco.txt"
[[ -f $script ]] || { echo "error: $script not found; is $cleanrl a CleanRL checkout?" >&2; exit 1; }
[[ -f $pins ]] || { echo "error: $pins not found; this script reads CleanRL's pins from it" >&2; exit 1; }

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
grep -E '^[A-Za-z0-9_.-]+==' "$pins" | grep -viE "^($torch_and_its_requirements)==" >"$constraints"
pin() { grep -iE "^$1==" "$constraints" | head -1 | cut -d' ' -f1; }
packages=("$TORCH" "$(pin gymnasium)" "$(pin mujoco)" "$(pin imageio)" "$(pin numpy)" "$(pin tyro)" "$(pin tensorboard)")
if grep -q '^from stable_baselines3' "$script"; then
    packages+=("$(grep -iE '^stable-baselines3==' "$cleanrl/requirements/requirements.txt" | cut -d' ' -f1 || echo 'stable-baselines3==2.0.0')")
fi
echo "packages:         ${packages[*]}"

# phase 3: the venv
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -c "$constraints" "${packages[@]}"

# phase 4: check that it is the environment we meant: same torch, CleanRL's gymnasium, Hopper-v4 builds
PYTHONPATH="$cleanrl" "$venv/bin/python" - "$TORCH" <<'PY'
import sys

import gymnasium as gym
import mujoco
import numpy
import torch
from cleanrl_utils.buffers import ReplayBuffer  # noqa: F401  (what td3_continuous_action.py imports)

wanted = sys.argv[1].split("==")[1]
assert torch.__version__ == wanted, f"torch {torch.__version__} installed, {wanted} wanted"
gym.make("Hopper-v4").reset(seed=0)
print(f"ok: torch {torch.__version__} (CUDA {torch.version.cuda}), gymnasium {gym.__version__}, "
      f"mujoco {mujoco.__version__}, numpy {numpy.__version__}")
PY
echo "run the side-by-side with: python benchmarks/benchmark.py --cleanrl $cleanrl --cleanrl-python $venv/bin/python"
