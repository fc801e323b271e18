"""CAMEL+ is described in one sentence, the same words wherever a user meets it: the README, camel_plus_td3.py's
--help, docs/design.md, docs/usage.md and the model card (camel_utils.conditions.CAMEL_PLUS is the sentence)."""

import subprocess
import sys
from pathlib import Path

import pytest

from camel_utils.conditions import CAMEL_PLUS
from camel_utils.hub import method_lines

REPO = Path(__file__).resolve().parent.parent


def flat(text):
    """Text with its line breaks and runs of spaces as single spaces, and Markdown's backticks dropped."""
    return " ".join(text.replace("`", "").split())


@pytest.mark.parametrize("doc", ["README.md", "docs/design.md", "docs/usage.md"])
def test_the_docs_say_the_sentence(doc):
    assert flat(CAMEL_PLUS) in flat((REPO / doc).read_text())


def test_help_says_the_sentence():
    help_text = subprocess.run([sys.executable, str(REPO / "camel_plus_td3.py"), "--help"], capture_output=True, text=True, cwd=REPO,
                               env={"COLUMNS": "400", "PATH": ""}).stdout  # fmt: skip
    assert flat(CAMEL_PLUS) in flat(help_text)


def test_the_model_card_says_the_sentence_for_camel_plus():
    assert f"- {CAMEL_PLUS}" in method_lines("camel_plus_td3.py", "CAMEL+")
    assert f"- {CAMEL_PLUS}" not in method_lines("camel_td3.py", "the paper's CAMEL")
