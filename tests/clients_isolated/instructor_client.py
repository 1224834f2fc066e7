"""instructor against a bench, run by tests/e2e/test_clients_instructor.py in instructor's own virtualenv
(its pins — rich<15, jiter<0.15 — cannot live beside the project's). Prints one JSON object: each
mode's result, or the error it raised."""

from __future__ import annotations

import json
import sys

import instructor
from openai import OpenAI
from pydantic import BaseModel


class City(BaseModel):
    city: str
    population: int


def main(base_url: str) -> None:
    results = {}
    for mode, model in ((instructor.Mode.TOOLS, "bench/tools"), (instructor.Mode.JSON, "bench/json")):
        client = instructor.from_openai(OpenAI(base_url=base_url, api_key="local", max_retries=0), mode=mode)
        try:
            city = client.chat.completions.create(
                model=model,
                response_model=City,
                max_retries=0,
                messages=[{"role": "user", "content": "Which city, and how many live there?"}],
            )
            results[mode.value] = city.model_dump()
        except Exception as exc:  # the test shows what failed, whatever it was
            results[mode.value] = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1])
