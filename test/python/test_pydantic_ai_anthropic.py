"""PydanticAI's Agent with its Anthropic model and provider on the gateway's /pydanticai/anthropic: a run and a
run whose model calls a tool before answering."""

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from conftest import TOOL_QUESTION, TOOL_RESULT, anthropic_echo

MODEL = "claude-sonnet-4-5"


@pytest.fixture
def model(gateway_url: str, gateway_key: str) -> AnthropicModel:
    provider = AnthropicProvider(base_url=f"{gateway_url}/pydanticai/anthropic", api_key=gateway_key)
    return AnthropicModel(MODEL, provider=provider)


def test_run(model: AnthropicModel) -> None:
    result = Agent(model).run_sync("hello there")
    assert result.output == anthropic_echo(MODEL, "hello there")
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


def test_tool_call(model: AnthropicModel) -> None:
    agent = Agent(model)
    calls: list[str] = []

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        calls.append(city)
        return TOOL_RESULT

    result = agent.run_sync(TOOL_QUESTION)
    assert calls == ["fake"]
    assert result.output == f"tool result: {TOOL_RESULT}"
