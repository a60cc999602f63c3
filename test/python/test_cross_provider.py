"""<provider>/<model> through the frameworks: the gateway translates the caller's format to that provider's
(Gemini's format to OpenAI, Anthropic's to OpenAI, OpenAI's to Anthropic)."""

from langchain_anthropic import ChatAnthropic
from langchain_google_genai import ChatGoogleGenerativeAI
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from conftest import anthropic_echo, echo, merged, text_of


def test_langchain_gemini_format_to_openai(gateway_url: str, gateway_key: str) -> None:
    llm = ChatGoogleGenerativeAI(
        model="openai/gpt-4o-mini", base_url=f"{gateway_url}/langchain/genai", api_key=gateway_key, max_retries=0
    )
    assert text_of(llm.invoke("hello there")) == echo("gpt-4o-mini", "hello there")
    assert text_of(merged(list(llm.stream("stream this please")))) == echo("gpt-4o-mini", "stream this please")


def test_langchain_anthropic_format_to_openai(gateway_url: str, gateway_key: str) -> None:
    llm = ChatAnthropic(
        model="openai/gpt-4o-mini", base_url=f"{gateway_url}/langchain/anthropic", api_key=gateway_key, max_retries=0
    )
    assert text_of(llm.invoke("hello there")) == echo("gpt-4o-mini", "hello there")


def test_pydantic_ai_openai_format_to_anthropic(gateway_url: str, gateway_key: str) -> None:
    provider = OpenAIProvider(base_url=f"{gateway_url}/pydanticai/v1", api_key=gateway_key)
    result = Agent(OpenAIChatModel("anthropic/claude-sonnet-4-5", provider=provider)).run_sync("hello there")
    assert result.output == anthropic_echo("claude-sonnet-4-5", "hello there")
