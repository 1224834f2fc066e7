"""Maintainers' tools, run from a checkout (not in the wheel): `python tools/suite_seed.py --repo .`."""
