"""PydanticAI's Agent with its Bedrock Converse model on the gateway's /pydanticai/cloudconv, with a bearer API
key instead of AWS credentials (over TLS, as botocore requires for bearer tokens): a run, and a run whose model
calls a tool before answering."""

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.bedrock import BedrockConverseModel
from pydantic_ai.providers.bedrock import BedrockProvider

from conftest import TOOL_QUESTION, TOOL_RESULT

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


@pytest.fixture
def model(gateway_tls_url: str, gateway_key: str) -> BedrockConverseModel:
    provider = BedrockProvider(
        base_url=f"{gateway_tls_url}/pydanticai/cloudconv", api_key=gateway_key, region_name="us-east-1"
    )
    return BedrockConverseModel(MODEL, provider=provider)


def test_run(model: BedrockConverseModel) -> None:
    result = Agent(model).run_sync("hello there")
    assert result.output == f"[{MODEL}] hello there"
    assert result.usage.input_tokens > 0


def test_tool_call(model: BedrockConverseModel) -> None:
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
