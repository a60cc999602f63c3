// The Python frameworks (LangChain's ChatOpenAI and ChatAnthropic, PydanticAI's Agent with its OpenAI and
// Anthropic models) against a real gateway with fake
// upstreams: pytest (test/python, in a pinned virtualenv built once under node_modules/.cache) runs with only
// the gateway's URL and a gateway token in its environment; then the upstreams' records show what reached them.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { type BedrockFake, createBedrockFake } from '../fakes/bedrock.ts';
import { createGeminiFake, type GeminiFake } from '../fakes/gemini.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import type { FakeServer, RecordedRequest } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { ensureVenv, runBounded, type Venv } from '../harness/python-venv.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';
import { createVk, json, pc, waitFor } from './governance-helpers.ts';
import { atFake } from './providers-helpers.ts';

const PYTHON_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'python');
const REQUIREMENTS = join(PYTHON_DIR, 'requirements.txt');
const OPENAI_KEY = 'sk-openai-frameworks-aaaaaaaaaaaa';
const ANTHROPIC_KEY = 'sk-ant-frameworks-bbbbbbbbbbbbbbbb';
const GEMINI_KEY = 'AIza-frameworks-cccccccccccccccc';
const ACCESS_KEY = 'AKIAFRAMEWORKSPY0001';
const SECRET_KEY = 'frameworks-py-secret-0123456789abcdefghi';
const PYTEST_TIMEOUT_MS = 150_000;

let venv: Venv;
let gw: TestGateway;
/** The same configuration behind TLS, for botocore (bearer tokens over HTTPS only). */
let tlsGw: TestGateway;
let tlsDir: TempDir;
let openai: OpenAIFake;
let anthropic: AnthropicFake;
let gemini: GeminiFake;
let bedrock: BedrockFake;
const fakes = (): (FakeServer | undefined)[] => [openai, anthropic, gemini, bedrock];
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
  gemini = await createGeminiFake().start();
  gemini.apiKey = GEMINI_KEY;
  bedrock = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
  const config = {
    providers: {
      openai: atFake(openai.url, { id: 'oa', name: 'oa', value: OPENAI_KEY, models: ['*'] }),
      anthropic: atFake(anthropic.url, { id: 'an', name: 'an', value: ANTHROPIC_KEY, models: ['*'] }),
      gemini: atFake(gemini.url, { id: 'gm', name: 'gm', value: GEMINI_KEY, models: ['*'] }),
      bedrock: atFake(bedrock.url, {
        id: 'br',
        name: 'br',
        models: ['*'],
        bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'us-east-1' },
      }),
    },
  };
  gw = await startTestGateway({ config });
  tlsDir = await tempDir('gw-frameworks-tls-');
  tlsGw = await startTestGateway({ config, env: selfSignedTls(tlsDir.path) });
  vk = await createVk(gw, { provider_configs: [pc('openai')] });
}, 480_000); // venv creation (120 s) and pip install (300 s) are bounded, once per cache

afterAll(async () => {
  await gw?.close();
  await tlsGw?.close();
  await tlsDir?.remove();
  await Promise.all(fakes().map((f) => f?.stop()));
});

beforeEach(() => {
  for (const f of fakes()) f?.reset();
});

/** A self-signed certificate for 127.0.0.1 in `dir` (cert.pem, key.pem), as the gateway's TLS settings. */
function selfSignedTls(dir: string): Record<string, string> {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key].concat([
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
    { stdio: 'ignore', timeout: 30_000 },
  );
  return { GATEWAY_TLS_CERT_FILE: cert, GATEWAY_TLS_KEY_FILE: key };
}

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
        GATEWAY_TLS_URL: tlsGw.url,
        AWS_CA_BUNDLE: join(tlsDir.path, 'cert.pem'),
        PYTHONDONTWRITEBYTECODE: '1',
        // The gateway is on loopback: never through a proxy the environment may name.
        NO_PROXY: '127.0.0.1,localhost',
        no_proxy: '127.0.0.1,localhost',
      },
    },
  );
  expect(run.timedOut, `pytest timed out:\n${run.output}`).toBe(false);
  expect(run.code, `pytest failed:\n${run.output}`).toBe(0);
}

/** The model of the JSON body an upstream received. */
function upstreamModel(req: RecordedRequest): unknown {
  return req.json && typeof req.json === 'object' ? Reflect.get(req.json, 'model') : undefined;
}

/** The rows of a /api/logs page. */
function logRows(page: Record<string, unknown>): unknown[] {
  return Array.isArray(page['logs']) ? page['logs'] : [];
}

/** Only `reached` received requests (`count`), each checked by `check`; the caller's token never went upstream. */
function expectOnly(reached: FakeServer, count: number, check: (req: RecordedRequest) => void): void {
  for (const f of fakes()) if (f !== reached) expect(f?.requests ?? []).toHaveLength(0);
  expect(reached.requests).toHaveLength(count);
  for (const req of reached.requests) {
    check(req);
    expect(JSON.stringify(req.headers)).not.toContain(INFERENCE_TOKEN);
    expect(req.url).not.toContain(INFERENCE_TOKEN);
  }
}

const anthropicCall = (req: RecordedRequest): void => {
  expect(req.path).toBe('/v1/messages');
  expect(req.headers['x-api-key']).toBe(ANTHROPIC_KEY);
};
const geminiCall = (req: RecordedRequest): void => {
  expect(req.path).toMatch(/^\/v1beta\/models\/gemini-2\.5-flash:(generateContent|streamGenerateContent)$/);
  expect(req.headers['x-goog-api-key']).toBe(GEMINI_KEY);
};
const bedrockCall = (req: RecordedRequest): void => {
  expect(decodeURIComponent(req.path)).toMatch(/^\/model\/anthropic\.claude-3-5-sonnet-20240620-v1:0\/converse/);
  // Signed with the provider's credentials (SigV4), never the caller's bearer token.
  expect(String(req.headers.authorization)).toContain(`Credential=${ACCESS_KEY}/`);
};

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
      expectOnly(anthropic, 4, anthropicCall); // invoke, stream, the tool call's two turns
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );

  it(
    'PydanticAI Agent with its Anthropic model on /pydanticai/anthropic: run, tool call',
    async () => {
      await pytest(['test_pydantic_ai_anthropic.py']);
      expectOnly(anthropic, 3, anthropicCall); // the run, the tool call's two turns
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

  it(
    'LangChain ChatGoogleGenerativeAI on /langchain/genai: invoke, stream, tool call',
    async () => {
      await pytest(['test_langchain_google_genai.py']);
      expectOnly(gemini, 4, geminiCall); // invoke, stream, the tool call's two turns
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );

  it(
    'LangChain ChatBedrockConverse on /langchain/cloudconv with a bearer key: invoke, stream, tool call',
    async () => {
      await pytest(['test_langchain_aws.py']);
      expectOnly(bedrock, 4, bedrockCall); // invoke, stream, the tool call's two turns
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );

  it(
    'PydanticAI Agent with its Google model on /pydanticai/genai: run',
    async () => {
      await pytest(['test_pydantic_ai_google.py']);
      expectOnly(gemini, 1, geminiCall);
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );

  it(
    'PydanticAI Agent with its Bedrock model on /pydanticai/cloudconv with a bearer key: run, tool call',
    async () => {
      await pytest(['test_pydantic_ai_bedrock.py']);
      expectOnly(bedrock, 3, bedrockCall); // the run, the tool call's two turns
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );

  it(
    '<provider>/<model> through the frameworks: Gemini and Anthropic formats to openai, OpenAI format to anthropic',
    async () => {
      await pytest(['test_cross_provider.py']);
      expect(gemini.requests).toHaveLength(0);
      expect(bedrock.requests).toHaveLength(0);
      expect(openai.requests).toHaveLength(3); // Gemini format: invoke and stream; Anthropic format: invoke
      for (const req of openai.requests) expect(upstreamModel(req)).toBe('gpt-4o-mini');
      expect(anthropic.requests).toHaveLength(1);
      expect(upstreamModel(anthropic.last())).toBe('claude-sonnet-4-5');
    },
    PYTEST_TIMEOUT_MS + 10_000,
  );
});
