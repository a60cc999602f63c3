"""A virtual key as the frameworks' API key: what it allows goes through (and is logged under it), what it does
not allow is refused with the status the client's SDK maps to its permission error."""

import os

import openai
import pytest
from langchain_openai import ChatOpenAI
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from conftest import echo


@pytest.fixture(scope="module")
def virtual_key() -> str:
    value = os.environ.get("GATEWAY_VIRTUAL_KEY")
    if not value:
        raise RuntimeError("GATEWAY_VIRTUAL_KEY is not set: run these tests through frameworks-python.test.ts")
    return value


def test_allowed_model_runs(gateway_url: str, virtual_key: str) -> None:
    provider = OpenAIProvider(base_url=f"{gateway_url}/pydanticai/v1", api_key=virtual_key)
    result = Agent(OpenAIChatModel("gpt-4o-mini", provider=provider)).run_sync("hello there")
    assert result.output == echo("gpt-4o-mini", "hello there")


def test_provider_outside_the_key_is_refused(gateway_url: str, virtual_key: str) -> None:
    llm = ChatOpenAI(
        model="anthropic/claude-sonnet-4-5",
        base_url=f"{gateway_url}/langchain/v1",
        api_key=virtual_key,
        max_retries=0,
        timeout=20,
    )
    with pytest.raises(openai.PermissionDeniedError) as refused:
        llm.invoke("hello there")
    assert refused.value.status_code == 403


def test_pydantic_ai_surfaces_the_refusal(gateway_url: str, virtual_key: str) -> None:
    provider = OpenAIProvider(base_url=f"{gateway_url}/pydanticai/v1", api_key=virtual_key)
    agent = Agent(OpenAIChatModel("anthropic/claude-sonnet-4-5", provider=provider))
    with pytest.raises(ModelHTTPError) as refused:
        agent.run_sync("hello there")
    assert refused.value.status_code == 403
