"""PydanticAI's Agent with its Google model and provider on the gateway's /pydanticai/genai (the Gemini API)."""

from pydantic_ai import Agent
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.providers.google import GoogleProvider


def test_run(gateway_url: str, gateway_key: str) -> None:
    provider = GoogleProvider(base_url=f"{gateway_url}/pydanticai/genai", api_key=gateway_key)
    result = Agent(GoogleModel("gemini-2.5-flash", provider=provider)).run_sync("hello there")
    assert result.output == "echo: hello there"
    assert result.usage.input_tokens > 0
