"""The HTTP stack's limit: a Litestar endpoint that does nothing, served like the service.

`python -m benchmarks.noop_app --port P --workers N` runs it with `api.server.serve`, as
`casino-war serve` does, so the only difference from the real service is the work
done inside the handler.
"""

import argparse
from typing import Any

from litestar import Litestar, get, post

from api.server import serve


@post("/noop", sync_to_thread=False)
def noop(data: dict[str, Any]) -> dict[str, Any]:
    """Accept a JSON body like a hand request's and answer at once."""
    return {"status": "settled", "echo": len(data)}


@get("/ready", sync_to_thread=False)
def ready() -> dict[str, str]:
    return {"status": "ready"}


app = Litestar(route_handlers=[noop, ready], openapi_config=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    serve("benchmarks.noop_app:app", host=args.host, port=args.port, workers=args.workers)


if __name__ == "__main__":
    main()
