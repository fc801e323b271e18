"""scripts/quickstart.sh, the README's first command: CAMEL (camel_td3.py's default, CAMEL+) and TD3 side by side, then
their figures and tables."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def quickstart(tmp_path, **settings):
    """The quickstart, started from tmp_path (the user's folder: not the repository)."""
    env = {**os.environ, "OUT": str(tmp_path / "qs"), **settings}
    return subprocess.run(["bash", str(REPO / "scripts" / "quickstart.sh")], capture_output=True, text=True, env=env, timeout=300,
                          cwd=tmp_path)  # fmt: skip


def test_quickstart_trains_camel_and_td3_side_by_side_and_draws_both(tmp_path):
    result = quickstart(tmp_path, STEPS="400", EVAL_FREQUENCY="200")
    assert result.returncode == 0, result.stderr[-2000:]
    out = tmp_path / "qs"
    for condition, guided in (("baseline", False), ("camel_qbc_gwarm_noboot_cu2", True)):  # TD3, and CAMEL at the trainer's default
        finished = json.loads((out / "runs" / f"Hopper-v4__{condition}__1" / "finished.json").read_text())
        assert finished["total_timesteps"] == 400 and (finished["guide_calls"] is not None) == guided
    assert finished["guide_file"]["path"] == "policies/hopper.py"
    for name in ("eval", "train"):
        assert (out / f"{name}.png").stat().st_size > 0
        table = (out / f"{name}.md").read_text()
        assert "TD3" in table and "CAMEL+, LLM-written guide" in table  # one name for the method
    assert "CAMEL+, LLM-written guide" in result.stdout and "eval.png" in result.stdout

    # the commands a run prints work as printed, pasted where the user started the quickstart
    log = (out / "runs" / "Hopper-v4__camel_qbc_gwarm_noboot_cu2__1" / "log.txt").read_text()
    (evaluate,) = re.findall(r"evaluate it: +(python .+)", log)
    assert "qs/runs/Hopper-v4__camel_qbc_gwarm_noboot_cu2__1/camel_qbc_gwarm_noboot_cu2.cleanrl_model" in evaluate
    pasted = subprocess.run(["bash", "-c", evaluate.replace("python ", f"{sys.executable} ", 1)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert pasted.returncode == 0, pasted.stderr


def test_quickstart_refuses_an_env_without_a_shipped_guide_and_arguments(tmp_path):
    result = quickstart(tmp_path, ENV_ID="Humanoid-v4")
    assert result.returncode == 2 and result.stderr.startswith("error: ENV_ID must be") and not (tmp_path / "qs").exists()
    result = subprocess.run(["bash", str(REPO / "scripts" / "quickstart.sh"), "--steps", "5"], capture_output=True, text=True)
    assert result.returncode == 2 and "takes no arguments" in result.stderr
