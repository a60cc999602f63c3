// Client settings logging_headers and required_headers through two real gateways (pods) on one Postgres + Redis,
// driven by the official openai and Anthropic SDKs: header values in the request log's metadata (configured headers
// and x-gateway-lh-*), credentials never captured nor configurable, required headers refused with 400 in the
// caller's format before anything is sent upstream, management and probes exempt, and a change made on one pod
// applied on the other without a restart.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';
import type { Json } from './governance-helpers.ts';
import { atFake } from './providers-helpers.ts';

const ANTHROPIC_KEY = 'sk-ant-lh-aaaaaaaaaaaaaaaaaaaa';
let openai: OpenAIFake;
let anthropic: AnthropicFake;
let gw: TestGateway;
let pod2: TestGateway;

beforeAll(async () => {
  openai = await createOpenAIFake().start();
  anthropic = await createAnthropicFake({ apiKey: ANTHROPIC_KEY }).start();
  const config = {
    providers: {
      openai: atFake(openai.url, { id: 'oa', name: 'openai-main', value: 'sk-openai-lh', models: ['*'] }),
      anthropic: atFake(anthropic.url, { id: 'an', name: 'anthropic-main', value: ANTHROPIC_KEY, models: ['*'] }),
    },
  };
  gw = await startTestGateway({ config });
  pod2 = await startTestGateway({
    config,
    ...(gw.databaseUrl ? { databaseUrl: gw.databaseUrl } : {}),
    ...(gw.redisKeyPrefix ? { redisKeyPrefix: gw.redisKeyPrefix } : {}),
  });
});
afterAll(async () => {
  await pod2?.close();
  await gw?.close();
  await openai?.stop();
  await anthropic?.stop();
});
afterEach(async () => {
  expect((await putClient(gw, {})).status).toBe(200);
});

async function putClient(on: TestGateway, client_config: Record<string, unknown>) {
  const res = await on.admin('/api/config', { method: 'PUT', body: { client_config } });
  return { status: res.status, body: (await res.json()) as Json };
}

const sdk = (on: TestGateway, headers: Record<string, string> = {}) =>
  new OpenAI({ baseURL: `${on.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0, defaultHeaders: headers });

/** One chat completion; the request-log row once stored. */
async function loggedChat(on: TestGateway, headers: Record<string, string>): Promise<Json> {
  const { response } = await sdk(on, headers)
    .chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();
  const id = response.headers.get('x-gateway-request-id');
  let row: Json | undefined;
  await waitFor(
    async () => {
      const res = await on.admin(`/api/logs/${id}`);
      if (res.status === 200) row = (await res.json()) as Json;
      return row !== undefined;
    },
    10_000,
    `log row ${id}`,
  );
  return row as Json;
}

describe('logging_headers: request log metadata', () => {
  it('captures configured headers (case-insensitive) and x-gateway-lh-* labels, never the credential', async () => {
    const put = await putClient(gw, { logging_headers: ['X-Team', 'x-tenant'] });
    expect(put.status).toBe(200);
    expect((put.body['client_config'] as Json)['logging_headers']).toEqual(['x-team', 'x-tenant']);
    const row = await loggedChat(gw, { 'X-Team': 'blue', 'x-gateway-lh-run': 'r-42', 'x-other': 'not logged' });
    expect(row['metadata']).toEqual({ 'x-team': 'blue', run: 'r-42' });
    expect(JSON.stringify(row)).not.toContain(INFERENCE_TOKEN);
  });

  it('x-gateway-lh-* is captured with nothing configured; a request with neither has metadata null', async () => {
    expect((await loggedChat(gw, { 'x-gateway-lh-user': 'ada' }))['metadata']).toEqual({ user: 'ada' });
    expect((await loggedChat(gw, {}))['metadata']).toBeNull();
    const listed = (await (await gw.admin('/api/logs?limit=5')).json()) as { logs: Json[] };
    expect(listed.logs.some((l) => JSON.stringify(l['metadata']) === '{"user":"ada"}')).toBe(true);
  });

  it('a credential header in logging_headers is refused with 400 naming it; nothing is stored', async () => {
    expect((await putClient(gw, { logging_headers: ['x-team'] })).status).toBe(200);
    for (const name of ['Authorization', 'x-api-key', 'x-gateway-vk', 'cookie']) {
      const r = await putClient(gw, { logging_headers: ['x-tenant', name] });
      expect(r.status, name).toBe(400);
      expect(JSON.stringify(r.body)).toContain(name);
    }
    for (const bad of [['bad name'], 'x-team', [42], Array.from({ length: 65 }, (_, i) => `x-h${i}`)]) {
      expect((await putClient(gw, { required_headers: bad })).status, JSON.stringify(bad)).toBe(400);
    }
    const now = (await (await gw.admin('/api/config')).json()) as { client_config: Json };
    expect(now.client_config['logging_headers']).toEqual(['x-team']);
    expect(now.client_config['required_headers']).toEqual([]);
  });
});

describe('required_headers', () => {
  it('set on one pod, applied on the other without a restart: missing → 400 (openai SDK), nothing sent upstream', async () => {
    expect((await putClient(gw, { required_headers: ['X-Tenant'] })).status).toBe(200);
    const ask = (headers: Record<string, string>) =>
      sdk(pod2, headers).chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
      });
    let refused: unknown;
    await waitFor(
      async () => {
        refused = await ask({}).then(
          () => undefined,
          (e: unknown) => e,
        );
        return refused !== undefined;
      },
      10_000,
      'the second pod to refuse',
    );
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const err = refused as InstanceType<typeof OpenAI.BadRequestError>;
    expect(err.status).toBe(400);
    expect(err.message).toContain('x-tenant');
    const sent = openai.requests.length;
    await expect(ask({})).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    expect(openai.requests.length).toBe(sent);
    // Case-insensitive: any spelling of the name counts.
    expect((await ask({ 'X-TENANT': 'acme' })).choices.length).toBe(1);
  });

  it('/anthropic: missing → 400 in Anthropic’s error shape (Anthropic SDK); present → 200', async () => {
    expect((await putClient(gw, { required_headers: ['x-tenant'] })).status).toBe(200);
    const client = (headers: Record<string, string>) =>
      new Anthropic({
        baseURL: `${gw.url}/anthropic`,
        apiKey: INFERENCE_TOKEN,
        maxRetries: 0,
        defaultHeaders: headers,
      });
    const ask = (c: Anthropic) =>
      c.messages.create({
        model: 'anthropic/claude-haiku-4-5-20251001',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
      });
    const sent = anthropic.requests.length;
    const err = await ask(client({})).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('x-tenant') },
    });
    expect(anthropic.requests.length).toBe(sent);
    expect((await ask(client({ 'x-tenant': 'acme' }))).type).toBe('message');
  });

  it('management, the quota self-service and the probes are exempt', async () => {
    expect((await putClient(gw, { required_headers: ['x-tenant'] })).status).toBe(200);
    expect((await gw.admin('/api/config')).status).toBe(200);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
    // A refusal of an unauthenticated caller stays 401: the setting is not revealed before authentication.
    const anon = await fetch(`${gw.url}/v1/models`);
    expect(anon.status).toBe(401);
  });
});
