"""Write the table of claims that opens docs/results.md from the rows of docs/results/claims.toml and the committed
runs: every number and every "above", "below" or "not resolved" in it is computed (camel_utils/results/claims.py).

    python scripts/claims.py            # rewrite the table between <!-- claims --> and <!-- /claims --> in docs/results.md
    python scripts/claims.py --check    # exit 1 if the table there is not what the runs give (the tests run this)
    python scripts/claims.py --print    # print the table, write nothing
"""

import os
import sys
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # beside training runs: one thread
    os.environ.setdefault(_variable, "1")

import tyro  # noqa: E402

from camel_utils.results.claims import ClaimError, claims_markdown, replace_claims  # noqa: E402


@dataclass
class Args:
    """Write docs/results.md's claims table from docs/results/claims.toml and the committed runs."""

    claims: str = "docs/results/claims.toml"
    """the rows: each a question asked of two groups of runs, or of a group and its guide alone (the file says how)"""
    document: str = "docs/results.md"
    """the Markdown file whose <!-- claims --> ... <!-- /claims --> the table replaces"""
    check: bool = False
    """write nothing; exit 1 if the document's table differs from the one the runs give"""
    print: bool = False
    """print the table; write nothing"""


def main(args):
    os.chdir(REPO)  # the claims file names the runs' folders relative to the repository
    try:
        table = claims_markdown(args.claims)
        if args.print:
            print(table, end="")
            return 0
        with open(args.document) as f:
            document = f.read()
        updated = replace_claims(document, table)
    except (ClaimError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.check:
        if updated != document:
            print(f"error: {args.document}'s claims table is not what {args.claims} and the runs give: run python scripts/claims.py",
                  file=sys.stderr)  # fmt: skip
            return 1
        print(f"{args.document}'s claims table is what the runs give")
        return 0
    with open(args.document, "w") as f:
        f.write(updated)
    rows = sum(line.startswith("| ") for line in table.splitlines()) - 1  # less the header
    print(f"wrote the claims table ({rows} rows) into {args.document}")
    return 0


if __name__ == "__main__":
    sys.exit(main(tyro.cli(Args)))
