"""camel_td3.py and camel_sac.py are peers that each hold their algorithm whole, as CleanRL's scripts do: the pieces
both need (the env, CAMEL's bounds and epsilon schedule, the replay buffer) are written out in both files. This keeps
the two copies the same text, so a change to one must be made to the other."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = ["make_env", "mask_bounds", "masking_probability", "epsilon_at", "draw_bounds", "ReplayBatch", "ReplayBuffer"]


def definitions(path):
    """{name: source text} of a file's top-level functions and classes."""
    source = path.read_text()
    return {node.name: ast.get_source_segment(source, node) for node in ast.parse(source).body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))}  # fmt: skip


@pytest.mark.parametrize("name", SHARED)
def test_each_shared_piece_is_the_same_text_in_both_trainers(name):
    td3, sac = definitions(REPO / "camel_td3.py"), definitions(REPO / "camel_sac.py")
    assert name in td3 and name in sac, f"{name} is missing from one trainer"
    assert td3[name] == sac[name], f"{name} differs between camel_td3.py and camel_sac.py: make the same change in both"


def test_a_changed_copy_is_caught(tmp_path):
    """The comparison sees a one-character change (so the test above can fail)."""
    changed = (REPO / "camel_sac.py").read_text().replace("1.0 - step / (epsilon_fraction", "1.0 - step / (2 * epsilon_fraction")
    (tmp_path / "camel_sac.py").write_text(changed)
    assert definitions(tmp_path / "camel_sac.py")["masking_probability"] != definitions(REPO / "camel_td3.py")["masking_probability"]


def test_neither_trainer_imports_the_other():
    for trainer, other in [("camel_td3.py", "camel_sac"), ("camel_sac.py", "camel_td3")]:
        tree = ast.parse((REPO / trainer).read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert other not in imported
