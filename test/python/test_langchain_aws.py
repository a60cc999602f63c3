"""LangChain's ChatBedrockConverse on the gateway's /langchain/cloudconv (Bedrock Converse), with a bearer API
key instead of AWS credentials (botocore sends it over HTTPS only: the gateway is reached over TLS): invoke, stream, and a tool call round trip. A bare model id goes to bedrock."""

import pytest
from langchain_aws import ChatBedrockConverse
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from conftest import TOOL_QUESTION, TOOL_RESULT, merged, text_of

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


@tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return TOOL_RESULT


@pytest.fixture
def llm(gateway_tls_url: str, gateway_key: str) -> ChatBedrockConverse:
    return ChatBedrockConverse(
        model=MODEL,
        base_url=f"{gateway_tls_url}/langchain/cloudconv",
        api_key=gateway_key,
        region_name="us-east-1",
    )


def test_invoke(llm: ChatBedrockConverse) -> None:
    answer = llm.invoke("hello there")
    assert text_of(answer) == f"[{MODEL}] hello there"
    assert answer.usage_metadata is not None and answer.usage_metadata["input_tokens"] > 0


def test_stream(llm: ChatBedrockConverse) -> None:
    chunks = list(llm.stream("stream this please"))
    assert len(chunks) > 2, "the answer arrives in several chunks"
    whole = merged(chunks)
    assert text_of(whole) == f"[{MODEL}] stream this please"
    assert whole.usage_metadata is not None and whole.usage_metadata["output_tokens"] > 0


def test_tool_call_round_trip(llm: ChatBedrockConverse) -> None:
    with_tools = llm.bind_tools([get_weather])
    question = HumanMessage(TOOL_QUESTION)
    first = with_tools.invoke([question])
    assert [(c["name"], c["args"]) for c in first.tool_calls] == [("get_weather", {"city": "fake"})]

    result = get_weather.invoke(first.tool_calls[0])
    second = with_tools.invoke([question, first, result])
    assert second.tool_calls == []
    assert text_of(second) == f"tool result: {TOOL_RESULT}"
