// Shared pieces of the tests of files and containers named inside inference requests: one fake provider base URL
// in front of several fakes (files beside chat), and the check that a refusal is a 404 that reached no upstream,
// wrote one log row, and left the caller's budget as it was.
import { expect } from 'vitest';
import { FakeServer, type Handler } from '../fakes/server.ts';
import type { TestGateway } from '../harness/gateway.ts';
import { adminJson, budgetsOf, logOf, VK } from './governance-helpers.ts';

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/** A provider's one base URL that forwards each request, by path, to the fake serving it. */
export function router(target: (path: string) => string): FakeServer {
  const forward: Handler = async (req, res) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !HOP_BY_HOP.has(k)) headers[k] = v;
    const hasBody = req.method !== 'GET' && req.method !== 'DELETE';
    const to = target(req.path);
    const r = await fetch(`${to}${req.url}`, {
      method: req.method,
      headers,
      ...(hasBody ? { body: new Uint8Array(req.body) } : {}),
    });
    const out: Record<string, string> = {};
    // A URL the fake answers with (Gemini's upload session) names this base URL, as the provider's own would.
    const self = `http://${req.headers.host}`;
    r.headers.forEach((v, k) => {
      if (!HOP_BY_HOP.has(k) && k !== 'content-encoding') out[k] = v.replaceAll(to, self);
    });
    const body = Buffer.from(await r.arrayBuffer());
    res.writeHead(r.status, out);
    res.end(body);
  };
  return new FakeServer(['GET', 'POST', 'DELETE'].map((method) => ({ method, path: /.*/, handler: forward })));
}

/** How a client library reports a failed call: its status, the gateway's request id and the message. */
export interface Failure {
  status: number;
  requestId: string | null;
  message: string;
}

/** The failure of a call that must fail (the test fails when it succeeds). */
export async function failureOf(call: Promise<unknown>, read: (err: unknown) => Failure | undefined): Promise<Failure> {
  try {
    await call;
  } catch (err) {
    const f = read(err);
    if (f) return f;
    throw err;
  }
  throw new Error('expected the request to fail');
}

/** An SDK error with `status` and `headers` (the openai and Anthropic SDKs' APIError). */
export function sdkFailure(err: unknown): Failure | undefined {
  if (!(err instanceof Error) || !('status' in err) || typeof err.status !== 'number') return undefined;
  const headers = 'headers' in err && err.headers instanceof Headers ? err.headers : undefined;
  return { status: err.status, requestId: headers?.get('x-gateway-request-id') ?? null, message: err.message };
}

/** The USD a virtual key's first budget has used. */
export async function usedBudget(gw: TestGateway, vkId: string): Promise<unknown> {
  return budgetsOf(await adminJson(gw, `${VK}/${vkId}`))[0]?.['current_usage'];
}

/**
 * A refusal of a resource the caller does not own: 404 naming it, nothing reached any of `upstreams`, one error
 * row logged for the caller with no cost, and the caller's budget as it was.
 */
export async function expectRefused(
  gw: TestGateway,
  vkId: string,
  upstreams: FakeServer[],
  call: () => Promise<Failure>,
  message: string,
): Promise<void> {
  const before = upstreams.map((u) => u.requests.length);
  const budget = await usedBudget(gw, vkId);
  const f = await call();
  expect(f.status, f.message).toBe(404);
  expect(f.message).toContain(message);
  expect(upstreams.map((u) => u.requests.length)).toEqual(before);
  const row = await logOf(gw, f.requestId);
  expect(row).toMatchObject({ status: 'error', status_code: 404, virtual_key_id: vkId });
  expect(row['cost_nano'] ?? 0).toBe(0);
  expect(await usedBudget(gw, vkId)).toBe(budget);
}
