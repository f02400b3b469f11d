"""`python -m benchmarks [--quick] [--json]`: run every measurement, print side by side.

PostgreSQL is found at --postgres-url, else $CASINO_WAR_BENCH_POSTGRES_URL, else
$CASINO_WAR_TEST_POSTGRES_URL, else postgresql://postgres@127.0.0.1:5432/postgres; when it
does not answer, its figures are reported unavailable.
"""

import argparse
import gc
import json
import sys

from benchmarks import scratch
from benchmarks.plan import FULL, QUICK
from benchmarks.report import text
from benchmarks.runner import run


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="short run (under a minute)")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--postgres-url", help="admin URL of a PostgreSQL server")
    parser.add_argument("--no-postgres", action="store_true", help="measure SQLite only")
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    if args.no_postgres:
        plan = plan.with_databases(("sqlite",))
    document = run(plan, scratch.admin_url(args.postgres_url))
    if args.json:
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(text(document))
    # Leave the objects of the run to the operating system: the interpreter's last collection
    # would walk the hundred thousand objects SQLAlchemy, Litestar and the service left, when
    # the process is about to end anyway.
    gc.freeze()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
