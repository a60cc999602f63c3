"""LangChain's ChatOpenAI on the gateway's /langchain/v1 (OpenAI format): invoke, stream, and a tool call round
trip with bind_tools. A bare model name goes to the openai provider."""

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from conftest import TOOL_QUESTION, TOOL_RESULT, echo

MODEL = "gpt-4o-mini"


@tool
def get_weather(query: str) -> str:
    """Current weather for a question about a city."""
    return TOOL_RESULT


@pytest.fixture
def llm(gateway_url: str, gateway_key: str) -> ChatOpenAI:
    return ChatOpenAI(
        model=MODEL,
        base_url=f"{gateway_url}/langchain/v1",
        api_key=gateway_key,
        max_retries=0,
        timeout=20,
        stream_usage=True,
    )


def test_invoke(llm: ChatOpenAI) -> None:
    answer = llm.invoke("hello there")
    assert answer.content == echo(MODEL, "hello there")
    assert answer.response_metadata["finish_reason"] == "stop"
    assert answer.usage_metadata is not None
    assert answer.usage_metadata["total_tokens"] == (
        answer.usage_metadata["input_tokens"] + answer.usage_metadata["output_tokens"]
    )
    assert answer.usage_metadata["input_tokens"] > 0


def test_stream(llm: ChatOpenAI) -> None:
    chunks = list(llm.stream("stream this please"))
    assert len(chunks) > 2, "the answer arrives in several chunks"
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = whole + chunk
    assert whole.content == echo(MODEL, "stream this please")
    assert whole.usage_metadata is not None and whole.usage_metadata["total_tokens"] > 0


def test_tool_call_round_trip(llm: ChatOpenAI) -> None:
    with_tools = llm.bind_tools([get_weather])
    question = HumanMessage(TOOL_QUESTION)
    first = with_tools.invoke([question])
    assert len(first.tool_calls) == 1
    call = first.tool_calls[0]
    assert call["name"] == "get_weather"
    assert call["args"] == {"query": TOOL_QUESTION}
    assert call["id"]

    result = get_weather.invoke(call)
    assert isinstance(result, ToolMessage) and result.tool_call_id == call["id"]
    second = with_tools.invoke([question, first, result])
    assert second.tool_calls == []
    assert second.content == echo(MODEL, TOOL_QUESTION)


def test_streamed_tool_call(llm: ChatOpenAI) -> None:
    with_tools = llm.bind_tools([get_weather])
    chunks = list(with_tools.stream(TOOL_QUESTION))
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = whole + chunk
    assert [c["name"] for c in whole.tool_calls] == ["get_weather"]
    assert whole.tool_calls[0]["args"] == {"query": TOOL_QUESTION}
