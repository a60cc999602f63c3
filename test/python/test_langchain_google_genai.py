"""LangChain's ChatGoogleGenerativeAI on the gateway's /langchain/genai (the Gemini API): invoke, stream, and a
tool call round trip. A bare model name goes to the gemini provider."""

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_google_genai import ChatGoogleGenerativeAI

from conftest import TOOL_QUESTION, TOOL_RESULT, merged, text_of

MODEL = "gemini-2.5-flash"


@tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return TOOL_RESULT


@pytest.fixture
def llm(gateway_url: str, gateway_key: str) -> ChatGoogleGenerativeAI:
    return ChatGoogleGenerativeAI(
        model=MODEL,
        base_url=f"{gateway_url}/langchain/genai",
        api_key=gateway_key,
        max_retries=0,
        timeout=20,
    )


def test_invoke(llm: ChatGoogleGenerativeAI) -> None:
    answer = llm.invoke("hello there")
    assert text_of(answer) == "echo: hello there"
    assert answer.usage_metadata is not None and answer.usage_metadata["input_tokens"] > 0


def test_stream(llm: ChatGoogleGenerativeAI) -> None:
    chunks = list(llm.stream("stream this please"))
    assert len(chunks) > 1, "the answer arrives in several chunks"
    assert text_of(merged(chunks)) == "echo: stream this please"


def test_tool_call_round_trip(llm: ChatGoogleGenerativeAI) -> None:
    with_tools = llm.bind_tools([get_weather])
    question = HumanMessage(TOOL_QUESTION)
    first = with_tools.invoke([question])
    assert [(c["name"], c["args"]) for c in first.tool_calls] == [("get_weather", {"city": TOOL_QUESTION})]

    result = get_weather.invoke(first.tool_calls[0])
    second = with_tools.invoke([question, first, result])
    assert second.tool_calls == []
    assert text_of(second).startswith("tool said: ") and "temperature_c" in text_of(second)
