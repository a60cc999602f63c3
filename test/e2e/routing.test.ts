// Routing through a real gateway (Postgres + Redis) to fake OpenAI-wire upstreams, driven by the official
// openai SDK: retries, key rotation on 429, pinning, stickiness, fallbacks, attempt_trail, error envelopes.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';

let gw: TestGateway;
let primary: OpenAIFake;
let backup: OpenAIFake;
let client: OpenAI;

const KEY_ONE = 'sk-one-aaaaaaaaaaaaaaaaaaaa';
const KEY_TWO = 'sk-two-bbbbbbbbbbbbbbbbbbbb';

beforeAll(async () => {
  primary = await createOpenAIFake().start();
  backup = await createOpenAIFake().start();
  const network = { max_retries: 2, retry_backoff_initial: 1, retry_backoff_max: 5 };
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: primary.url, ...network },
          keys: [
            { id: 'k1', name: 'key-one', value: KEY_ONE, models: ['*'] },
            { id: 'k2', name: 'key-two', value: KEY_TWO, models: ['*'] },
            { id: 'k3', name: 'key-none', value: 'sk-three-cccccccccccccccc', models: [], weight: 0 },
          ],
        },
        groq: {
          network_config: { base_url: backup.url, max_retries: 0 },
          keys: [{ id: 'g1', name: 'groq-one', value: 'gsk-dddddddddddddddddddd', models: ['llama-3.3-70b'] }],
        },
      },
    },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await primary?.stop();
  await backup?.stop();
});

beforeEach(() => {
  primary.reset();
  backup.reset();
});

const ask = { messages: [{ role: 'user' as const, content: 'hello there' }] };

function keyUsed(req: { headers: Record<string, unknown> }): string {
  return String(req.headers['authorization']).replace('Bearer ', '');
}

async function logOf(id: string | null | undefined): Promise<Record<string, unknown>> {
  const res = await gw.admin(`/api/logs/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function failure(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(OpenAI.APIError);
    return err as InstanceType<typeof OpenAI.APIError>;
  }
  throw new Error('expected the request to fail');
}

describe('a successful call', () => {
  it('answers in the OpenAI format with extra_fields and a log entry naming the key', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', ...ask })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain('hello there');
    expect((data as unknown as { extra_fields: unknown }).extra_fields).toEqual({
      provider: 'openai',
      original_model_requested: 'openai/gpt-4o-mini',
      resolved_model_used: 'gpt-4o-mini',
      request_type: 'chat_completion',
    });
    expect(primary.last().json).toMatchObject({ model: 'gpt-4o-mini' });
    expect([KEY_ONE, KEY_TWO]).toContain(keyUsed(primary.last()));
    const log = await logOf(response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status: 'success', provider: 'openai', status_code: 200 });
    expect(['k1', 'k2']).toContain(log['selected_key_id']);
    expect(log['attempt_trail']).toHaveLength(1);
  });
});

describe('retries and rotation', () => {
  it('retries 5xx on the same key with backoff and records every attempt', async () => {
    primary.script(
      { status: 500, body: { error: { message: 'boom', type: 'server_error' } } },
      { status: 503, body: {} },
    );
    const { response } = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', ...ask }).withResponse();
    expect(primary.requests).toHaveLength(3);
    const used = new Set(primary.requests.map(keyUsed));
    expect(used.size).toBe(1);
    const log = await logOf(response.headers.get('x-gateway-request-id'));
    const trail = log['attempt_trail'] as Record<string, unknown>[];
    expect(trail.map((a) => [a['status'], a['outcome'], a['next'] ?? null])).toEqual([
      [500, 'error', 'retry'],
      [503, 'error', 'retry'],
      [200, 'success', null],
    ]);
  });

  it('rotates to another key on 429', async () => {
    primary.script({
      status: 429,
      body: { error: { message: 'slow down', type: 'rate_limit_error' } },
      headers: { 'retry-after': '1' },
    });
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', ...ask });
    expect(primary.requests).toHaveLength(2);
    expect(keyUsed(primary.requests[0]!)).not.toBe(keyUsed(primary.requests[1]!));
  });

  it('clears selected_key_id when every attempt over several keys failed; the trail holds the history', async () => {
    const limited = { status: 429, body: { error: { message: 'rate limited', type: 'rate_limit_error' } } };
    primary.script(limited, limited);
    const err = await failure(client.chat.completions.create({ model: 'openai/gpt-4o-mini', ...ask }));
    expect(err.status).toBe(429);
    const body = err.error as Record<string, unknown>;
    expect(err.headers?.get('x-gateway-request-id')).toBeTruthy();
    const log = await logOf(err.headers?.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status: 'error', status_code: 429, selected_key_id: '', selected_key_name: '' });
    const trail = log['attempt_trail'] as Record<string, unknown>[];
    expect(new Set(trail.map((a) => a['key_id']))).toEqual(new Set(['k1', 'k2']));
    expect(trail.map((a) => a['next'])).toEqual(['rotate', 'fail']);
    expect(body).toMatchObject({ message: 'rate limited', type: 'rate_limit_error' });
  });

  it('keeps the pinned key on failure', async () => {
    const down = { status: 500, body: { error: { message: 'down', type: 'server_error' } } };
    primary.script(down, down, down);
    const err = await failure(
      client.chat.completions.create(
        { model: 'openai/gpt-4o-mini', ...ask },
        { headers: { 'x-gateway-key-id': 'k2' } },
      ),
    );
    expect(err.status).toBe(500);
    expect(primary.requests.map(keyUsed)).toEqual([KEY_TWO, KEY_TWO, KEY_TWO]);
    const log = await logOf(err.headers?.get('x-gateway-request-id'));
    expect(log).toMatchObject({ selected_key_id: 'k2', selected_key_name: 'key-two' });
  });

  it('pins by name and never rotates away from a pinned key', async () => {
    primary.script({ status: 429, body: { error: { message: 'limited', type: 'rate_limit_error' } } });
    const err = await failure(
      client.chat.completions.create(
        { model: 'openai/gpt-4o-mini', ...ask },
        { headers: { 'x-gateway-key-name': 'key-one' } },
      ),
    );
    expect(err.status).toBe(429);
    expect(primary.requests.map(keyUsed)).toEqual([KEY_ONE]);
  });

  it('keeps a session on one key', async () => {
    const headers = { 'x-gateway-session-id': 'conversation-1' };
    for (let i = 0; i < 8; i++)
      await client.chat.completions.create({ model: 'openai/gpt-4o-mini', ...ask }, { headers });
    expect(new Set(primary.requests.map(keyUsed)).size).toBe(1);
  });
});

describe('fallbacks', () => {
  it('tries fallbacks in order when the primary fails, and reports the provider that answered', async () => {
    const down = { status: 502, body: { error: { message: 'bad gateway', type: 'server_error' } } };
    primary.script(down, down, down);
    const { data, response } = await client.chat.completions
      .create({
        model: 'openai/gpt-4o-mini',
        ...ask,
        fallbacks: ['groq/llama-3.3-70b'],
      } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(data.choices[0]?.message.content).toContain('llama-3.3-70b');
    expect((data as unknown as { extra_fields: Record<string, unknown> }).extra_fields).toMatchObject({
      provider: 'groq',
      original_model_requested: 'openai/gpt-4o-mini',
      resolved_model_used: 'llama-3.3-70b',
    });
    expect(backup.last().json).not.toHaveProperty('fallbacks');
    const log = await logOf(response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ fallback_index: 1, provider: 'groq', selected_key_id: 'g1' });
    const trail = log['attempt_trail'] as Record<string, unknown>[];
    expect(trail.map((a) => a['provider'])).toEqual(['openai', 'openai', 'openai', 'groq']);
    expect(trail[2]?.['next']).toBe('fallback');
  });
});

describe('errors', () => {
  it('keeps the provider status of a provider error and marks it as not the gateway’s', async () => {
    primary.script({
      status: 400,
      body: { error: { message: 'bad param', type: 'invalid_request_error', code: 'bad' } },
    });
    const err = await failure(client.chat.completions.create({ model: 'openai/gpt-4o-mini', ...ask }));
    expect(err.status).toBe(400);
    expect(primary.requests).toHaveLength(1);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', ...ask }),
    });
    expect(res.status).toBe(200);
  });

  it('answers an envelope with is_gateway_error false and extra_fields for provider errors', async () => {
    primary.script({ status: 401, body: { error: { message: 'bad key', type: 'invalid_api_key' } } });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', ...ask }),
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      is_gateway_error: false,
      status_code: 401,
      error: { message: 'bad key', type: 'invalid_api_key' },
      extra_fields: {
        provider: 'openai',
        original_model_requested: 'openai/gpt-4o-mini',
        resolved_model_used: 'gpt-4o-mini',
        request_type: 'chat_completion',
      },
    });
  });

  it('rejects unknown pinned keys, denied models, unsupported operations and bad models with gateway errors', async () => {
    const cases: [() => Promise<unknown>, number, string][] = [
      [
        () =>
          client.chat.completions.create(
            { model: 'openai/gpt-4o-mini', ...ask },
            { headers: { 'x-gateway-key-id': 'nope' } },
          ),
        400,
        'key_not_found',
      ],
      [
        () =>
          client.chat.completions.create(
            { model: 'openai/gpt-4o-mini', ...ask },
            { headers: { 'x-gateway-key-id': 'k3' } },
          ),
        403,
        'model_not_allowed',
      ],
      [() => client.chat.completions.create({ model: 'groq/other-model', ...ask }), 403, 'model_not_allowed'],
      [() => client.embeddings.create({ model: 'groq/llama-3.3-70b', input: 'x' }), 400, 'unsupported_operation'],
      [() => client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }), 400, 'invalid_request'],
      [() => client.chat.completions.create({ model: 'anthropic/claude', ...ask }), 400, 'provider_not_configured'],
    ];
    for (const [p, status, code] of cases) {
      const err = await failure(p());
      expect(err.status).toBe(status);
      expect(err.code).toBe(code);
    }
    expect(primary.requests).toHaveLength(0);
    expect(backup.requests).toHaveLength(0);
  });

  it('names the rule that denied a model', async () => {
    const err = await failure(
      client.chat.completions.create(
        { model: 'openai/gpt-4o-mini', ...ask },
        { headers: { 'x-gateway-key-id': 'k3' } },
      ),
    );
    expect(err.message).toContain('provider key models is empty (deny all)');
  });

  it('rejects bad bodies with a 400 envelope and calls no provider', async () => {
    const post = (body: string, type = 'application/json') =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': type },
        body,
      });
    for (const body of [
      '{',
      '{}',
      JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [] }),
      JSON.stringify({ model: 'openai/x', messages: [{ role: 'wizard', content: 'x' }] }),
    ]) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      const env = (await res.json()) as Record<string, unknown>;
      expect(env).toMatchObject({ is_gateway_error: true, status_code: 400 });
    }
    expect((await post('hello', 'text/plain')).status).toBe(415);
    // Only routes that read uploads take multipart/form-data; chat answers 415 in the envelope.
    const form = new FormData();
    form.set('model', 'openai/gpt-4o-mini');
    const multipart = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
      body: form,
    });
    expect(multipart.status).toBe(415);
    expect(await multipart.json()).toMatchObject({ is_gateway_error: true, status_code: 415 });
    expect(primary.requests).toHaveLength(0);
  });

  it('rejects raw provider keys and missing credentials with 401', async () => {
    const raw = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-proj-rawproviderkey', maxRetries: 0 });
    expect((await failure(raw.chat.completions.create({ model: 'openai/gpt-4o-mini', ...ask }))).status).toBe(401);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-raw' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', ...ask }),
    });
    expect(res.status).toBe(401);
    expect(primary.requests).toHaveLength(0);
  });
});

describe('streaming', () => {
  it('streams chunk by chunk, with usage when asked, through the SDK', async () => {
    primary.stream.gapMs = 30;
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let firstAt = 0;
    let usage: unknown;
    const t0 = Date.now();
    for await (const chunk of stream) {
      if (!firstAt) firstAt = Date.now() - t0;
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    const total = Date.now() - t0;
    expect(text).toContain('hello there');
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    // The first chunk arrives long before the stream ends: nothing is buffered.
    expect(firstAt).toBeLessThan(total - 60);
    primary.stream.gapMs = 0;
  });
});
