"""Write the tables of docs/results/claims.toml from the committed runs: the claims that open docs/results.md, the
README's headline table and its table of the user's budget, docs/benchmark.md's time to a return. Every number, and
every "above", "below" or "not resolved", is computed (camel_utils/results/claims.py).

    python scripts/claims.py            # rewrite them (between their <!-- claims -->, <!-- headline -->, ... markers)
    python scripts/claims.py --check    # exit 1 if one is not what the runs give (the tests run this)
    python scripts/claims.py --print    # print them, write nothing
"""

import os
import sys
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # beside training runs: one thread
    os.environ.setdefault(_variable, "1")

import tyro  # noqa: E402

from camel_utils.results.claims import (  # noqa: E402
    HEADLINE_BEGIN, HEADLINE_END, ClaimError, between, budget_blocks, claims_tables, headline_markdown, replace_claims,
    stale_but_honest,
)  # fmt: skip


@dataclass
class Args:
    """Write docs/results.md's claims table and README.md's headline table from docs/results/claims.toml and the
    committed runs."""

    claims: str = "docs/results/claims.toml"
    """the rows and the headline: each row a question asked of two groups of runs, or of a group and its guide alone (the file says how)"""
    document: str = "docs/results.md"
    """the Markdown file whose <!-- claims --> ... <!-- /claims --> the claims table replaces"""
    readme: str = "README.md"
    """the Markdown file whose <!-- headline --> ... <!-- /headline --> the headline table replaces"""
    check: bool = False
    """write nothing; exit 1 if a table differs from the one the runs give (a registered experiment's row or headline
    may still say its runs are under way after they have finished: it holds no number, and the next run of this script writes it)"""
    print: bool = False
    """print both tables; write nothing"""


def blocks_of(args):
    """[(document, markers, text, text while its registered runs are under way)] of every table the claims file writes."""
    table, under_way = claims_tables(args.claims)
    blocks = [(args.document, {}, table, under_way)]
    headline = headline_markdown(args.claims)  # None: the claims file has no [headline]
    if headline is not None:
        blocks.append((args.readme, {"begin": HEADLINE_BEGIN, "end": HEADLINE_END}, headline, headline_markdown(args.claims, waiting=True)))
    for (path, begin, end, text), (_, _, _, waiting) in zip(budget_blocks(args.claims), budget_blocks(args.claims, waiting=True)):
        blocks.append((args.readme if path == "README.md" else path, {"begin": begin, "end": end}, text, waiting))
    return blocks


def main(args):
    os.chdir(REPO)  # the claims file names the runs' folders relative to the repository
    try:
        blocks = blocks_of(args)
        if args.print:
            for _, _, text, _ in blocks:
                print(text)
            return 0
        documents, notes = {}, []  # {path: (as it is, as the runs give it)}
        for path, markers, text, waiting in blocks:
            if path not in documents:
                with open(path) as f:
                    documents[path] = (f.read(),) * 2
            original, updated = documents[path]
            replaced = replace_claims(updated, text, **markers)
            if args.check and replaced != updated and stale_but_honest(between(updated, **markers), text, waiting):
                notes.append(f"note: {path} still says some registered runs are under way that have finished: "
                             "python scripts/claims.py writes their numbers")  # fmt: skip
                replaced = updated  # it holds no number to be wrong
            documents[path] = (original, replaced)
    except (ClaimError, ValueError, OSError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    stale = [path for path, (original, updated) in documents.items() if original != updated]
    if args.check:
        print("\n".join(notes), end="\n" if notes else "")
        if stale:
            print(f"error: the tables in {', '.join(stale)} are not what {args.claims} and the runs give: run python scripts/claims.py",
                  file=sys.stderr)  # fmt: skip
            return 1
        print(f"the tables in {', '.join(documents)} are what the runs give")
        return 0
    for path in stale:
        with open(path, "w") as f:
            f.write(documents[path][1])
    print(f"wrote {', '.join(stale) or 'nothing (the tables were up to date)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(tyro.cli(Args)))
