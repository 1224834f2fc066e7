"""The side-by-side part alone, with Portkey's gateway; the peer itself is perf/portkey_peer.py.

Install it, or run the part (the same options as run.py):

    python -m perf.portkey_side_by_side --install    # install only (a few seconds)
    python -m perf.portkey_side_by_side              # the side-by-side part alone (add --litellm for both)
"""

from __future__ import annotations

import sys

from perf.portkey_peer import PREFIX, install, installed_version


def main() -> None:
    """`--install` installs only; otherwise the side-by-side part of run.py alone (same options)."""
    if "--install" in sys.argv[1:]:
        problem = install()
        print(problem or f"@portkey-ai/gateway@{installed_version(PREFIX)} is in {PREFIX}")
        sys.exit(1 if problem else 0)
    from perf import run

    token = "--collections solo --modes json --concurrency 1 --count 20 --image-mb 0 --portkey --no-litellm"
    run.main([*token.split(), *sys.argv[1:]])


if __name__ == "__main__":
    main()
