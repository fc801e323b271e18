#!/usr/bin/env bash
# Seed sweep: every method x guide x seed of one environment, WORKERS runs at a time, each on its own core.
#   ENV_ID=Hopper-v4 METHODS="td3 camel_td3 camel_plus_td3" SEEDS="1 2 3" TOTAL_TIMESTEPS=100000 WORKERS=2 scripts/sweep.sh
#   scripts/sweep.sh --help             # every setting, mode and rule
# The scheduler is scripts/sweep.py (standard library only); this wrapper picks its interpreter: the repo's
# .venv if there is one, else python3. exec keeps the process id, so Ctrl-C and SIGTERM reach the scheduler.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="$here/../.venv/bin/python"
[[ -x "$python" ]] || python=python3
exec "$python" "$here/sweep.py" "$@"
