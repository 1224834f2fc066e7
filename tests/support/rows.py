"""Panel and seat rows as the recorder writes them."""

from __future__ import annotations

from typing import Any

from benchwarmers.store.records import PanelRow, SeatRow


def panel(panel_id: str, response: Any = None) -> PanelRow:
    return PanelRow(
        id=panel_id,
        created_at=1764500000.25,
        collection="pair",
        reply="all",
        shape="review",
        shape_by="collection",
        caller="local",
        request={"model": "bench/pair", "messages": [{"role": "user", "content": "Is 91 prime? ünïcode"}]},
        request_hash="ab" * 32,
        idempotency_key=None,
        skipped=[],
        note=None,
        seconds=None if response is None else 0.75,
        response=response,
    )


def seat(panel_id: str) -> SeatRow:
    return SeatRow(
        call=f"{panel_id}.member0",
        panel_id=panel_id,
        position=0,
        seat="member",
        alias="groq/llama-3.3-70b",
        endpoint="groq",
        shape="review",
        status="ok",
        seconds=0.5,
        answer="No: 91 = 7 × 13.",
        error="",
        error_kind=None,
        usage={"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21},
        caller="local",
        created_at=1764500000.5,
        frees_at=None,
        tool_calls=None,
        truncated_at=None,
        truncated=None,
    )
