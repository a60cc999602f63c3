// OpenTelemetry traces end to end: a gateway process (real Postgres + Redis) exports over OTLP/HTTP to a receiver
// the test runs; requests through the official openai SDK (plain, streamed, retried, with the caller's
// traceparent, failed over several keys) give a server span per request and a client span per upstream attempt,
// with the gen_ai attributes, the attempt trail and the caller's trace id. Without OTEL_* nothing is traced.
import { writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { OtlpReceiver, type ReceivedSpan } from '../fakes/otlp-receiver.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { ADMIN_KEY } from '../harness/gateway.ts';
import { type GatewayProcess, startGatewayProcess } from '../harness/gateway-process.ts';
import { tempDir } from '../harness/tmpdir.ts';

const KEY_ONE = 'sk-tel-one-aaaaaaaaaaaaaaaa';
const KEY_TWO = 'sk-tel-two-bbbbbbbbbbbbbbbb';
const COLLECTOR_SECRET = 'collector-secret-0123456789';
const PROMPT = 'the secret recipe is forty-two';

let fake: OpenAIFake;
let receiver: OtlpReceiver;
let traced: GatewayProcess;
let client: OpenAI;
let removeDir: () => Promise<void>;
let baseEnv: Record<string, string>;

beforeAll(async () => {
  fake = await createOpenAIFake().start();
  receiver = await new OtlpReceiver().start();
  const dir = await tempDir('gw-telemetry-');
  removeDir = () => dir.remove();
  const configPath = join(dir.path, 'config.json');
  await writeFile(
    configPath,
    JSON.stringify({
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 1, retry_backoff_initial: 1, retry_backoff_max: 2 },
          keys: [
            { id: 'k1', name: 'key-one', value: KEY_ONE, models: ['gpt-4o-mini'] },
            { id: 'k2', name: 'key-two', value: KEY_TWO, models: ['*'] },
          ],
        },
      },
    }),
  );
  baseEnv = {
    DATABASE_URL: await createTestDatabase(),
    REDIS_URL: inject('redisUrl'),
    GATEWAY_REDIS_PREFIX: testKeyPrefix(),
    GATEWAY_ADMIN_API_KEY: ADMIN_KEY,
    GATEWAY_CONFIG: configPath,
    GATEWAY_DATA_DIR: dir.path,
  };
  traced = await startGatewayProcess({
    ...baseEnv,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${COLLECTOR_SECRET}`,
    OTEL_SERVICE_NAME: 'gateway-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });
  client = new OpenAI({ baseURL: `${traced.url}/v1`, apiKey: ADMIN_KEY, maxRetries: 0 });
});

afterAll(async () => {
  await traced?.stop();
  await receiver?.stop();
  await fake?.stop();
  await removeDir?.();
});

beforeEach(() => {
  fake.reset();
});

const attr = (s: ReceivedSpan, name: string) => s.attributes[name];

/** The server span of one request (by the gateway's request id) and its attempt spans, in order. */
async function spansOf(requestId: string | null): Promise<{ server: ReceivedSpan; attempts: ReceivedSpan[] }> {
  expect(requestId).toBeTruthy();
  const server = await receiver.waitFor((all) => all.find((s) => attr(s, 'gateway.request.id') === requestId));
  const attempts = await receiver.waitFor((all) => {
    const children = all.filter((s) => s.parentSpanId === server.spanId && s.traceId === server.traceId);
    return children.length === Number(attr(server, 'gateway.attempt_count')) ? children : undefined;
  });
  attempts.sort((a, b) => (a.startNs < b.startNs ? -1 : 1));
  return { server, attempts };
}

function traceparentOf(headers: Record<string, unknown>): { traceId: string; parentId: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(headers['traceparent']));
  expect(m, `traceparent ${String(headers['traceparent'])}`).not.toBeNull();
  return { traceId: m![1]!, parentId: m![2]! };
}

describe('traces over OTLP/HTTP', () => {
  it('a plain request: a server span with the gen_ai attributes and a client span for its attempt', async () => {
    const { data, response } = await client.chat.completions
      .create(
        {
          model: 'openai/gpt-4o-mini',
          messages: [{ role: 'user', content: PROMPT }],
          max_tokens: 50,
          temperature: 0.25,
        },
        { headers: { 'x-gateway-key-id': 'k1' } },
      )
      .withResponse();
    const { server, attempts } = await spansOf(response.headers.get('x-gateway-request-id'));

    expect(server.kind).toBe(2);
    expect(server.parentSpanId).toBe('');
    expect(server.name).toBe('chat gpt-4o-mini');
    expect(server.statusCode).toBe(0);
    expect(server.resource['service.name']).toBe('gateway-under-test');
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.request.max_tokens': 50,
      'gen_ai.request.temperature': 0.25,
      'gen_ai.request.stream': false,
      'gen_ai.usage.input_tokens': data.usage!.prompt_tokens,
      'gen_ai.usage.output_tokens': data.usage!.completion_tokens,
      'gateway.original_model_requested': 'openai/gpt-4o-mini',
      'gateway.selected_key_id': 'k1',
      'gateway.selected_key_name': 'key-one',
      'http.response.status_code': 200,
    });
    expect(attr(server, 'error.type')).toBeUndefined();
    const trail = JSON.parse(String(attr(server, 'gateway.attempt_trail'))) as Record<string, unknown>[];
    expect(trail).toMatchObject([{ key_id: 'k1', outcome: 'success', status: 200 }]);
    // Content capture is off, and no secret reaches the collector.
    const everything = JSON.stringify(receiver.spans.map((s) => s.attributes));
    expect(everything).not.toContain('forty-two');
    expect(everything).not.toContain(KEY_ONE);
    expect(everything).not.toContain(ADMIN_KEY);

    expect(attempts).toHaveLength(1);
    const [attempt] = attempts;
    expect(attempt!.kind).toBe(3);
    expect(attempt!.name).toBe('chat gpt-4o-mini');
    expect(attempt!.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gateway.key.id': 'k1',
      'gateway.key.name': 'key-one',
      'gateway.attempt': 1,
      'gateway.attempt.outcome': 'success',
      'http.response.status_code': 200,
    });
    // The upstream call carries the attempt span as its parent.
    expect(traceparentOf(fake.last().headers)).toEqual({ traceId: server.traceId, parentId: attempt!.spanId });
    // The exporter sends OTLP JSON with the configured headers.
    expect(receiver.exports.at(-1)?.contentType).toContain('application/json');
    expect(receiver.exports.at(-1)?.headers['authorization']).toBe(`Bearer ${COLLECTOR_SECRET}`);
    expect(receiver.refused).toEqual([]);
    expect(traced.output()).not.toContain(COLLECTOR_SECRET);
  });

  it('a streamed request: the span covers the stream, with usage and the time to the first chunk', async () => {
    const stream = client.chat.completions
      .create(
        {
          model: 'openai/gpt-4o-mini',
          messages: [{ role: 'user', content: 'stream me' }],
          stream: true,
          stream_options: { include_usage: true },
        },
        { headers: { 'x-gateway-key-id': 'k1' } },
      )
      .withResponse();
    const { data, response } = await stream;
    let text = '';
    for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain('stream me');
    const { server, attempts } = await spansOf(response.headers.get('x-gateway-request-id'));
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.stream': true,
      'gateway.selected_key_id': 'k1',
    });
    expect(Number(attr(server, 'gen_ai.usage.output_tokens'))).toBeGreaterThan(0);
    const ttfc = Number(attr(server, 'gen_ai.response.time_to_first_chunk'));
    expect(ttfc).toBeGreaterThan(0);
    expect(ttfc * 1e9).toBeLessThanOrEqual(Number(server.endNs - server.startNs) + 5e6);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.endNs).toBeLessThanOrEqual(server.endNs);
  });

  it('a failing first attempt and its retry: two attempt spans, the trail on the request span', async () => {
    fake.script({ status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } });
    const { response } = await client.chat.completions
      .create(
        { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'try twice' }] },
        { headers: { 'x-gateway-key-id': 'k1' } },
      )
      .withResponse();
    const { server, attempts } = await spansOf(response.headers.get('x-gateway-request-id'));
    expect(server.statusCode).toBe(0);
    expect(attr(server, 'gateway.attempt_count')).toBe(2);
    const trail = JSON.parse(String(attr(server, 'gateway.attempt_trail'))) as Record<string, unknown>[];
    expect(trail).toMatchObject([
      { key_id: 'k1', attempt: 1, outcome: 'error', status: 503, next: 'retry' },
      { key_id: 'k1', attempt: 2, outcome: 'success', status: 200 },
    ]);
    expect(attempts.map((a) => a.attributes)).toMatchObject([
      {
        'gateway.attempt': 1,
        'gateway.attempt.outcome': 'error',
        'gateway.attempt.next': 'retry',
        'http.response.status_code': 503,
        'error.type': 'server_error',
      },
      { 'gateway.attempt': 2, 'gateway.attempt.outcome': 'success', 'http.response.status_code': 200 },
    ]);
    expect(attempts[0]!.statusCode).toBe(2);
    expect(attempts[1]!.statusCode).toBe(0);
    // Each upstream call named its own attempt span.
    expect(fake.requests.map((r) => traceparentOf(r.headers).parentId)).toEqual(attempts.map((a) => a.spanId));
  });

  it("the caller's traceparent is the parent: same trace id, its span id as the server span's parent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const { response } = await client.chat.completions
      .create(
        { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'join my trace' }] },
        { headers: { traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=abc' } },
      )
      .withResponse();
    const { server, attempts } = await spansOf(response.headers.get('x-gateway-request-id'));
    expect(server.traceId).toBe(traceId);
    expect(server.parentSpanId).toBe(parentId);
    expect(attempts[0]!.traceId).toBe(traceId);
    const upstream = traceparentOf(fake.last().headers);
    expect(upstream).toEqual({ traceId, parentId: attempts[0]!.spanId });
    expect(fake.last().headers['tracestate']).toBe('vendor=abc');
  });

  it('every attempt failing over several keys: selected_key_* empty on the span, the trail names both keys', async () => {
    const limited = { status: 429, body: { error: { message: 'slow down', type: 'rate_limit_error' } } };
    fake.script(limited, limited, limited, limited, limited, limited);
    const err = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'no luck' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const requestId = (err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-gateway-request-id') ?? null;
    const { server, attempts } = await spansOf(requestId);
    expect(server.statusCode).toBe(2);
    expect(attr(server, 'error.type')).toBeTruthy();
    expect(attr(server, 'gateway.selected_key_id')).toBe('');
    expect(attr(server, 'gateway.selected_key_name')).toBe('');
    const trail = JSON.parse(String(attr(server, 'gateway.attempt_trail'))) as { key_id: string }[];
    expect(new Set(trail.map((t) => t.key_id))).toEqual(new Set(['k1', 'k2']));
    expect(new Set(attempts.map((a) => attr(a, 'gateway.key.id')))).toEqual(new Set(['k1', 'k2']));
    expect(attempts.every((a) => a.statusCode === 2 && attr(a, 'http.response.status_code') === 429)).toBe(true);
  });

  it('a request refused before any attempt still gets its server span, with the error', async () => {
    const err = await client.chat.completions
      .create({ model: 'nosuch/model-x', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const server = await receiver.waitFor((all) =>
      all.find((s) => attr(s, 'gateway.original_model_requested') === 'nosuch/model-x'),
    );
    expect(server.statusCode).toBe(2);
    expect(attr(server, 'error.type')).toBeTruthy();
  });
});

describe('without tracing configured', () => {
  it('no OTEL_* at all: nothing is traced, the upstream gets no traceparent, metrics still count', async () => {
    const plain = await startGatewayProcess({ ...baseEnv, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' });
    try {
      const c = new OpenAI({ baseURL: `${plain.url}/v1`, apiKey: ADMIN_KEY, maxRetries: 0 });
      const before = receiver.spans.length;
      await c.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'quiet' }] });
      expect(fake.last().headers['traceparent']).toBeUndefined();
      const metrics = await (await fetch(`${plain.url}/metrics`)).text();
      expect(metrics).toMatch(/gen_ai_client_operation_duration_seconds_count\{[^}]*gen_ai_provider_name="openai"/);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.spans.length).toBe(before);
    } finally {
      await plain.stop();
    }
  });

  it('OTEL_SDK_DISABLED=true wins over a configured endpoint: nothing reaches the collector', async () => {
    const off = await startGatewayProcess({
      ...baseEnv,
      OTEL_SDK_DISABLED: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '10',
    });
    try {
      const c = new OpenAI({ baseURL: `${off.url}/v1`, apiKey: ADMIN_KEY, maxRetries: 0 });
      const before = receiver.exports.length;
      await c.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'off' }] });
      expect(fake.last().headers['traceparent']).toBeUndefined();
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.exports.length).toBe(before);
    } finally {
      await off.stop();
    }
  });

  it('an OTEL_* value the gateway cannot honour stops the start, naming the variable', async () => {
    const err = await startGatewayProcess({
      ...baseEnv,
      OTEL_TRACES_SAMPLER: 'sometimes',
      OTEL_TRACES_EXPORTER: 'otlp',
    })
      .then(async (p) => {
        await p.stop();
        return undefined;
      })
      .catch((e: unknown) => e);
    expect(String(err)).toContain('OTEL_TRACES_SAMPLER');
  });
});

describe('a collector that accepts connections and never answers', () => {
  it('costs the requests nothing and does not hold the drain: SIGTERM still stops the gateway promptly', async () => {
    const sockets: Socket[] = [];
    const blackHole = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const port = (blackHole.address() as { port: number }).port;
    const gw = await startGatewayProcess({
      ...baseEnv,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_BSP_SCHEDULE_DELAY: '10',
      OTEL_BSP_MAX_QUEUE_SIZE: '8',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4',
    });
    try {
      const c = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: ADMIN_KEY, maxRetries: 0 });
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          c.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `n${i}` }] }),
        ),
      );
      expect(answers.every((a) => a.choices[0]?.message.content?.includes('n'))).toBe(true);
      expect(sockets.length).toBeGreaterThan(0);
      const t0 = Date.now();
      expect(await gw.stop()).toBe(0);
      // The export timeout is 10 s and the batch timeout 30 s: the drain waits for the queue at most ~5 s.
      expect(Date.now() - t0).toBeLessThan(9_000);
    } finally {
      await gw.stop();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => blackHole.close(() => resolve()));
    }
  }, 30_000);
});
