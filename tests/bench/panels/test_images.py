"""Images: only seats that can see are asked, messages go as sent, nothing is written down."""

from __future__ import annotations

import base64

import httpx2
import pytest

from benchwarmers.bench.services import Bench
from benchwarmers.store import calls
from tests.fakes.upstream import FakeUpstream
from tests.support.benchserver import BenchServer, add_fake_endpoint, listed

CANARY = b"IMAGE-CANARY-" * 3000  # ~39 KB of recognisable bytes
DATA_URL = "data:image/png;base64," + base64.b64encode(CANARY).decode()


def unknown(model_id: str) -> dict:
    """A listing entry that says nothing about inputs (the catalog knows nothing)."""
    return {"id": model_id, "context_length": 64_000, "pricing": {"prompt": "0", "completion": "0"}}


@pytest.fixture
def vision_bench(server: BenchServer, fake: FakeUpstream) -> BenchServer:
    for model in ("acme-eye-1", "zeta-eye-2", "omni-eye-3", "acme-blind", "mystery-model", "text-only-9"):
        fake.script(model, latency=0.01)
    add_fake_endpoint(
        server,
        fake,
        models=[
            listed("acme-eye-1", 64_000, vision=True),
            listed("zeta-eye-2", 64_000, vision=True),
            listed("omni-eye-3", 64_000, vision=True),
            listed("acme-blind", 64_000),
            unknown("mystery-model"),
            listed("text-only-9", 64_000),
        ],
    )
    for alias, family in (
        ("acme-eye-1", "acme"),
        ("zeta-eye-2", "zeta"),
        ("omni-eye-3", "omni"),
        ("acme-blind", "acme-b"),
        ("mystery-model", "mystery"),
        ("text-only-9", "text"),
    ):
        server.admin(lambda b, a=alias, f=family: b.models.set_model(f"fake/{a}", family=f))
    return server


def image_messages(url: str = DATA_URL) -> list[dict]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": url, "detail": "low"}},
            ],
        }
    ]


def post(server: BenchServer, model: str, messages: list[dict], **extra):
    return httpx2.post(
        f"{server.v1}/chat/completions", timeout=30, json={"model": model, "messages": messages, **extra}
    )


def create(server: BenchServer, name: str, members: list[str]) -> None:
    server.admin(lambda b: b.collections.add_collection({"name": name, "members": [f"fake/{m}" for m in members]}))


def test_blind_and_unknown_members_are_skipped_and_seeing_seats_get_the_exact_messages(vision_bench, fake):
    create(vision_bench, "look", ["acme-eye-1", "acme-blind", "mystery-model"])
    messages = image_messages()
    response = post(vision_bench, "bench/look", messages, temperature=0.1)
    assert response.status_code == 200
    bench = response.json()["bench"]
    assert bench["skipped"] == [
        {"seat": "member", "alias": "fake/acme-blind", "why": "cannot take images"},
        {"seat": "member", "alias": "fake/mystery-model", "why": "not known to take images"},
    ]
    seated = [(s["seat"], s["alias"]) for s in bench["seats"]]
    assert seated[0] == ("member", "fake/acme-eye-1")
    # One member sat, so two explorers — and only models that can see.
    assert sorted(seated[1:]) == [("explorer", "fake/omni-eye-3"), ("explorer", "fake/zeta-eye-2")]
    assert bench["shape"] == "vision"
    assert bench["shape_by"] == "image request"
    asked = sorted(r.json["model"] for r in fake.chat_requests)
    assert asked == ["acme-eye-1", "omni-eye-3", "zeta-eye-2"]
    for request in fake.chat_requests:
        assert request.json["messages"] == messages
        assert request.json["temperature"] == 0.1
    assert "_skipped member fake/acme-blind: cannot take images_" in response.json()["choices"][0]["message"]["content"]


def test_no_seat_that_can_see_is_a_400(vision_bench, fake):
    vision_bench.admin(lambda b: b.gateway_settings.set_gateway(max_explorers=0))
    create(vision_bench, "blind", ["acme-blind", "text-only-9"])
    response = post(vision_bench, "bench/blind", image_messages())
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "no_vision_seat"
    assert response.json()["error"]["message"].startswith("no seat on this panel can take images")
    assert fake.chat_requests == []


def test_images_are_stored_and_exported_only_as_placeholders(vision_bench, fake):
    create(vision_bench, "look", ["acme-eye-1"])
    fake.script("zeta-eye-2", status=400, body={"error": {"message": f"bad image {DATA_URL[:5000]}"}})
    response = post(vision_bench, "bench/look", image_messages())
    panel_id = response.json()["bench"]["panel"]

    async def read(bench: Bench):
        async with bench.state.read() as conn:
            return await calls.list_panels(conn, panel_id=panel_id)

    [panel] = vision_bench.admin(read)
    assert panel["request"]["messages"][0]["content"][1] == {"type": "text", "text": "[image: data URL, 38 KB]"}
    encoded = base64.b64encode(CANARY[:300]).decode()[:40]
    home = vision_bench.settings.home
    for path in home.iterdir():
        if path.name.startswith("bench.db"):
            assert encoded.encode() not in path.read_bytes(), path.name
    # The seat whose provider echoed the image back in its error shows a placeholder, not the bytes.
    assert encoded not in response.text
    errors = [s["error"] for s in response.json()["bench"]["seats"] if s["status"] == "error"]
    assert errors == ["bad request (400): bad image [image: data URL, 4 KB]"]


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "http://127.0.0.1/cat.png",
        "http://photos.example/cat.png",
        "ftp://x/cat.png",
        "data:text/html;base64,PHNjcmlwdD4=",
        "/relative/cat.png",
    ],
)
def test_unsafe_image_urls_are_refused_and_never_passed_on(vision_bench, fake, url):
    create(vision_bench, "look", ["acme-eye-1"])
    response = post(vision_bench, "bench/look", image_messages(url))
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "messages"
    assert "messages[0]" in response.json()["error"]["message"]
    assert fake.chat_requests == []


def test_https_image_urls_pass_through_and_count_2500_tokens(vision_bench, fake):
    create(vision_bench, "look", ["acme-eye-1"])
    url = "https://user:pw@photos.example/chair.jpg?sig=secret"
    response = post(vision_bench, "bench/look", image_messages(url))
    assert response.status_code == 200
    assert fake.chat_requests[0].json["messages"][0]["content"][1]["image_url"]["url"] == url
    vision_bench.admin(lambda b: b.models.set_model("fake/acme-eye-1", context=2_000))
    too_big = post(vision_bench, "bench/look", image_messages(url))
    assert too_big.status_code == 413
    assert (
        "about 2,508 tokens (prose, default 3.6 characters a token + 10% until the model's usage is known; "
        "2,500 per image)" in too_big.json()["error"]["message"]
    )


def test_a_blind_member_too_small_for_the_prompt_is_skipped_as_blind_not_refused(vision_bench, fake):
    create(vision_bench, "look", ["acme-eye-1", "acme-blind"])
    vision_bench.admin(lambda b: b.models.set_model("fake/acme-blind", context=1_000))
    url = "https://photos.example/chair.jpg"
    response = post(vision_bench, "bench/look", image_messages(url), bench={"reply": "all"})
    assert response.status_code == 200
    assert response.json()["bench"]["skipped"] == [
        {"seat": "member", "alias": "fake/acme-blind", "why": "cannot take images"}
    ]
    assert "acme-blind" not in {r.json["model"] for r in fake.chat_requests}
    # A member that would sit is still held to its window.
    vision_bench.admin(lambda b: b.models.set_model("fake/acme-eye-1", context=1_000))
    too_big = post(vision_bench, "bench/look", image_messages(url))
    assert too_big.status_code == 413
    assert too_big.json()["error"]["message"].startswith(
        "the prompt is about 2,508 tokens (prose, default 3.6 characters a token + 10% until the model's usage is "
        "known; 2,500 per image), larger than the context window of fake/acme-eye-1 (1,000 tokens)."
    )


def test_an_answer_quoting_the_image_url_is_stored_without_its_userinfo_or_query(vision_bench, fake):
    url = "https://user:pw@photos.example/chair.jpg?sig=secret-signature"
    fake.script(
        "acme-eye-1", respond=lambda data: f"I looked at {data['messages'][0]['content'][1]['image_url']['url']}"
    )
    vision_bench.admin(lambda b: b.gateway_settings.set_gateway(max_explorers=0))
    create(vision_bench, "look", ["acme-eye-1"])
    response = post(vision_bench, "bench/look", image_messages(url))
    panel_id = response.json()["bench"]["panel"]

    async def read(bench: Bench):
        async with bench.state.read() as conn:
            return await calls.list_panels(conn, panel_id=panel_id)

    [panel] = vision_bench.admin(read)
    quoted = "I looked at https://[redacted]@photos.example/chair.jpg?[redacted]"
    assert [seat["answer"] for seat in panel["seats"]] == [quoted]
    assert quoted in response.json()["choices"][0]["message"]["content"]
    for path in vision_bench.settings.home.iterdir():
        if path.name.startswith("bench.db"):
            assert b"user:pw@" not in path.read_bytes(), path.name


def test_models_list_says_vision_when_every_member_sees(vision_bench):
    create(vision_bench, "eyes", ["acme-eye-1", "zeta-eye-2"])
    create(vision_bench, "mixed", ["acme-eye-1", "acme-blind"])
    data = {m["id"]: m for m in httpx2.get(f"{vision_bench.v1}/models").json()["data"]}
    assert data["bench/eyes"]["together"]["capabilities"] == ["text", "vision"]
    assert data["bench/mixed"]["together"]["capabilities"] == ["text"]
