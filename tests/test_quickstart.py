"""scripts/quickstart.sh, the README's first command: TD3, the paper's CAMEL and CAMEL+, two at a time, with their
progress and the paths of their logs as seen from the user's folder, then their figures and tables."""

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
METHODS = {"td3": ("camel_td3.py", None), "camel_td3": ("camel_td3.py", "policies/hopper.py"),
           "camel_plus_td3": ("camel_plus_td3.py", "policies/hopper.py")}  # method: (trainer, guide file)  # fmt: skip


def quickstart(tmp_path, **settings):
    """The quickstart, started from tmp_path (the user's folder: not the repository)."""
    env = {**os.environ, "OUT": str(tmp_path / "qs"), **settings}
    return subprocess.run(["bash", str(REPO / "scripts" / "quickstart.sh")], capture_output=True, text=True, env=env, timeout=300,
                          cwd=tmp_path)  # fmt: skip


def test_quickstart_trains_td3_the_papers_camel_and_camel_plus_and_draws_them(tmp_path):
    result = quickstart(tmp_path, STEPS="400", EVAL_FREQUENCY="200")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    out = tmp_path / "qs"
    for method, (script, guide) in METHODS.items():
        finished = json.loads((out / "runs" / f"Hopper-v4__{method}__1" / "finished.json").read_text())
        assert (finished["script"], finished["exp_name"], finished["total_timesteps"]) == (script, method, 400)
        assert (finished["guide_file"] or {}).get("path") == guide

    # two at a time, CAMEL+ (the slowest) first: the third starts only when one of the first two has finished
    events = [line.split()[1:3] for line in result.stdout.splitlines() if re.match(r"\[sweep\] (start|finished) ", line)]
    assert events[:2] == [["start", "Hopper-v4__camel_plus_td3__1"], ["start", "Hopper-v4__td3__1"]] and events[2][0] == "finished"
    # each run's log is where the quickstart says, from the folder it was started in
    logs = re.findall(r"^\[sweep\] start \S+(?: on core \d+)? -> (.+)$", result.stdout, re.M)
    assert len(logs) == 3 and all((tmp_path / log).is_file() and log.startswith("qs/runs/") for log in logs)

    for name in ("eval", "train"):
        assert (out / f"{name}.png").stat().st_size > 0
        lines = (out / f"{name}.md").read_text().splitlines()  # consecutive | lines make one table
        sizes = [len(list(group)) for is_table, group in itertools.groupby(lines, lambda line: line.startswith("|")) if is_table]
        assert sizes == [2 + 3, 2 + 3]  # the interval estimates, then the env's table: header, rule, a row per method
    assert (out / "eval.md").read_text() in result.stdout and f"figures: {out}/eval.png" in result.stdout

    # the commands a run prints work as printed, pasted where the user started the quickstart
    log = (out / "runs" / "Hopper-v4__camel_plus_td3__1" / "log.txt").read_text()
    (evaluate,) = re.findall(r"evaluate it: +(python .+)", log)
    assert "qs/runs/Hopper-v4__camel_plus_td3__1/camel_plus_td3.cleanrl_model" in evaluate
    pasted = subprocess.run(["bash", "-c", evaluate.replace("python ", f"{sys.executable} ", 1)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert pasted.returncode == 0, pasted.stderr


def test_quickstart_refuses_an_env_without_a_shipped_guide_and_arguments(tmp_path):
    result = quickstart(tmp_path, ENV_ID="Humanoid-v4")
    assert result.returncode == 2 and result.stderr.startswith("error: ENV_ID must be") and not (tmp_path / "qs").exists()
    result = subprocess.run(["bash", str(REPO / "scripts" / "quickstart.sh"), "--steps", "5"], capture_output=True, text=True)
    assert result.returncode == 2 and "takes no arguments" in result.stderr
