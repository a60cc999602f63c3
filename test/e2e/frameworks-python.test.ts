// The Python frameworks (LangChain's ChatOpenAI and ChatAnthropic, PydanticAI's Agent with its OpenAI and
// Anthropic models) against a real gateway with fake
// upstreams: pytest (test/python, in a pinned virtualenv built once under node_modules/.cache) runs with only
// the gateway's URL and a gateway token in its environment; then the upstreams' records show what reached them.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { ensureVenv, runBounded, type Venv } from '../harness/python-venv.ts';
import { createVk, json, pc, waitFor } from './governance-helpers.ts';
import { atFake } from './providers-helpers.ts';

const PYTHON_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'python');
const REQUIREMENTS = join(PYTHON_DIR, 'requirements.txt');
const OPENAI_KEY = 'sk-openai-frameworks-aaaaaaaaaaaa';
const ANTHROPIC_KEY = 'sk-ant-frameworks-bbbbbbbbbbbbbbbb';
const PYTEST_TIMEOUT_MS = 150_000;

let venv: Venv;
let gw: TestGateway;
let openai: OpenAIFake;
let anthropic: AnthropicFake;
/** A virtual key allowed the openai provider only. */
let vk: { id: string; value: string };

beforeAll(async () => {
  venv = ensureVenv({
    name: 'frameworks-venv',
    install: ['-r', REQUIREMENTS],
    revision: createHash('sha256').update(readFileSync(REQUIREMENTS)).digest('hex'),
  });
  openai = await createOpenAIFake().start();
  anthropic = await createAnthropicFake({ apiKey: ANTHROPIC_KEY }).start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: atFake(openai.url, { id: 'oa', name: 'oa', value: OPENAI_KEY, models: ['*'] }),
        anthropic: atFake(anthropic.url, { id: 'an', name: 'an', value: ANTHROPIC_KEY, models: ['*'] }),
      },
    },
  });
  vk = await createVk(gw, { provider_configs: [pc('openai')] });
}, 420_000);

afterAll(async () => {
  await gw?.close();
  await openai?.stop();
  await anthropic?.stop();
});

beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

/** pytest on `files` (relative to test/python) with the gateway in its environment; fails with pytest's output. */
async function pytest(files: string[]): Promise<void> {
  const run = await runBounded(
    venv.bin('python'),
    ['-m', 'pytest', '-p', 'no:cacheprovider', '-q', '--color=no', '-rfE', ...files],
    {
      cwd: PYTHON_DIR,
      timeoutMs: PYTEST_TIMEOUT_MS,
      env: {
        GATEWAY_URL: gw.url,
        GATEWAY_KEY: INFERENCE_TOKEN,
        GATEWAY_VIRTUAL_KEY: vk.value,
        PYTHONDONTWRITEBYTECODE: '1',
      },
    },
  );
  expect(run.timedOut, `pytest timed out:\n${run.output}`).toBe(false);
  expect(run.code, `pytest failed:\n${run.output}`).toBe(0);
}

/** The rows of a /api/logs page. */
function logRows(page: Record<string, unknown>): unknown[] {
  return Array.isArray(page['logs']) ? page['logs'] : [];
}

/** `count` Messages calls reached the anthropic provider, with its key, and the openai provider saw nothing. */
function expectAnthropicOnly(count: number): void {
  expect(openai.requests).toHaveLength(0);
  expect(anthropic.requests).toHaveLength(count);
  for (const req of anthropic.requests) {
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(JSON.stringify(req.headers)).not.toContain(INFERENCE_TOKEN);
  }
}

describe('python frameworks through the gateway', () => {
  it(
    'LangChain ChatOpenAI on /langchain/v1: invoke, stream, tool calls',
    async () => {
      await pytest(['test_langchain_openai.py']);
      // Every call reached the openai provider with the provider's key, never the caller's gateway token.
      // invoke, stream, the tool call's two turns, the streamed tool call
      expect(openai.requests).toHaveLength(5);
      for (const req of openai.requests) {
        expect(req.path).toBe('/v1/chat/completions');
        expect(req.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
        expect(JSON.stringify(req.headers)).not.toContain(INFERENCE_TOKEN);
      }
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );

  it(
    'PydanticAI Agent with its OpenAI model on /pydanticai/v1: run, stream, tool call',
    async () => {
      await pytest(['test_pydantic_ai_openai.py']);
      const tools = openai.requests.filter((r) => JSON.stringify(r.json).includes('"role":"tool"'));
      expect(tools).toHaveLength(1);
      for (const req of openai.requests) expect(req.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );

  it(
    'LangChain ChatAnthropic on /langchain/anthropic: invoke, stream, tool call',
    async () => {
      await pytest(['test_langchain_anthropic.py']);
      expectAnthropicOnly(4); // invoke, stream, the tool call's two turns
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );

  it(
    'PydanticAI Agent with its Anthropic model on /pydanticai/anthropic: run, tool call',
    async () => {
      await pytest(['test_pydantic_ai_anthropic.py']);
      expectAnthropicOnly(3); // the run, the tool call's two turns
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );

  it(
    'a virtual key as the API key: its provider runs and is logged under it, another provider is refused',
    async () => {
      await pytest(['test_virtual_key.py']);
      expect(anthropic.requests).toHaveLength(0);
      expect(openai.requests).toHaveLength(1);
      const successes = await waitFor(
        async () => logRows(await json(await gw.admin(`/api/logs?virtual_key_id=${vk.id}&status=success`))),
        (rows) => rows.length > 0,
      );
      expect(successes).toEqual([
        expect.objectContaining({ provider: 'openai', resolved_model_used: 'gpt-4o-mini', virtual_key_id: vk.id }),
      ]);
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );
});
