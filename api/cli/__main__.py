"""`python -m api.cli`, the same as the `casino-war` console script."""

from api.cli import main

raise SystemExit(main())
