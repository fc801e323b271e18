#!/usr/bin/env bash
# Seed sweep for CAMEL: every condition x every seed of one environment, WORKERS runs at a time.
#   ENV_ID=Hopper-v4 LLM_POLICY=policies/hopper.py SEEDS="1 2 3" WORKERS=2 scripts/sweep.sh
#   scripts/sweep.sh --help             # every setting, mode and rule
# The scheduler is scripts/sweep.py (standard library only); this wrapper picks its interpreter: the repo's
# .venv if there is one, else python3. exec keeps the process id, so Ctrl-C and SIGTERM reach the scheduler.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="$here/../.venv/bin/python"
[[ -x "$python" ]] || python=python3
exec "$python" "$here/sweep.py" "$@"
