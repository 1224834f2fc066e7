"""The load driver, scenarios and peers measured side by side: run from the repo root as `python -m perf.NAME`
(docs/BENCHMARKS.md), so that `tests.fakes` and `tests.support` import as they do in the tests."""
