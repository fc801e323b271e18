"""Every command in a fenced code block of README.md and docs/*.md that runs a trainer (`python camel_td3.py ...`,
`python camel_plus_td3.py ...`, `python camel_sac.py ...`, env-var prefixes allowed) parses with that trainer's own
parser, and so does every trainer's flag string of a `python benchmarks/benchmark.py --variants/--variant` command:
a flag the trainer does not define fails, naming the doc, the line and the flag. Parsing opens no file, so
placeholders such as runs/RUN are fine, and nothing is trained."""

import contextlib
import importlib
import io
import re
import shlex
import sys
from pathlib import Path

import pytest
import tyro

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from camel_utils.run import cli_args  # noqa: E402

TRAINERS = {"camel_td3.py": "camel_td3", "camel_plus_td3.py": "camel_plus_td3", "camel_sac.py": "camel_sac"}
BENCHMARK = "benchmarks/benchmark.py"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")  # an env-var prefix: OMP_NUM_THREADS=1 python ...
SEPARATORS = {"&&", "||", ";", "|", "&"}


def doc_pages():
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def commands(text):
    """(line number, command text) of each command in the text's fenced code blocks: continuation lines (ending in a
    backslash) joined to their first line, whose number is kept."""
    found = []
    for block in FENCE.finditer(text):
        first_line = text.count("\n", 0, block.start(1)) + 1
        pending, start = "", None
        for offset, line in enumerate(block.group(1).splitlines()):
            if start is None:
                start = first_line + offset
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            found.append((start, pending + line))
            pending, start = "", None
    return found


def script_calls(command):
    """[(script, argv)] for each `python SCRIPT ARGS` in a shell command (after any VAR=value prefixes, between
    && ; | separators), trailing comments dropped; [] for a line that is not shell (Python, a table)."""
    try:
        tokens = shlex.split(command, comments=True)
    except ValueError:  # unbalanced quotes: not a shell line
        return []
    calls, segment = [], []
    for token in tokens + [";"]:
        if token not in SEPARATORS:
            segment.append(token)
            continue
        words = segment
        while words and ASSIGNMENT.match(words[0]):
            words = words[1:]
        if len(words) >= 2 and Path(words[0]).name.startswith("python") and not words[1].startswith("-"):
            script = words[1][2:] if words[1].startswith("./") else words[1]
            calls.append((script, words[2:]))
        segment = []
    return calls


def parse_failure(script, argv):
    """None if the script's parser reads argv (--help counts as read), else its complaint in one line: the
    unrecognised options as tyro names them, or the last line of what it printed."""
    module = importlib.import_module(TRAINERS[script])
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            cli_args(module.Args, argv)
    except SystemExit as e:
        if e.code in (0, None):
            return None
        text = " ".join(printed.getvalue().split())
        unknown = re.search(r"Unrecognized options: (.*?)(?: -{3,}|$)", text)
        if not unknown:
            return text[-300:]
        options = unknown.group(1).split(", ")  # tyro lists the flags and the values after them
        return f"unknown flag(s) {', '.join(o for o in options if o.startswith('-')) or unknown.group(1)}"
    return None


def variant_calls(argv):
    """[(trainer, argv)] of each variant of a benchmarks/benchmark.py command line: NAME=FLAGS, the flags
    camel_td3.py's unless they start with a trainer's name; {guide} stands for a guide file."""
    import benchmark

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        try:
            args = tyro.cli(benchmark.Args, args=argv)
        except SystemExit as e:
            if e.code in (0, None):
                return []
            raise AssertionError(f"benchmarks/benchmark.py does not read {' '.join(argv)}: {' '.join(printed.getvalue().split())[-300:]}")
    calls = []
    for spec in (*args.variants, *args.variant):
        flags = [token.replace("{guide}", "policies/hopper.py") for token in shlex.split(spec.partition("=")[2])]
        trainer = flags.pop(0) if flags[:1] and flags[0] in TRAINERS else "camel_td3.py"
        calls.append((trainer, flags))
    return calls


def problems_in(path):
    """'doc:line: script: complaint' for each trainer command of the page that its trainer does not read."""
    problems = []
    for line, command in commands(path.read_text()):
        for script, argv in script_calls(command):
            checked = [(script, argv)] if script in TRAINERS else variant_calls(argv) if script == BENCHMARK else []
            for trainer, trainer_argv in checked:
                failure = parse_failure(trainer, trainer_argv)
                if failure:
                    where = trainer if script == trainer else f"{BENCHMARK} variant for {trainer}"
                    problems.append(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path.name}:{line}: {where}: {failure}")
    return problems


def test_commands_are_found_in_code_blocks_only_with_their_flags():
    text = (
        "python camel_td3.py --mask-width 0.5   # not in a block\n"
        "```bash\n"
        "OMP_NUM_THREADS=1 python camel_plus_td3.py --llm-policy policies/hopper.py \\\n"
        "    --guide-bc-coef 0   # without guide BC\n"
        "cd /tmp && python ./camel_sac.py --resume runs/RUN\n"
        "python evaluate_policy.py --env-id Hopper-v4 runs/RUN/camel_td3.cleanrl_model\n"
        "```\n"
    )
    found = [call for _, command in commands(text) for call in script_calls(command)]
    assert [line for line, _ in commands(text)] == [3, 5, 6]
    assert found == [
        ("camel_plus_td3.py", ["--llm-policy", "policies/hopper.py", "--guide-bc-coef", "0"]),
        ("camel_sac.py", ["--resume", "runs/RUN"]),
        ("evaluate_policy.py", ["--env-id", "Hopper-v4", "runs/RUN/camel_td3.cleanrl_model"]),
    ]


def test_a_flag_the_trainer_does_not_define_fails_naming_doc_line_and_flag(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n```bash\npython camel_td3.py --env-id Hopper-v4 --llm-policy policies/hopper.py --paper\n"
                    "python camel_td3.py --help\npython camel_plus_td3.py --llm-policy policies/hopper.py --critic-updates-per-step 1\n```\n")  # fmt: skip
    assert problems_in(page) == ["page.md:4: camel_td3.py: unknown flag(s) --paper"]


def test_a_flag_of_another_trainer_fails_too(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```bash\npython camel_sac.py --llm-policy policies/hopper.py --guide-bc-coef 0.4\n```\n")
    assert problems_in(page) == ["page.md:2: camel_sac.py: unknown flag(s) --guide-bc-coef"]


def test_a_benchmark_variant_with_a_flag_no_trainer_defines_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```bash\npython benchmarks/benchmark.py --cleanrl /tmp/cleanrl \\\n"
                    "    --variants \"camel=--llm-policy {guide} --no-manual-grads\" \"plus=camel_plus_td3.py --llm-policy {guide}\"\n```\n")  # fmt: skip
    assert problems_in(page) == ["page.md:2: benchmarks/benchmark.py variant for camel_td3.py: unknown flag(s) --no-manual-grads"]


@pytest.mark.parametrize("page", doc_pages(), ids=lambda path: path.name)
def test_every_trainer_command_of_the_docs_parses(page):
    assert problems_in(page) == []
