"""Every relative link of the Markdown pages (README, docs/, policies/, prompts/) reaches a file, and its #anchor a
heading of that file, as GitHub names headings: lower case, punctuation dropped, spaces to hyphens, -1, -2 ... after
a repeated one."""

import collections
import functools
import glob
import os
import re
from pathlib import Path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def heading_anchors(text):
    anchors, seen = set(), collections.Counter()
    for line in FENCE.sub("", text).splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*$", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
            anchors.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
            seen[slug] += 1
    return anchors


@functools.cache
def file_anchors(path):
    """heading_anchors of the file at path, read once however many links point into it."""
    return heading_anchors(Path(path).read_text())


def broken_links(path):
    """(link, why) for each relative link in the Markdown file at path that does not resolve."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", Path(path).read_text())):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            broken.append((target, "no such file"))
        elif anchor and dest.endswith(".md") and anchor not in file_anchors(dest):
            broken.append((target, "no such heading"))
    return broken


def test_heading_anchors_follow_githubs_rule():
    text = "# Speed\n## Intel Xeon (`Intel(R) Xeon(R) Processor`, model 207)\n## Results\n## Results\n```\n# not a heading\n```\n"
    assert heading_anchors(text) == {"speed", "intel-xeon-intelr-xeonr-processor-model-207", "results", "results-1"}


def test_a_link_to_a_missing_heading_or_file_is_found(tmp_path):
    (tmp_path / "a.md").write_text("# One\n[ok](#one) [bad](#two) [file](b.md#x) [gone](c.md) [web](https://x.org/#y)\n")
    (tmp_path / "b.md").write_text("# X\n")
    assert broken_links(str(tmp_path / "a.md")) == [("#two", "no such heading"), ("c.md", "no such file")]


def test_every_relative_link_of_the_docs_resolves():
    pages = [os.path.join(REPO, "README.md")] + [
        path for folder in ("docs", "policies", "prompts") for path in glob.glob(os.path.join(REPO, folder, "**", "*.md"), recursive=True)
    ]
    assert len(pages) > 10
    broken = {os.path.relpath(page, REPO): links for page in pages if (links := broken_links(page))}
    assert broken == {}
