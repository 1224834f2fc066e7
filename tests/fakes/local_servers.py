"""The fake provider dressed as a local server: each preset's listing routes, in that server's own
wire format, for one model with a window and (maybe) vision.

- llama.cpp's server and llamafile: `GET /v1/models` with `meta.n_ctx_train` (the id is the GGUF's
  path), `GET /props` with `default_generation_settings.n_ctx` (the context it was started with) and
  `modalities.vision`.
- llama-cpp-python's server: `GET /v1/models` without `meta`, and no `/props` (a 404).
- Ollama: `GET /api/tags`, `POST /api/show` with `model_info["<arch>.context_length"]` and `capabilities`.
- LM Studio: `GET /api/v0/models` with `max_context_length` and `type: vlm | llm` (no v1 route: a 404).
- vLLM: `GET /v1/models` with `max_model_len`.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.upstream import FakeUpstream


def serve_as(fake: FakeUpstream, preset: str, model_id: str, *, window: int, trained: int, vision: bool) -> None:
    if preset in ("llamacpp", "llamafile", "llama-cpp-python"):
        entry: dict[str, Any] = {"id": model_id, "object": "model", "created": 1, "owned_by": "llamacpp"}
        if preset == "llama-cpp-python":
            fake.listing("/v1/models", {"object": "list", "data": [{**entry, "owned_by": "me", "permissions": []}]})
            return
        entry["meta"] = {"vocab_type": 2, "n_vocab": 49152, "n_ctx_train": trained, "n_embd": 576, "size": 1}
        fake.listing("/v1/models", {"object": "list", "data": [entry]})
        fake.listing(
            "/props",
            {
                "default_generation_settings": {"n_ctx": window, "temperature": 0.8},
                "total_slots": 1,
                "model_path": model_id,
                "modalities": {"vision": vision, "audio": False},
            },
        )
    elif preset == "ollama":
        fake.listing("/api/tags", {"models": [{"name": model_id, "model": model_id, "details": {"family": "llama"}}]})
        capabilities = ["completion", *(["vision"] if vision else [])]
        show = {
            "details": {"family": "llama"},
            "model_info": {"general.architecture": "llama", "llama.context_length": trained},
            "parameters": f"num_ctx {window}",
            "capabilities": capabilities,
        }
        fake.listing("/api/show", {model_id: show})
    elif preset == "lmstudio":
        entry = {
            "id": model_id,
            "object": "model",
            "type": "vlm" if vision else "llm",
            "publisher": "lmstudio-community",
            "arch": "llama",
            "state": "loaded",
            "max_context_length": window,
        }
        fake.listing("/api/v0/models", {"object": "list", "data": [entry]})
    elif preset == "vllm":
        entry = {"id": model_id, "object": "model", "created": 1, "owned_by": "vllm", "root": model_id}
        fake.listing("/v1/models", {"object": "list", "data": [{**entry, "parent": None, "max_model_len": window}]})
    else:
        raise ValueError(f"no local server shape for preset {preset!r}")
