"""Instructions a hand in process, the same cards every run:
`python -m benchmarks.hand_instructions [--small 200] [--large 600] [--layers LAYER ...]
[--postgres]`.

`benchmarks.server_instructions` counts a server, loaded as the goals load it, but its hands
deal from fresh random seeds: the ties (a second request each) differ from run to run, and
so does the count (the same hands counted in process on fresh seeds moved by up to 1.7%),
more than many a lever is worth. This counts `benchmarks.hand_once` twice under callgrind,
`small` and then `large` hands on the same pinned seeds, numbered keys and a fresh database
(SQLite's unless `--postgres`): the difference over the difference in hands is what one more
hand costs the service in process (its hot path, or Litestar's route with `--layers
framework`), SQLite's own work included, sockets and the server's loop left out. The same
command on two builds compares them hand for hand (docs/performance.md, "Comparing two
builds"). Given several layers (`benchmarks.hand_once`'s `--layer`), it counts each on the
same cards, and the difference between two is what the outer one adds to a hand
(docs/performance.md, "A hand's instructions by layer"). With `--postgres` the hands are
played on a scratch PostgreSQL database (`benchmarks.hand_once --postgres`): what is counted
is then this process's side of each statement, PostgreSQL's own work left out.
"""

import argparse
import json
import sys

from benchmarks.hand_once import LAYERS, Layer
from benchmarks.instructions import count_instructions, per_unit


def count(hands: int, *, layer: Layer = "hot_path", postgres: bool = False) -> int:
    command = [sys.executable, "-m", "benchmarks.hand_once", str(hands), "--layer", layer]
    return count_instructions([*command, "--postgres"] if postgres else command)


def measure(
    small: int, large: int, *, layer: Layer = "hot_path", postgres: bool = False
) -> dict[str, object]:
    counts = {hands: count(hands, layer=layer, postgres=postgres) for hands in (small, large)}
    return {
        "database": "postgresql" if postgres else "sqlite",
        "layer": layer,
        "instructions": {str(hands): total for hands, total in counts.items()},
        "instructions_per_hand": round(per_unit((small, counts[small]), (large, counts[large]))),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=200, help="hands of the smaller run")
    parser.add_argument("--large", type=int, default=600, help="hands of the larger run")
    parser.add_argument(
        "--layers", nargs="+", choices=LAYERS, default=["hot_path"], help="each counted apart"
    )
    parser.add_argument("--postgres", action="store_true", help="on PostgreSQL (hand_once's)")
    arguments = parser.parse_args(argv)
    if not 0 < arguments.small < arguments.large:
        parser.error("--large must be more hands than --small, and both positive")
    for layer in arguments.layers:
        measured = measure(
            arguments.small, arguments.large, layer=layer, postgres=arguments.postgres
        )
        print(json.dumps(measured), flush=True)


if __name__ == "__main__":
    main()
