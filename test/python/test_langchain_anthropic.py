"""LangChain's ChatAnthropic on the gateway's /langchain/anthropic (Anthropic's Messages format): invoke, stream,
and a tool call round trip. A bare model name goes to the anthropic provider."""

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from conftest import TOOL_QUESTION, TOOL_RESULT, anthropic_echo

MODEL = "claude-sonnet-4-5"


@tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return TOOL_RESULT


@pytest.fixture
def llm(gateway_url: str, gateway_key: str) -> ChatAnthropic:
    return ChatAnthropic(
        model=MODEL,
        base_url=f"{gateway_url}/langchain/anthropic",
        api_key=gateway_key,
        max_retries=0,
        timeout=20,
        max_tokens=256,
    )


def test_invoke(llm: ChatAnthropic) -> None:
    answer = llm.invoke("hello there")
    assert answer.content == anthropic_echo(MODEL, "hello there")
    assert answer.response_metadata["stop_reason"] == "end_turn"
    assert answer.usage_metadata is not None and answer.usage_metadata["input_tokens"] > 0


def test_stream(llm: ChatAnthropic) -> None:
    chunks = list(llm.stream("stream this please"))
    assert len(chunks) > 2, "the answer arrives in several chunks"
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = whole + chunk
    text = "".join(part["text"] for part in whole.content if isinstance(part, dict) and part.get("type") == "text")
    assert (whole.content if isinstance(whole.content, str) else text) == anthropic_echo(MODEL, "stream this please")
    assert whole.usage_metadata is not None and whole.usage_metadata["output_tokens"] > 0


def test_tool_call_round_trip(llm: ChatAnthropic) -> None:
    with_tools = llm.bind_tools([get_weather])
    question = HumanMessage(TOOL_QUESTION)
    first = with_tools.invoke([question])
    assert [c["name"] for c in first.tool_calls] == ["get_weather"]
    call = first.tool_calls[0]
    assert call["args"] == {"city": "fake"}

    result = get_weather.invoke(call)
    second = with_tools.invoke([question, first, result])
    assert second.tool_calls == []
    assert second.content == f"tool result: {TOOL_RESULT}"
