"""--help reads in clauses: tyro keeps every line break of a flag's docstring, so a break in mid-clause leaves a
stray word on a line of its own in a narrow terminal ("... the answer" / "saved as a file"). Each break in a flag's
docstring, in every script a user runs, ends a clause (, ; : . or a closing parenthesis) or opens a parenthesis; and
the trainers document every flag."""

from dataclasses import dataclass, fields

import pytest
import tyro

import camel_plus_td3
import camel_sac
import camel_td3
import evaluate_policy
import generate_policy
import plot
from camel_utils.run import field_docstrings

ARGS_CLASSES = [camel_td3.Args, camel_plus_td3.Args, camel_sac.Args, generate_policy.Args, evaluate_policy.Args, plot.Args, plot.ExportArgs, plot.RunListArgs, plot.BudgetArgs]


def mid_clause_breaks(docstring):
    lines = docstring.splitlines()
    return [f"{a!r} / {b!r}" for a, b in zip(lines, lines[1:]) if not a.endswith((",", ";", ":", ".", ")")) and not b.startswith("(")]


@pytest.mark.parametrize("args_class", ARGS_CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_flag_docstrings_break_only_between_clauses(args_class):
    found = {name: breaks[0] for name, doc in field_docstrings(args_class).items() if (breaks := mid_clause_breaks(doc))}
    assert found == {}


@pytest.mark.parametrize("args_class", [camel_td3.Args, camel_plus_td3.Args, camel_sac.Args])
def test_every_trainer_flag_is_documented(args_class):
    assert sorted(field_docstrings(args_class)) == sorted(f.name for f in fields(args_class))


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
    assert mid_clause_breaks("the answer\nsaved as a file") == ["'the answer' / 'saved as a file'"]
    assert mid_clause_breaks("a: b,\nc (d)\n(e) f)\ng") == []
