"""Shared fixtures of the framework tests: the gateway they talk to, from the environment that
test/e2e/frameworks-python.test.ts sets (GATEWAY_URL, GATEWAY_KEY). Only the base URL and the key differ from
an application that talks to the providers directly."""

import os

import pytest

# Traces would go to LangSmith's servers; these tests talk to the gateway only.
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"

TOOL_QUESTION = "What is the weather in Paris?"
TOOL_RESULT = '{"temperature_c":21,"sky":"sunny"}'


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run these tests through test/e2e/frameworks-python.test.ts")
    return value


@pytest.fixture(scope="session")
def gateway_url() -> str:
    return _required("GATEWAY_URL").rstrip("/")


@pytest.fixture(scope="session")
def gateway_tls_url() -> str:
    """The same gateway configuration behind TLS (its certificate in AWS_CA_BUNDLE): botocore sends bearer tokens
    over HTTPS only."""
    return _required("GATEWAY_TLS_URL").rstrip("/")


@pytest.fixture(scope="session")
def gateway_key() -> str:
    return _required("GATEWAY_KEY")


def echo(model: str, question: str) -> str:
    """What the fake upstreams answer (test/fakes/openai.ts fakeReply)."""
    return f"Echo from {model}: {question}"


def anthropic_echo(model: str, question: str) -> str:
    """What the fake Anthropic upstream answers (test/fakes/anthropic.ts)."""
    return f"[{model}] {question}"


def merged(chunks: list) -> object:
    """A LangChain stream's chunks added up, as LangChain merges them."""
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = whole + chunk
    return whole


def text_of(message: object) -> str:
    """The text of a LangChain message whose content is a string or a list of content blocks."""
    content = getattr(message, "content")
    if isinstance(content, str):
        return content
    parts = [b if isinstance(b, str) else b.get("text", "") if b.get("type") == "text" else "" for b in content]
    return "".join(parts)
