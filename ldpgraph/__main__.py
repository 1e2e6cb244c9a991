"""``python -m ldpgraph``: the command line (see :mod:`ldpgraph.cli`)."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
