"""The trainers are peers that each hold their algorithm whole, as CleanRL's scripts do: what two of them share is
written out in both. These tests keep the copies the same text, so a change to one must be made to the others:

- camel_td3.py (the paper's CAMEL) and camel_plus_td3.py (CAMEL+) share every top-level function and class but the
  CAMEL+ delta, so `diff camel_td3.py camel_plus_td3.py` reads as CAMEL+;
- camel_td3.py and camel_sac.py share the env, CAMEL's bounds and epsilon schedule, and the replay buffer."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_WITH_SAC = ["make_env", "mask_bounds", "masking_probability", "epsilon_at", "draw_bounds", "ReplayBatch", "ReplayBuffer"]
# what CAMEL+ changes or adds: its Args (three flags), the buffer that keeps g(s) for guide BC, and guide BC's actor loss
CAMEL_PLUS_DELTA = {"Args", "ReplayBatch", "ReplayBuffer", "update_actor_with_guide_bc"}


def definitions(path):
    """{name: source text} of a file's top-level functions and classes."""
    source = path.read_text()
    return {node.name: ast.get_source_segment(source, node) for node in ast.parse(source).body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))}  # fmt: skip


def differing(first, second, allowed):
    """Names defined in both files whose text differs, or defined in one only, outside `allowed`."""
    a, b = definitions(first), definitions(second)
    return sorted(name for name in (set(a) | set(b)) - allowed if a.get(name) != b.get(name))


@pytest.mark.parametrize("name", SHARED_WITH_SAC)
def test_each_piece_shared_with_sac_is_the_same_text(name):
    td3, sac = definitions(REPO / "camel_td3.py"), definitions(REPO / "camel_sac.py")
    assert name in td3 and name in sac, f"{name} is missing from one trainer"
    assert td3[name] == sac[name], f"{name} differs between camel_td3.py and camel_sac.py: make the same change in both"


def test_camel_plus_differs_from_camel_only_by_its_delta():
    changed = differing(REPO / "camel_td3.py", REPO / "camel_plus_td3.py", CAMEL_PLUS_DELTA)
    assert changed == [], f"{changed} differ between camel_td3.py and camel_plus_td3.py: make the same change in both"
    assert "update_actor_with_guide_bc" in definitions(REPO / "camel_plus_td3.py")
    assert "update_actor_with_guide_bc" not in definitions(REPO / "camel_td3.py")


def test_a_changed_copy_is_caught(tmp_path):
    """The comparisons see a one-character change, in a piece shared with SAC and in one shared with CAMEL+."""
    changed = (REPO / "camel_sac.py").read_text().replace("1.0 - step / (epsilon_fraction", "1.0 - step / (2 * epsilon_fraction")
    (tmp_path / "camel_sac.py").write_text(changed)
    assert definitions(tmp_path / "camel_sac.py")["masking_probability"] != definitions(REPO / "camel_td3.py")["masking_probability"]
    plus = (REPO / "camel_plus_td3.py").read_text()
    (tmp_path / "camel_plus_td3.py").write_text(plus.replace("gamma * (min_qf_next_target)", "gamma * 0.5 * (min_qf_next_target)"))
    assert differing(REPO / "camel_td3.py", tmp_path / "camel_plus_td3.py", CAMEL_PLUS_DELTA) == ["td3_target"]
    (tmp_path / "camel_plus_td3.py").write_text(plus + "\n\ndef extra():\n    pass\n")
    assert differing(REPO / "camel_td3.py", tmp_path / "camel_plus_td3.py", CAMEL_PLUS_DELTA) == ["extra"]


def test_no_trainer_imports_another():
    trainers = ["camel_td3", "camel_plus_td3", "camel_sac"]
    for trainer in trainers:
        tree = ast.parse((REPO / f"{trainer}.py").read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not imported & (set(trainers) - {trainer})
