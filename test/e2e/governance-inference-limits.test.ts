// Rate limits of virtual keys, provider configs and teams on a real gateway (Postgres + Redis, shared counters)
// with fake upstreams: x-ratelimit-* headers counting down, 429 with retry-after before the upstream is
// called, a team's limit shared by its keys, and token limits that deny once the window's tokens are used.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  adminJson,
  bearer,
  type Call,
  chat,
  createVk,
  expectEnvelope,
  freshWindow,
  type GovEnv,
  type Json,
  logOf,
  pc,
  startGovEnv,
  waitFor,
} from './governance-helpers.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
let env: GovEnv;

beforeAll(async () => {
  env = await startGovEnv();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => {
  env.openai.reset();
  env.groq.reset();
});

function rateHeaders(call: Call): [string | null, string | null, number] {
  return [
    call.headers.get('x-ratelimit-limit'),
    call.headers.get('x-ratelimit-remaining'),
    Number(call.headers.get('x-ratelimit-reset')),
  ];
}

/** A 429 `rate_limited` in the envelope with retry-after and x-ratelimit-* headers; returns the message. */
function expectLimited(call: Call, limit: number, windowS: number): string {
  const message = expectEnvelope(call, 429, 'rate_limited');
  expect((call.body['error'] as Json)['type']).toBe('rate_limit_error'); // the envelope's error object
  const retry = Number(call.headers.get('retry-after'));
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(windowS);
  expect(call.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(call.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(Number(call.headers.get('x-ratelimit-reset'))).toBe(retry);
  return message;
}

/** GET /api/governance/rate-limits entry of an owner. */
async function rateEntry(ownerId: string): Promise<Json | undefined> {
  const list = (await adminJson(env.gw, '/api/governance/rate-limits'))['rate_limits'] as Json[]; // list envelope
  return list.find((e) => e['owner_id'] === ownerId);
}

describe('request rate limits', () => {
  it('a key allows 3 requests a minute, counting down in x-ratelimit-*; the 4th is 429 before the upstream', async () => {
    await freshWindow(MINUTE);
    const key = await createVk(env.gw, {
      rate_limit: { request_max_limit: 3, request_reset_duration: '1m' },
      provider_configs: [pc('openai')],
    });
    const seen: [string | null, string | null][] = [];
    for (let i = 0; i < 3; i++) {
      const r = await chat(env.gw, bearer(key.value));
      expect(r.status).toBe(200);
      const [limit, remaining, reset] = rateHeaders(r);
      seen.push([limit, remaining]);
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(60);
    }
    expect(seen).toEqual([
      ['3', '2'],
      ['3', '1'],
      ['3', '0'],
    ]);
    const denied = await chat(env.gw, bearer(key.value));
    expect(expectLimited(denied, 3, 60)).toContain('request rate limit');
    expect(env.openai.requests).toHaveLength(3);
    const log = await logOf(env.gw, denied.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status: 'error', status_code: 429, virtual_key_id: key.id });
    // The listing shows the window's count.
    expect(await rateEntry(key.id)).toMatchObject({
      owner_kind: 'virtual_key',
      request_max_limit: 3,
      request_reset_duration: '1m',
      request_current_usage: 3,
    });
  });

  it('a stream carries the x-ratelimit-* headers too, and counts', async () => {
    await freshWindow(MINUTE);
    const key = await createVk(env.gw, {
      rate_limit: { request_max_limit: 1, request_reset_duration: '1m' },
      provider_configs: [pc('openai')],
    });
    const res = await fetch(`${env.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(key.value) },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-ratelimit-limit')).toBe('1');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await res.text()).toContain('[DONE]');
    expectLimited(await chat(env.gw, bearer(key.value), { stream: true }), 1, 60);
    expect(env.openai.requests).toHaveLength(1);
  });

  it('a provider-config limit counts only requests to that provider', async () => {
    await freshWindow(MINUTE);
    const key = await createVk(env.gw, {
      provider_configs: [
        pc('openai', { rate_limit: { request_max_limit: 2, request_reset_duration: '1m' } }),
        pc('groq', { weight: null }),
      ],
    });
    for (let i = 0; i < 2; i++) {
      const r = await chat(env.gw, bearer(key.value));
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(1 - i));
    }
    expect(expectLimited(await chat(env.gw, bearer(key.value)), 2, 60)).toContain('rate limit');
    expect(env.openai.requests).toHaveLength(2);
    for (let i = 0; i < 3; i++) {
      expect((await chat(env.gw, bearer(key.value), { model: 'groq/llama-3.3-70b' })).status).toBe(200);
    }
    expect(env.groq.requests).toHaveLength(3);
  });

  it("a team's limit is shared by the team's keys", async () => {
    await freshWindow(MINUTE);
    const team = await adminJson(env.gw, '/api/governance/teams', 'POST', {
      name: `limited-team-${Date.now()}`,
      rate_limit: { request_max_limit: 3, request_reset_duration: '1m' },
    });
    const a = await createVk(env.gw, { team_id: team['id'], provider_configs: [pc('openai')] });
    const b = await createVk(env.gw, { team_id: team['id'], provider_configs: [pc('openai')] });
    const other = await createVk(env.gw, { provider_configs: [pc('openai')] });
    const remaining: (string | null)[] = [];
    for (const k of [a, b, a]) {
      const r = await chat(env.gw, bearer(k.value));
      expect(r.status).toBe(200);
      remaining.push(r.headers.get('x-ratelimit-remaining'));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    expect(expectLimited(await chat(env.gw, bearer(b.value)), 3, 60)).toContain('team');
    expect(expectLimited(await chat(env.gw, bearer(a.value)), 3, 60)).toContain('team');
    expect(env.openai.requests).toHaveLength(3);
    // A key outside the team is not limited by it.
    expect((await chat(env.gw, bearer(other.value))).status).toBe(200);
    const log = await logOf(env.gw, (await chat(env.gw, bearer(other.value))).headers.get('x-gateway-request-id'));
    expect(log['team_id']).toBeNull();
  });
});

describe('token rate limits', () => {
  it('deny once the tokens of the window are used', async () => {
    await freshWindow(HOUR);
    // Learn how many tokens one request uses (the fake is deterministic).
    const probe = await createVk(env.gw, { provider_configs: [pc('openai')] });
    const first = await chat(env.gw, bearer(probe.value));
    const perRequest = Number((first.body['usage'] as Json)['total_tokens']); // OpenAI usage block
    expect(perRequest).toBeGreaterThan(0);

    const key = await createVk(env.gw, {
      rate_limit: { token_max_limit: 2 * perRequest, token_reset_duration: '1h' },
      provider_configs: [pc('openai')],
    });
    expect((await chat(env.gw, bearer(key.value))).status).toBe(200);
    // The tokens are added when the response is settled, just after it left.
    const after1 = await waitFor(
      () => rateEntry(key.id),
      (e) => e?.['token_current_usage'] === perRequest,
    );
    expect(after1).toMatchObject({ token_max_limit: 2 * perRequest, token_current_usage: perRequest });
    expect((await chat(env.gw, bearer(key.value))).status).toBe(200);
    await waitFor(
      () => rateEntry(key.id),
      (e) => e?.['token_current_usage'] === 2 * perRequest,
    );
    const upstreamBefore = env.openai.requests.length;
    const denied = await chat(env.gw, bearer(key.value));
    expect(expectEnvelope(denied, 429, 'rate_limited')).toContain('token rate limit');
    expect(Number(denied.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(env.openai.requests).toHaveLength(upstreamBefore);
  });

  it('a team token limit counts the tokens of all its keys', async () => {
    await freshWindow(HOUR);
    const probe = await createVk(env.gw, { provider_configs: [pc('openai')] });
    const perRequest = Number(((await chat(env.gw, bearer(probe.value))).body['usage'] as Json)['total_tokens']); // usage block
    const team = await adminJson(env.gw, '/api/governance/teams', 'POST', {
      name: `token-team-${Date.now()}`,
      rate_limit: { token_max_limit: perRequest, token_reset_duration: '1h' },
    });
    const a = await createVk(env.gw, { team_id: team['id'], provider_configs: [pc('openai')] });
    const b = await createVk(env.gw, { team_id: team['id'], provider_configs: [pc('openai')] });
    expect((await chat(env.gw, bearer(a.value))).status).toBe(200);
    await waitFor(
      () => rateEntry(String(team['id'])),
      (e) => e?.['token_current_usage'] === perRequest,
    );
    expect(expectEnvelope(await chat(env.gw, bearer(b.value)), 429, 'rate_limited')).toContain('team');
  });
});
