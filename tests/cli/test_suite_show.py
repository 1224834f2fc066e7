"""`benchwarmers suite show TASK`: the prompt exactly as a model is sent it and the key, as JSON, as plain lines
when piped (CliRunner's stdout is no terminal), and in a panel on a terminal."""

from __future__ import annotations

import orjson
import pytest
from rich.console import Console

from benchwarmers.bench.suite.tasks import load_tasks
from benchwarmers.cli import suite as suite_cli
from tests.support.suite_fixtures import cli

TASKS = {t.id: t for t in load_tasks()}
BUG, CONTROL, CLAIM = "rebench-scrapy-6867-bug", "rebench-scrapy-6867-control", "claim-wilson-centre"


def test_json_holds_the_prompt_as_sent_the_key_with_its_patterns_and_the_files_spans():
    code, out = cli("suite", "show", BUG, "--json")
    assert code == 0, out
    task = TASKS[BUG]
    assert task.key is not None
    assert orjson.loads(out) == {
        "task": BUG,
        "kind": "bug",
        "title": "scrapy/scrapy before the fix",
        "shape": "review",
        "key": {
            "path": "scrapy/core/engine.py",
            "function": "ExecutionEngine.close",
            "lines": [177, 177],
            "mechanism": task.key.mechanism,
            "patterns": list(task.key.patterns),
        },
        "source": {k: v for k, v in vars(task.source).items() if v},
        "files": [{"path": "scrapy/core/engine.py", "start": 141, "end": 203}],
        "prompt": task.prompt(),  # what suite run sends as the one user message
    }
    control = orjson.loads(cli("suite", "show", CONTROL, "--json")[1])
    assert control["key"] == {"path": "scrapy/core/engine.py", "fixed_lines": [177, 178], "pair": BUG}


def test_piped_it_is_plain_lines_and_the_prompt_verbatim_last():
    code, out = cli("suite", "show", CONTROL)
    assert code == 0, out
    head = (
        f"task: {CONTROL}\nkind: control\nshape: review\ntitle: scrapy/scrapy after the fix\n"
        "source: scrapy/scrapy @ 657e6cb2b57d (BSD-3-Clause) https://github.com/scrapy/scrapy/pull/6867\n"
        f"key: no defect: the code after the fix of {BUG}; a claim at scrapy/core/engine.py lines 177-178 (±3) "
        "flags it\nprompt:\n"
    )
    assert out == head + TASKS[CONTROL].prompt() + "\n"
    code, out = cli("suite", "show", CLAIM)
    key = TASKS[CLAIM].key
    assert key is not None
    assert out.splitlines()[5:8] == [
        "key: src/benchwarmers/bench/evidence/stats.py line 31, in wilson",
        f"mechanism: {key.mechanism}",
        f"patterns: {'; '.join(key.patterns)}",
    ]


def test_on_a_terminal_the_prompt_is_in_a_panel(monkeypatch: pytest.MonkeyPatch):
    terminal = Console(highlight=False, soft_wrap=True, force_terminal=True, color_system=None, width=100)
    monkeypatch.setattr(suite_cli, "console", terminal)
    code, out = cli("suite", "show", CLAIM)
    assert code == 0, out
    lines = out.splitlines()
    assert lines[:2] == [f"task: {CLAIM}", "kind: claim"]
    top = next(i for i, line in enumerate(lines) if line.startswith("╭"))
    assert lines[top].startswith("╭─ the prompt, exactly as a model is sent it ─")
    assert lines[-1].startswith("╰") and all(len(line) == 100 for line in lines[top:])
    inside = [line[2:-2] for line in lines[top + 1 : -1]]
    # Wrapped to the panel, nothing cut: the same words in the same order as the prompt.
    assert " ".join(" ".join(inside).split()) == " ".join(TASKS[CLAIM].prompt().split())


def test_an_unknown_task_is_one_error_line_naming_the_close_ones():
    code, out = cli("suite", "show", "rebench-scrapy-6867")
    assert (code, out) == (
        1,
        "error: no task 'rebench-scrapy-6867'; `benchwarmers suite list` shows them. Did you mean "
        f"{BUG}, {CONTROL}, rebench-quantecon.py-769-bug?\n",
    )
