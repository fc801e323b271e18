"""--help reads in clauses: tyro keeps every line break of a flag's docstring, so a break in mid-clause leaves a
stray word on a line of its own in a narrow terminal ("... the answer" / "saved as a file"). Each break in the
user-facing scripts' flag docstrings follows a clause's end (, ; : .) or opens a parenthesis."""

import ast
import io
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
import tyro

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = ["camel_td3.py", "camel_sac.py", "generate_policy.py", "evaluate_policy.py", "plot.py"]


def field_docstrings(path):
    """(class, field, docstring) for every field docstring of the file's classes."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            for before, after in zip(node.body, node.body[1:]):
                if isinstance(before, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                    yield node.name, before.target.id, after.value.value


def mid_clause_breaks(docstring):
    lines = [line.strip() for line in docstring.split("\n")]
    return [f"{a} / {b}" for a, b in zip(lines, lines[1:]) if a and b and a[-1] not in ",;:." and not b.startswith("(")]


@pytest.mark.parametrize("script", SCRIPTS)
def test_flag_docstrings_break_only_between_clauses(script):
    found = [(cls, name, breaks[0]) for cls, name, doc in field_docstrings(REPO / script) if (breaks := mid_clause_breaks(doc))]
    assert found == []


def test_tyro_keeps_a_docstrings_line_breaks_so_the_rule_matters(capsys):
    @dataclass
    class Flags:
        x: int = 1
        """the answer
        saved as a file"""

    with pytest.raises(SystemExit):
        tyro.cli(Flags, args=["--help"])
    line = next(line for line in capsys.readouterr().out.splitlines() if "the answer" in line)
    assert "saved" not in line  # the break was kept
    assert mid_clause_breaks("the answer\nsaved as a file") == ["the answer / saved as a file"]
    assert mid_clause_breaks("a: b,\nc (d)\n(e)") == []
