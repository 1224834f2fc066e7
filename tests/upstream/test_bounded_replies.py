"""Bounded replies: a seat's answer is kept up to the answer cap (`answer_cap_kb`), its reply read no
further, and the cut is said everywhere the answer is shown. The client against the fake provider
over real HTTP; the gateway in process; and a real `benchwarmers serve` whose memory is measured
while a seat answers 50 MB."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import orjson
import pytest

from benchwarmers.bench.panels.reply import cut_note
from benchwarmers.cli.ask import show_reply
from benchwarmers.errors import InvalidRequest
from benchwarmers.mcp.replies import render_panel
from benchwarmers.upstream.client import ChatBody, EndpointRef, UpstreamPool
from benchwarmers.upstream.failures import UpstreamFailure
from benchwarmers.upstream.truncation import read_limit
from tests.fakes.behaviour import HUGE_LINE, huge_text
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, ServeProcess, add_fake_endpoint, listed
from tests.support.panels import collection

KiB, MiB = 1024, 1024 * 1024
HELLO = ChatBody.from_request({"model": "bench/x", "messages": [{"role": "user", "content": "say a lot"}]})
# The server's peak resident memory while a seat answers 50 MB, above what it held before: at the
# default 1 MiB cap a seat's reply is read up to 2 MiB + 64 KiB, and about 5 MiB above idle was
# measured; the bound leaves room for a noisy allocator (docs/GATEWAY.md, "Bounded replies").
PEAK_ABOVE_IDLE = 32 * MiB


@pytest.fixture
async def pool() -> AsyncIterator[UpstreamPool]:
    pool = UpstreamPool()
    yield pool
    await pool.aclose()


def endpoint(fake: FakeUpstream) -> EndpointRef:
    return EndpointRef(name="fake", base_url=fake.base_url, api_key="sk-test-bounded-0001")


# -- the client --------------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True])
async def test_a_huge_reply_is_read_up_to_the_cap_and_its_connection_closed(fake_upstream, pool, chunked):
    fake_upstream.script("talker", huge=5 * MiB, huge_chunked=chunked)
    fake_upstream.script("brief", reply="short")
    result = await pool.chat(endpoint(fake_upstream), HELLO.for_model("talker"), 10, cap=64 * KiB)
    assert (result.answer, result.truncated_at, result.finish_reason) == (huge_text(64 * KiB), 64 * KiB, "length")
    # What came after the cut is lost: the usage at the end of the body was never read.
    assert (result.status, result.model, result.usage, result.tool_calls) == (200, "talker", None, [])
    # The half-read connection was closed, not pooled: the next call opens a new one and succeeds.
    again = await pool.chat(endpoint(fake_upstream), HELLO.for_model("brief"), 10, cap=64 * KiB)
    assert (again.answer, again.truncated_at, again.finish_reason) == ("short", None, "stop")
    assert fake_upstream.connections_opened == 2


async def test_a_whole_reply_longer_than_the_cap_keeps_its_usage(fake_upstream, pool):
    # 100 KiB of answer (102,400 bytes, newlines escaped) fits the read limit of a 64 KiB cap.
    assert len(orjson.dumps(huge_text(100 * KiB))) < read_limit(64 * KiB)
    fake_upstream.script("wordy", huge=100 * KiB)
    result = await pool.chat(endpoint(fake_upstream), HELLO.for_model("wordy"), 10, cap=64 * KiB)
    assert (result.answer, result.truncated_at, result.finish_reason) == (huge_text(64 * KiB), 64 * KiB, "length")
    assert result.usage == {"prompt_tokens": 10, "completion_tokens": 25_600, "total_tokens": 25_610}
    # Read whole: its connection goes back to the pool.
    await pool.chat(endpoint(fake_upstream), HELLO.for_model("wordy"), 10, cap=64 * KiB)
    assert fake_upstream.connections_opened == 1


async def test_a_reply_under_the_cap_is_untouched(fake_upstream, pool):
    fake_upstream.script("fits", huge=64 * KiB)
    result = await pool.chat(endpoint(fake_upstream), HELLO.for_model("fits"), 10, cap=64 * KiB)
    assert (result.answer, result.truncated_at, result.finish_reason) == (huge_text(64 * KiB), None, "stop")


async def test_a_huge_response_api_reply_is_cut_too(fake_upstream, pool):
    fake_upstream.script("responder", huge=5 * MiB)
    result = await pool.respond(endpoint(fake_upstream), HELLO.for_model("responder"), 10, cap=64 * KiB)
    assert (result.answer, result.truncated_at, result.finish_reason) == (huge_text(64 * KiB), 64 * KiB, "length")
    assert (result.usage, result.tool_calls) == (None, [])


async def test_listings_still_fail_above_their_limit(fake_upstream, pool, monkeypatch):
    monkeypatch.setattr("benchwarmers.upstream.client.MAX_RESPONSE_BYTES", 1 * MiB)
    fake_upstream.listing("/v1/big", {"data": ["x" * 100] * 20_000})
    with pytest.raises(UpstreamFailure, match="response larger than 1 MB"):
        await pool.request_json(endpoint(fake_upstream), "GET", "big")


# -- the gateway -------------------------------------------------------------------------------


@pytest.fixture
def capped(tmp_path: Path, fake_upstream: FakeUpstream) -> Iterator[BenchServer]:
    """A bench whose answer cap is the smallest allowed (16 KiB), a talker that answers 1 MiB, a
    thinker whose reasoning (before its answer) is longer than the read limit (2 × 16 KiB + 64 KiB)
    and a model that answers briefly."""
    server = BenchServer(tmp_path / "home").start()
    try:
        fake_upstream.script("talker", huge=1 * MiB)
        fake_upstream.script("brief", reply="Brief.")
        message = {"role": "assistant", "reasoning": "x" * 200_000, "content": "the answer, too late"}
        fake_upstream.script(
            "thinker", body={"id": "c1", "object": "chat.completion", "choices": [{"message": message}]}
        )
        models = [listed("talker"), listed("brief"), listed("thinker")]
        add_fake_endpoint(server, fake_upstream, models=models)
        server.admin(lambda bench: bench.gateway_settings.set_gateway(answer_cap_kb=16))
        yield server
    finally:
        server.stop()


def post(server: BenchServer, model: str, **extra: object) -> httpx2.Response:
    body = {"model": model, "messages": [{"role": "user", "content": "say a lot"}], **extra}
    return httpx2.post(f"{server.v1}/chat/completions", json=body, timeout=30)


def test_the_cut_is_said_in_every_reply_mode(capped, fake_upstream):
    collection(capped, "pair", ["talker", "brief"], max_explorers=0)
    collection(capped, "alone", ["talker"], max_explorers=0)
    kept = huge_text(16 * KiB)
    reply = post(capped, "bench/pair").json()
    talker, brief = reply["bench"]["seats"]
    assert (talker["status"], talker["answer"], talker["truncated_at"]) == ("ok", kept, 16 * KiB)
    assert (brief["answer"], brief["truncated_at"]) == ("Brief.", None)
    content = reply["choices"][0]["message"]["content"]
    assert f"{kept.strip()}\n\n_({cut_note(16 * KiB)})_\n" in content
    assert cut_note(16 * KiB) == (
        "answer cut at 16,384 bytes by the bench's answer cap (answer_cap_kb): the model wrote more"
    )
    assert content.count("answer cut at") == 1
    assert reply["choices"][0]["finish_reason"] == "stop"  # every seat's answer, each marked

    # A picked seat's own message ends as a model's does when its answer was cut: finish_reason length.
    picked = post(capped, "bench/alone:pick").json()
    assert picked["choices"][0] == {
        "index": 0,
        "message": {"role": "assistant", "content": kept},
        "finish_reason": "length",
        "logprobs": None,
    }
    assert picked["bench"]["seats"][0]["truncated_at"] == 16 * KiB

    # Merged: the merger (the first member, the talker) is told which answer was cut; its own answer
    # was cut too, so the merged reply ends with finish_reason length and says so.
    merged = post(capped, "bench/pair:merged").json()
    told = fake_upstream.chat_requests[-1].json["messages"][1]["content"]
    assert f"{kept.strip()}\n\n[{cut_note(16 * KiB)}]" in told
    assert merged["bench"]["merger"]["truncated_at"] == 16 * KiB
    assert merged["choices"][0]["finish_reason"] == "length"
    assert merged["choices"][0]["message"]["content"].startswith(f"{kept.strip()}\n\n_({cut_note(16 * KiB)})_\n\n---\n")
    assert (
        f"- fake/talker · ok · cut at 16,384 bytes · call `{merged['bench']['seats'][0]['call']}`"
        in merged["choices"][0]["message"]["content"]
    )

    # Streaming: the same reply as events; the seat says it was cut.
    events = [
        orjson.loads(line[6:])
        for line in post(capped, "bench/alone:pick", stream=True).text.splitlines()
        if line.startswith("data: {")
    ]
    assert events[0]["choices"][0]["delta"]["content"] == kept
    assert events[0]["bench"]["seats"][0]["truncated_at"] == 16 * KiB
    assert [e["choices"][0]["finish_reason"] for e in events] == [None, "length"]


def test_a_reply_cut_before_its_answer_began_is_an_empty_seat_and_says_so(capped):
    collection(capped, "deep", ["thinker"], max_explorers=0)
    reply = post(capped, "bench/deep").json()
    [seat] = reply["bench"]["seats"]
    assert (seat["status"], seat["answer"], seat["truncated_at"]) == ("empty", "", 0)
    assert f"_(empty answer)_\n\n_({cut_note(0)})_\n" in reply["choices"][0]["message"]["content"]
    assert reply["bench"]["usage"] == {seat["call"]: None}


def test_the_cut_is_stored_and_shown_by_the_cli_and_mcp(capped, capsys):
    collection(capped, "alone", ["talker"], max_explorers=0)
    reply = post(capped, "bench/alone").json()
    call = reply["bench"]["seats"][0]["call"]
    with sqlite3.connect(capped.settings.home / "bench.db") as db:
        row = db.execute("SELECT status, answer, truncated_at FROM seats WHERE call = ?", (call,)).fetchone()
    assert row == ("ok", huge_text(16 * KiB), 16 * KiB)
    # The dashboard's panel view reads the call log, which carries it.
    api = httpx2.get(f"{capped.url}/api/panels/{reply['bench']['panel']}", timeout=10).json()
    assert (api["seats"][0]["answer"], api["seats"][0]["truncated_at"]) == (huge_text(16 * KiB), 16 * KiB)

    show_reply(reply)
    assert "(answer cut at 16,384 bytes by the bench's answer cap: the model wrote more)" in capsys.readouterr().out
    text = render_panel(reply["bench"], reply["choices"][0]["message"]["content"])
    assert f"{huge_text(16 * KiB).strip()}\n(answer cut at 16,384 bytes by the bench's answer cap" in text


def test_the_cap_is_a_gateway_setting_with_a_range(capped):
    with pytest.raises(InvalidRequest, match=r"answer_cap_kb must be a whole number from 16 to 16384 \(got 8\)"):
        capped.admin(lambda bench: bench.gateway_settings.set_gateway(answer_cap_kb=8))


# -- a real server, 50 MB ------------------------------------------------------------------------


def memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (the peak since the last reset) of a process, in bytes."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024
    return found


def test_a_50_mb_answer_is_cut_at_the_cap_and_memory_stays_bounded(tmp_path, fake_upstream):
    size = 50 * 1000 * 1000
    fake_upstream.script("firehose", huge=size)
    fake_upstream.script("brief", reply="Brief.")
    server = ServeProcess(tmp_path / "home").start()
    try:
        add_fake_endpoint(server, fake_upstream, models=[listed("firehose"), listed("brief")])
        collection(server, "panel", ["firehose", "brief"], max_explorers=0)
        assert post(server, "bench/panel", messages=[{"role": "user", "content": "warm up"}]).status_code == 200
        assert server._process is not None
        pid = server._process.pid
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM starts again from what is resident now
        idle = memory(pid)["VmHWM"]

        reply = post(server, "bench/panel")
        assert reply.status_code == 200
        peak = memory(pid)["VmHWM"]
        firehose, brief = reply.json()["bench"]["seats"]
        assert (firehose["status"], firehose["truncated_at"], brief["answer"]) == ("ok", MiB, "Brief.")
        assert firehose["answer"] == huge_text(MiB)
        assert len(reply.content) < 3 * MiB  # the answer twice (content and seat) at 1 MiB, not 50 MB twice
        with sqlite3.connect(server.settings.home / "bench.db") as db:
            row = db.execute(
                "SELECT status, length(answer), truncated_at FROM seats WHERE call = ?", (firehose["call"],)
            ).fetchone()
        assert row == ("ok", MiB, MiB)
        assert peak - idle < PEAK_ABOVE_IDLE, f"peak {peak / MiB:.1f} MiB, idle {idle / MiB:.1f} MiB"
    finally:
        server.stop()
    assert HUGE_LINE.isascii()  # so a byte of the answer is a character, and length(answer) counts bytes
