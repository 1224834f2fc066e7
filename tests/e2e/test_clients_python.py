"""The client matrix, Python: the `openai` SDK (async), LangChain's ChatOpenAI, pydantic-ai and the
`llm` CLI, each unmodified at the version the `test` extra pins, against one real bench on loopback.
(The sync SDK, `models.retrieve`, `responses.create` and JSON schemas: tests/e2e/test_agents_pick.py
and tests/server/test_responses_api.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from tests.support.agents_fixtures import CITY, agents_bench  # noqa: F401


class City(BaseModel):
    city: str
    population: int


@pytest.fixture(scope="module")
def v1(agents_bench) -> str:  # noqa: F811
    return agents_bench[1].v1


async def test_openai_async_client_chat_tools_and_responses(v1):
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=v1, api_key="not-needed-on-loopback", max_retries=0)
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    reply = await client.chat.completions.create(
        model="bench/tools", messages=[{"role": "user", "content": "Weather?"}], tools=[tool]
    )
    assert reply.choices[0].message.tool_calls[0].function.name == "get_weather"
    response = await client.responses.create(model="bench/chatty:pick", input="Weather?")
    assert response.output_text == "It is sunny in Paris."
    assert (await client.models.retrieve("bench/tools")).id == "bench/tools"
    await client.close()


def test_langchain_bind_tools_returns_the_tool_call(v1):
    from langchain_openai import ChatOpenAI

    def get_weather(city: str, population: int) -> str:
        """The weather in a city."""
        return "sunny"

    chat = ChatOpenAI(model="bench/tools", base_url=v1, api_key="not-needed-on-loopback", max_retries=0)
    message = chat.bind_tools([get_weather]).invoke("Weather in Paris?")
    assert [(call["name"], call["args"]) for call in message.tool_calls] == [("get_weather", CITY)]


@pytest.mark.parametrize(("model", "method"), [("bench/json", "json_schema"), ("bench/tools", "function_calling")])
def test_langchain_with_structured_output_returns_the_object(v1, model, method):
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model=model, base_url=v1, api_key="not-needed-on-loopback", max_retries=0)
    assert chat.with_structured_output(City, method=method).invoke("Which city?") == City(**CITY)


def test_pydantic_ai_output_type(v1):
    from pydantic_ai import Agent, NativeOutput
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=v1, api_key="not-needed-on-loopback")
    # The default: the output as a tool call (a `final_result` tool).
    agent = Agent(OpenAIChatModel("bench/tools", provider=provider), output_type=City)
    assert agent.run_sync("Which city?").output == City(**CITY)
    # Native structured output: response_format json_schema.
    agent = Agent(OpenAIChatModel("bench/json", provider=provider), output_type=NativeOutput(City))
    assert agent.run_sync("Which city?").output == City(**CITY)


def test_llm_cli_schema(v1, tmp_path: Path):
    (tmp_path / "extra-openai-models.yaml").write_text(
        f"- model_id: bench-json\n  model_name: bench/json\n  api_base: {v1}\n  supports_schema: true\n"
    )
    llm = Path(sys.executable).parent / "llm"
    env = {**os.environ, "LLM_USER_PATH": str(tmp_path)}
    done = subprocess.run(
        [str(llm), "-m", "bench-json", "--key", "not-needed", "--schema", "city str, population int", "Which city?"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == CITY
