"""PydanticAI's Agent with its OpenAI chat model and provider on the gateway's /pydanticai/v1: a run, a streamed
run, and a run whose model calls a tool before answering."""

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from conftest import TOOL_QUESTION, TOOL_RESULT, echo

MODEL = "gpt-4o-mini"


@pytest.fixture
def model(gateway_url: str, gateway_key: str) -> OpenAIChatModel:
    provider = OpenAIProvider(base_url=f"{gateway_url}/pydanticai/v1", api_key=gateway_key)
    return OpenAIChatModel(MODEL, provider=provider)


def test_run(model: OpenAIChatModel) -> None:
    result = Agent(model).run_sync("hello there")
    assert result.output == echo(MODEL, "hello there")
    usage = result.usage
    assert usage.input_tokens > 0 and usage.output_tokens > 0


async def _streamed(agent: Agent[None, str], prompt: str) -> tuple[list[str], str]:
    async with agent.run_stream(prompt) as run:
        deltas = [d async for d in run.stream_text(delta=True, debounce_by=None)]
        return deltas, await run.get_output()


def test_run_stream(model: OpenAIChatModel) -> None:
    import asyncio

    deltas, output = asyncio.run(_streamed(Agent(model), "stream this please"))
    assert len(deltas) > 1, "the text arrives in several deltas"
    assert "".join(deltas) == output == echo(MODEL, "stream this please")


def test_tool_call(model: OpenAIChatModel) -> None:
    agent = Agent(model)
    calls: list[str] = []

    @agent.tool_plain
    def get_weather(query: str) -> str:
        """Current weather for a question about a city."""
        calls.append(query)
        return TOOL_RESULT

    result = agent.run_sync(TOOL_QUESTION)
    assert calls == [TOOL_QUESTION]
    assert result.output == echo(MODEL, TOOL_QUESTION)
    kinds = [part.part_kind for message in result.all_messages() for part in message.parts]
    assert "tool-call" in kinds and "tool-return" in kinds
