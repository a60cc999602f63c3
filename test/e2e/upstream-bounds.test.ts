// What a hostile caller or a hostile upstream can make the gateway do with an upstream call (issue 11): model
// names that would move the upstream URL answer 400 before anything is sent (aliases from config still work), an
// oversized answer is cut off with 502 `response_too_large`, upstream error text reaches the caller and the log
// scrubbed of the provider's keys and bounded, and a stream that breaks after it started says so in its trail.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type BedrockFake, createBedrockFake } from '../fakes/bedrock.ts';
import { createGeminiFake, type GeminiFake } from '../fakes/gemini.ts';
import { FakeServer, type RecordedRequest, sendJson } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';

type Json = Record<string, unknown>;

const KEY_A = 'sk-e2e-bounds-key-a-0123456789';
const KEY_B = 'sk-e2e-bounds-key-b-9876543210';
const ACCESS_KEY = 'AKIAE2EBOUNDS0000001';
const SECRET_KEY = 'e2e-bounds-secret-0123456789abcdefghijkl';
const ARN = 'arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.anthropic.claude-3-5-sonnet-20240620-v1:0';
/** The bound configured for the fake OpenAI-style provider. */
const LIMIT_MB = 1;
/** What a large answer writes at most (the fake's loop bound). */
const LARGE = 16 * 1024 * 1024;

/** How far the fake got with a large answer before the gateway closed the connection. */
interface Written {
  bytes: number;
  finished: boolean;
  closed: Promise<void>;
}
let written: Written | undefined;

/** Writes `first` then filler up to LARGE bytes, stopping when the connection closes. */
async function writeLarge(res: ServerResponse, status: number, first: string): Promise<void> {
  let gone = false;
  const w: Written = {
    bytes: 0,
    finished: false,
    closed: new Promise((resolve) => res.on('close', () => resolve())),
  };
  res.on('close', () => {
    gone = true;
  });
  written = w;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.write(first);
  w.bytes += first.length;
  const filler = Buffer.alloc(64 * 1024, 'x');
  while (!gone && w.bytes < LARGE) {
    w.bytes += filler.length;
    if (!res.write(filler)) await new Promise((r) => setTimeout(r, 1));
  }
  if (!gone) {
    res.end();
    w.finished = true;
  }
}

function chunk(content: string): string {
  const c = {
    id: 'chatcmpl-bounds',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'broken',
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  };
  return `data: ${JSON.stringify(c)}\n\n`;
}

/** An OpenAI-style upstream whose behaviour is chosen by the model name. */
function hostileUpstream(): FakeServer {
  return new FakeServer([
    {
      method: 'POST',
      path: '/v1/chat/completions',
      handler: async (req: RecordedRequest, res) => {
        const model = String((req.json as Json | undefined)?.['model']);
        if (model === 'big') return writeLarge(res, 200, '{"id":"x","choices":[{"message":{"content":"');
        if (model === 'err') {
          return writeLarge(res, 500, `{"error":{"message":"bad keys ${KEY_A} and ${KEY_B} `);
        }
        if (model === 'echo-key') {
          return sendJson(res, 401, { error: { message: `Incorrect API key: ${KEY_A} / ${KEY_B}`, code: KEY_A } });
        }
        if (model === 'broken') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(chunk('Hel'));
          res.write(chunk('lo'));
          await new Promise((r) => setTimeout(r, 20));
          res.socket?.destroy();
          return;
        }
        sendJson(res, 200, {
          id: 'chatcmpl-ok',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        });
      },
    },
  ]);
}

let gw: TestGateway;
/** The gateway's own data directory: its log spool is not shared with other gateways started from the repo. */
let dataDir: TempDir | undefined;
let upstream: FakeServer;
let gemini: GeminiFake;
let bedrock: BedrockFake;

beforeAll(async () => {
  upstream = await hostileUpstream().start();
  gemini = await createGeminiFake().start();
  bedrock = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
  dataDir = await tempDir('gw-bounds-');
  gw = await startTestGateway({
    env: { GATEWAY_DATA_DIR: dataDir.path },
    config: {
      providers: {
        openai: {
          network_config: { base_url: upstream.url, max_retries: 0, max_response_size_mb: LIMIT_MB },
          keys: [
            { id: 'oa', name: 'openai-a', value: KEY_A, models: ['*'] },
            { id: 'ob', name: 'openai-b', value: KEY_B, models: ['*'], weight: 0 },
          ],
        },
        gemini: {
          network_config: { base_url: gemini.url, max_retries: 0 },
          keys: [{ id: 'gm', name: 'gemini-main', value: 'AIza-e2e-bounds-aaaaaaaa', models: ['*'] }],
        },
        bedrock: {
          network_config: { base_url: bedrock.url, max_retries: 0 },
          keys: [
            {
              id: 'br',
              name: 'bedrock-main',
              models: ['*'],
              aliases: { claude: ARN },
              bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'eu-west-3' },
            },
          ],
        },
      },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([upstream?.stop(), gemini?.stop(), bedrock?.stop()]);
  await dataDir?.remove();
});

beforeEach(() => {
  upstream.reset();
  gemini.reset();
  bedrock.reset();
  written = undefined;
});

async function chat(body: Json): Promise<{ status: number; json: Json; id: string | null }> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
  const json: unknown = await res.json();
  expect(json).toBeTypeOf('object');
  return { status: res.status, json: json as Json, id: res.headers.get('x-gateway-request-id') }; // checked above
}

/** The request log of a request id, once it is written (bounded wait). */
async function logOf(id: string | null): Promise<Json> {
  expect(id).toBeTruthy();
  for (let i = 0; i < 100; i++) {
    const res = await gw.admin(`/api/logs/${id}`);
    if (res.status === 200) return (await res.json()) as Json; // the log entry object
    await new Promise((r) => setTimeout(r, 50));
  }
  const last = await gw.admin(`/api/logs/${id}`);
  throw new Error(`no log entry for ${id}: ${last.status} ${await last.text()}`);
}

function errorOf(json: Json): Json {
  const e = json['error'];
  expect(e).toBeTypeOf('object');
  return e as Json; // checked to be an object just above
}

function trailOf(log: Json): Json[] {
  const t = log['attempt_trail'];
  expect(Array.isArray(t)).toBe(true);
  return t as Json[]; // checked to be an array just above
}

describe('model names that would move the upstream URL', () => {
  it.each([
    'gemini/a/../../../internal/admin',
    'gemini/models/..',
    'gemini/./gemini-2.5-flash',
    'gemini/tunedModels//x',
    'gemini/gemini-2.5-flash?key=x',
    'gemini/gemini-2.5-flash#x',
    'gemini/%2e%2e/%2e%2e/internal/admin',
    'gemini/a\\..\\..\\internal',
    'gemini/gemini 2.5',
    'gemini/gemini\t2.5',
    'gemini/gemini\u0001',
    'bedrock/..',
  ])('%j answers 400 invalid_request in the envelope, and nothing reaches an upstream', async (model) => {
    const { status, json } = await chat({ model });
    expect(status).toBe(400);
    expect(json).toMatchObject({ is_gateway_error: true, error: { code: 'invalid_request', param: 'model' } });
    expect(gemini.requests).toHaveLength(0);
    expect(bedrock.requests).toHaveLength(0);
  });

  it('NUL in the model or provider name is refused and logged without it, and later requests are still logged', async () => {
    const refused = await chat({ model: 'gemini/gemini\u0000' });
    expect(refused.status).toBe(400);
    const provider = await chat({ model: 'gem\u0000ini/x' });
    expect(provider).toMatchObject({ status: 400, json: { error: { code: 'invalid_request' } } });
    expect((await logOf(refused.id))['original_model_requested']).toBe('gemini/gemini\ufffd');
    expect((await logOf(provider.id))['original_model_requested']).toBe('gem\ufffdini/x');
    const ok = await chat({ model: 'openai/gpt-4o-mini' });
    expect(ok.status).toBe(200);
    expect((await logOf(ok.id))['status']).toBe('success');
    expect(gemini.requests).toHaveLength(0);
  });

  it('a bad fallback fails the request before the primary is called', async () => {
    const { status, json } = await chat({ model: 'openai/gpt-4o-mini', fallbacks: ['gemini/x/../../admin'] });
    expect(status).toBe(400);
    expect(json).toMatchObject({ error: { code: 'invalid_request', param: 'fallbacks[0]' } });
    expect(upstream.requests).toHaveLength(0);
    expect(gemini.requests).toHaveLength(0);
  });

  it('an inference-profile ARN alias still reaches Bedrock, as one encoded path label', async () => {
    const { status } = await chat({ model: 'bedrock/claude' });
    expect(status).toBe(200);
    expect(bedrock.last().path).toBe(`/model/${encodeURIComponent(ARN)}/converse`);
  });
});

describe('upstream answers are bounded', () => {
  it('an answer over max_response_size_mb is cut off: 502 response_too_large, connection closed', async () => {
    const { status, json } = await chat({ model: 'openai/big' });
    expect(status).toBe(502);
    expect(json).toMatchObject({ is_gateway_error: true, error: { code: 'response_too_large' } });
    await written?.closed;
    expect(written?.finished).toBe(false);
    expect(written?.bytes).toBeLessThan(LARGE);
  });

  it('a small answer on the same provider is served', async () => {
    const { status } = await chat({ model: 'openai/gpt-4o-mini' });
    expect(status).toBe(200);
  });
});

describe('upstream error text', () => {
  it('is scrubbed of every key of the provider, in the answer and in the log', async () => {
    const { status, json, id } = await chat({ model: 'openai/echo-key' });
    expect(status).toBe(401);
    const text = JSON.stringify(json);
    expect(text).not.toContain(KEY_A);
    expect(text).not.toContain(KEY_B);
    expect(errorOf(json)).toMatchObject({
      message: 'Incorrect API key: [REDACTED] / [REDACTED]',
      code: '[REDACTED]',
    });
    const log = JSON.stringify(await logOf(id));
    expect(log).toContain('[REDACTED]');
    expect(log).not.toContain(KEY_A);
    expect(log).not.toContain(KEY_B);
  });

  it('of a huge error body is cut to 4 KiB and the rest is not read', async () => {
    const { status, json, id } = await chat({ model: 'openai/err' });
    expect(status).toBe(500);
    const message = String(errorOf(json)['message']);
    expect(message.length).toBeLessThanOrEqual(4096 + 20);
    expect(message).toContain('bad keys [REDACTED] and [REDACTED]');
    await written?.closed;
    expect(written?.finished).toBe(false);
    const log = await logOf(id);
    expect(JSON.stringify(log).length).toBeLessThan(64 * 1024);
    expect(JSON.stringify(log)).not.toContain(KEY_A);
  });
});

describe('a stream that breaks after it started', () => {
  it('ends with an error event, and its log row and last attempt both say error', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/broken', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('Hel');
    expect(text).toContain('"is_gateway_error":true');
    const log = await logOf(res.headers.get('x-gateway-request-id'));
    expect(log['status']).toBe('error');
    const last = trailOf(log).at(-1);
    expect(last).toMatchObject({
      key_id: 'oa',
      outcome: 'error',
      phase: 'stream',
      next: 'fail',
      status: null,
      error_type: 'network',
    });
  });

  it('a stream that ends normally keeps a successful last attempt', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bedrock/claude', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const log = await logOf(res.headers.get('x-gateway-request-id'));
    expect(log['status']).toBe('success');
    expect(trailOf(log).at(-1)).toMatchObject({ outcome: 'success', status: 200 });
    expect(trailOf(log).at(-1)?.['phase']).toBeUndefined();
  });
});
