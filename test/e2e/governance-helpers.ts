// Shared pieces of the governance end-to-end tests (governance-inference-*.test.ts): one real gateway (Postgres +
// Redis) with two openai keys and one key serving nothing pointed at one fake, groq at another fake; virtual
// keys created through the management API; raw-fetch inference calls; envelopes, logs and polling.
import OpenAI from 'openai';
import { expect } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import type { RecordedRequest } from '../fakes/server.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';

export type Json = Record<string, unknown>;

export const KEY_ONE = 'sk-one-aaaaaaaaaaaaaaaaaaaa';
export const KEY_TWO = 'sk-two-bbbbbbbbbbbbbbbbbbbb';
export const KEY_EMPTY = 'sk-empty-cccccccccccccccccc';
export const GROQ_KEY = 'gsk-dddddddddddddddddddd';
export const VK = '/api/governance/virtual-keys';
/** A model the price table does not know, on groq. */
export const UNPRICED_MODEL = 'unpriced-test-model';

export interface GovEnv {
  gw: TestGateway;
  openai: OpenAIFake;
  groq: OpenAIFake;
  close(): Promise<void>;
}

/** openai: k1, k2 (models ["*"]) and k-empty (models []: serves nothing); groq: g1 (models ["*"]). No retries. */
export async function startGovEnv(): Promise<GovEnv> {
  const openai = await createOpenAIFake().start();
  const groq = await createOpenAIFake().start();
  const gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [
            { id: 'k1', name: 'key-one', value: KEY_ONE, models: ['*'] },
            { id: 'k2', name: 'key-two', value: KEY_TWO, models: ['*'] },
            { id: 'k-empty', name: 'key-empty', value: KEY_EMPTY, models: [] },
          ],
        },
        groq: {
          network_config: { base_url: groq.url, max_retries: 0 },
          keys: [{ id: 'g1', name: 'groq-one', value: GROQ_KEY, models: ['*'] }],
        },
      },
    },
  });
  return {
    gw,
    openai,
    groq,
    async close() {
      await gw.close();
      await openai.stop();
      await groq.stop();
    },
  };
}

export async function json(res: Response): Promise<Json> {
  return (await res.json()) as Json; // every response these tests read is a JSON object
}

/** A provider config allowing everything on `provider`, with overrides. */
export function pc(provider: string, extra: Json = {}): Json {
  return { provider, allowed_models: ['*'], key_ids: ['*'], weight: 1, ...extra };
}

let seq = 0;

/** Creates a virtual key (201 expected); returns its id, its value (shown once) and the created view. */
export async function createVk(gw: TestGateway, body: Json): Promise<{ id: string; value: string; view: Json }> {
  const res = await gw.admin(VK, { method: 'POST', body: { name: `vk-${++seq}-${Date.now()}`, ...body } });
  const view = await json(res);
  // The reference answers creates with 200 (this project answered 201 before).
  expect([200, 201], JSON.stringify(view)).toContain(res.status);
  return { id: String(view['id']), value: String(view['value']), view };
}

export async function adminJson(gw: TestGateway, path: string, method = 'GET', body?: unknown): Promise<Json> {
  const res = await gw.admin(path, body === undefined ? { method } : { method, body });
  const out = await json(res);
  expect(res.status, `${method} ${path}: ${JSON.stringify(out)}`).toBeLessThan(300);
  return out;
}

export interface Call {
  status: number;
  headers: Headers;
  body: Json;
}

export const ASK = [{ role: 'user', content: 'hello there' }];

/** POST /v1/chat/completions with exactly these headers (no Authorization unless given). */
export async function chat(gw: TestGateway, headers: Record<string, string>, body: Json = {}): Promise<Call> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: ASK, ...body }),
  });
  return { status: res.status, headers: res.headers, body: await json(res) };
}

/** `Authorization: Bearer <value>`. */
export function bearer(value: string): Record<string, string> {
  return { authorization: `Bearer ${value}` };
}

export function sdk(gw: TestGateway, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
}

/** Asserts the gateway error envelope with this status and code; returns the message. */
export function expectEnvelope(call: Call, status: number, code: string): string {
  expect(call.status, JSON.stringify(call.body)).toBe(status);
  const b = call.body;
  expect(b['status_code']).toBe(status);
  expect(b['is_gateway_error']).toBe(true);
  expect(typeof b['event_id']).toBe('string');
  const err = b['error'] as Json; // the envelope's error object
  expect(err['code']).toBe(code);
  expect(err['event_id']).toBe(b['event_id']);
  expect(typeof err['type']).toBe('string');
  return String(err['message']);
}

/** A management-API response in the gateway envelope (expectEnvelope); returns its `error` object. */
export async function expectApiError(res: Response, status: number, code: string): Promise<Json & { message: string }> {
  const body = await json(res);
  const message = expectEnvelope({ status: res.status, headers: res.headers, body }, status, code);
  return { ...(body['error'] as Json), message }; // checked by expectEnvelope
}

/**
 * A governance environment with a global price for openai/gpt-4o-mini (input free, 0.0025 USD per output
 * token), and the completion tokens, nano-USD cost and request id of one request made with a probe key.
 */
export async function startPricedEnv(): Promise<{
  env: GovEnv;
  completion: number;
  cost: number;
  probeRequestId: string | null;
}> {
  const env = await startGovEnv();
  await adminJson(env.gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0,
    output_cost_per_token: 0.0025,
  });
  const probe = await createVk(env.gw, { provider_configs: [pc('openai')] });
  const r = await chat(env.gw, bearer(probe.value));
  const completion = Number((r.body['usage'] as Json)['completion_tokens']); // OpenAI usage block
  expect(completion).toBeGreaterThan(0);
  return { env, completion, cost: completion * 2_500_000, probeRequestId: r.headers.get('x-gateway-request-id') };
}

/** Polls `read` until `ok` holds (logs and settlements are written after the response left). */
export async function waitFor<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The request log of an `x-gateway-request-id` (waits until it is written). */
export async function logOf(gw: TestGateway, id: string | null | undefined): Promise<Json> {
  expect(id).toBeTruthy();
  const res = await waitFor(
    () => gw.admin(`/api/logs/${id}`),
    (r) => r.status === 200,
  );
  expect(res.status).toBe(200);
  return json(res);
}

/** The provider key the upstream was called with. */
export function keyUsed(req: RecordedRequest): string {
  return String(req.headers['authorization']).replace('Bearer ', '');
}

/** Waits, if needed, so that the current epoch-aligned window of `windowMs` has at least `marginMs` left. */
export async function freshWindow(windowMs: number, marginMs = 10_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

/** The USD amount of a nano-USD integer, as the API shows it. */
export function usd(nano: number): number {
  return nano / 1e9;
}

/** Every budget of a virtual key's detail view (its own, then its provider configs'). */
export function budgetsOf(view: Json): Json[] {
  const own = (view['budgets'] as Json[] | undefined) ?? []; // view shape
  const pcs = (view['provider_configs'] as { budgets?: Json[] }[] | undefined) ?? []; // view shape
  return [...own, ...pcs.flatMap((p) => p.budgets ?? [])];
}
