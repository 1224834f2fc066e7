"""The side-by-side part alone, with LiteLLM: `python -m perf.litellm_side_by_side [--quick] [--markdown]`
(same options as run.py; add `--portkey` for Portkey in the same rounds). The peer is perf/litellm_peer.py."""

from __future__ import annotations

import sys


def main() -> None:
    """Only the side-by-side part: `python -m perf.litellm_side_by_side [--quick] [--markdown]`."""
    from perf import run

    # A token load of our own (the tables need one), then the side-by-side rounds.
    token = "--collections solo --modes json --concurrency 1 --count 20 --image-mb 0 --litellm --no-portkey"
    run.main([*token.split(), *sys.argv[1:]])


if __name__ == "__main__":
    main()
