"""Write the table of claims that opens docs/results.md and the README's headline table from docs/results/claims.toml
and the committed runs: every number, and every "above", "below" or "not resolved", is computed
(camel_utils/results/claims.py).

    python scripts/claims.py            # rewrite both tables (between <!-- claims --> and <!-- headline --> markers)
    python scripts/claims.py --check    # exit 1 if either is not what the runs give (the tests run this)
    python scripts/claims.py --print    # print both, write nothing
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
    HEADLINE_BEGIN, HEADLINE_END, ClaimError, between, claims_markdown, headline_markdown, replace_claims, stale_but_honest,
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


def main(args):
    os.chdir(REPO)  # the claims file names the runs' folders relative to the repository
    try:
        # each document's table, its markers, and the table as it reads while the registered runs are under way
        tables = {args.document: (claims_markdown(args.claims), {}, claims_markdown(args.claims, all_pending=True) if args.check else None)}
        headline = headline_markdown(args.claims)  # None: the claims file has no [headline]
        if headline is not None:
            tables[args.readme] = (headline, {"begin": HEADLINE_BEGIN, "end": HEADLINE_END},
                                   headline_markdown(args.claims, waiting=True) if args.check else None)  # fmt: skip
        if args.print:
            for table, _, _ in tables.values():
                print(table)
            return 0
        updates, honest = {}, []
        for path, (table, markers, under_way) in tables.items():
            with open(path) as f:
                document = f.read()
            updates[path] = (document, replace_claims(document, table, **markers))
            if under_way is not None and stale_but_honest(between(document, **markers), table, under_way):
                honest.append(path)
    except (ClaimError, OSError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    stale = [path for path, (before, after) in updates.items() if before != after]
    if args.check:
        for path in [p for p in stale if p in honest]:
            print(f"note: {path} still says some registered runs are under way that have finished: python scripts/claims.py writes their numbers")
        stale = [p for p in stale if p not in honest]
        if stale:
            print(f"error: the tables in {', '.join(stale)} are not what {args.claims} and the runs give: run python scripts/claims.py",
                  file=sys.stderr)  # fmt: skip
            return 1
        print(f"the tables in {', '.join(updates)} are what the runs give")
        return 0
    for path in stale:
        with open(path, "w") as f:
            f.write(updates[path][1])
    print(f"wrote {', '.join(stale) or 'nothing (the tables were up to date)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(tyro.cli(Args)))
