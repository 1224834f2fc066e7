"""A seat whose answer stopped at its token limit (`finish_reason: "length"`, `max_tokens`) is marked
`truncated: "length"`: in `bench.seats[]`, the markdown section, the call log (the panel view reads
it), and counted apart on the leaderboard."""

from __future__ import annotations

import orjson

from benchwarmers.bench.evidence.board import leaderboard
from benchwarmers.store import calls
from tests.support.gateway_fixtures import LLAMA, QWEN
from tests.support.panels import ask, collection

CUT = orjson.dumps(
    {
        "id": "chatcmpl-cut",
        "object": "chat.completion",
        "created": 1,
        "model": QWEN,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "The bug is on"}, "finish_reason": "length"}
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
    }
)


async def stored(bench, panel_id):
    async with bench.state.read() as conn:
        [panel] = await calls.list_panels(conn, panel_id=panel_id)
    return [(s["alias"], s["truncated"]) for s in panel["seats"]]


def test_an_answer_cut_by_max_tokens_is_marked_everywhere(pair, fake_upstream, client):
    fake_upstream.script(QWEN, body=CUT)
    collection(pair, "two", [LLAMA, QWEN], max_explorers=0)
    reply = ask(client, "bench/two", max_tokens=4)
    seats = [(s["alias"], s["status"], s["answer"], s["truncated"]) for s in reply.bench["seats"]]
    assert seats == [
        (f"fake/{LLAMA}", "ok", f"answer from {LLAMA}", None),
        (f"fake/{QWEN}", "ok", "The bug is on", "length"),
    ]
    content = reply.choices[0].message.content
    section = content[content.index(f"## member · fake/{QWEN}") :]
    assert "The bug is on\n\n_(cut by max_tokens (finish_reason: length): the model had more to write)_" in section
    assert content.count("cut by max_tokens") == 1
    assert pair.admin(lambda b: stored(b, reply.bench["panel"])) == [
        (f"fake/{LLAMA}", None),
        (f"fake/{QWEN}", "length"),
    ]

    [board] = pair.admin(lambda b: leaderboard(b.state))
    counted = {m["alias"]: (m["seats"], m["truncated"]) for m in board.public()["models"]}
    assert counted == {f"fake/{LLAMA}": (1, 0), f"fake/{QWEN}": (1, 1)}
