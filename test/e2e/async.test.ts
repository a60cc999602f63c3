// Async inference (`/v1/async/*`) on real Postgres and Redis: submit and poll through the official openai SDK's
// raw requests, the result in the synchronous route's shape, validation refusals that store nothing, jobs visible
// only to their submitter (and the admin), cancel while queued, the result TTL, the per-key bound, and the
// budget charged once under the job's id.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';

interface Job {
  id: string;
  status: string;
  created_at: string;
  completed_at?: string;
  expires_at?: string;
  status_code?: number;
  result?: Record<string, unknown>;
  error?: { status_code: number; error: { code: string; message: string } };
}

let fake: OpenAIFake;
/** Runs jobs (default settings, a fast sweep). */
let gw: TestGateway;
/** Its own database and no workers: jobs stay queued. */
let idle: TestGateway;
const OUTPUT_PRICE = 0.001;

beforeAll(async () => {
  fake = await createOpenAIFake().start();
  [gw, idle] = await Promise.all([
    startTestGateway({ env: { GATEWAY_ASYNC_SWEEP_MS: '200', GATEWAY_ASYNC_POLL_MS: '20' } }),
    startTestGateway({ env: { GATEWAY_ASYNC_WORKERS: '0', GATEWAY_ASYNC_MAX_QUEUED_PER_KEY: '2' } }),
  ]);
  for (const g of [gw, idle]) {
    await g.admin('/api/providers', {
      method: 'POST',
      body: { provider: 'openai', network_config: { base_url: fake.url, max_retries: 0 } },
    });
    await g.admin('/api/providers/openai/keys', {
      method: 'POST',
      body: { name: 'k', value: 'sk-fake-0123456789abcdef', models: ['*'] },
    });
  }
  await gw.admin('/api/governance/pricing-overrides', {
    method: 'POST',
    body: {
      scope: 'global',
      provider: 'openai',
      model: 'gpt-4o-mini',
      input_cost_per_token: 0,
      output_cost_per_token: OUTPUT_PRICE,
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await idle?.close();
  await fake?.stop();
});

function client(g: TestGateway, key = INFERENCE_TOKEN): OpenAI {
  return new OpenAI({ baseURL: `${g.url}/v1`, apiKey: key, maxRetries: 0 });
}

async function virtualKey(g: TestGateway, name: string, extra: Record<string, unknown> = {}) {
  const res = await g.admin('/api/governance/virtual-keys', {
    method: 'POST',
    body: {
      name,
      provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }],
      ...extra,
    },
  });
  expect(res.status).toBeLessThan(300);
  const vk = (await res.json()) as { id: string; value: string };
  return { id: vk.id, value: vk.value };
}

async function poll(c: OpenAI, path: string, ms = 10_000): Promise<Job> {
  const t0 = Date.now();
  for (;;) {
    const job = await c.get<Job>(path);
    if (job.status !== 'queued' && job.status !== 'processing') return job;
    if (Date.now() - t0 > ms) throw new Error(`job still ${job.status} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function jobCount(g: TestGateway): Promise<number> {
  const r = await g.rt.state.db.query<{ n: number }>('SELECT count(*)::int AS n FROM async_jobs');
  return r.rows[0]?.n ?? 0;
}

const chatBody = (text: string) => ({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: text }] });

describe('submit and poll', () => {
  it('answers 202 with a queued job at once, then the chat completion in the synchronous shape', async () => {
    const c = client(gw);
    const { data, response } = await c
      .post<Job>('/async/chat/completions', { body: chatBody('async hello') })
      .withResponse();
    expect(response.status).toBe(202);
    expect(data.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(['queued', 'processing', 'completed']).toContain(data.status);
    expect(Date.parse(data.created_at)).toBeGreaterThan(0);

    const job = await poll(c, `/async/chat/completions/${data.id}`);
    expect(job.status).toBe('completed');
    expect(job.status_code).toBe(200);
    expect(Date.parse(job.expires_at ?? '') - Date.parse(job.completed_at ?? '')).toBe(3600_000);
    const result = job.result as {
      object: string;
      choices: { message: { content: string } }[];
      extra_fields: Record<string, unknown>;
    };
    expect(result.object).toBe('chat.completion');
    expect(result.choices[0]?.message.content).toBe('Echo from gpt-4o-mini: async hello');
    expect(result.extra_fields).toMatchObject({ provider: 'openai', request_type: 'chat_completion' });
    // Read again: 200 with the same result; the fake was called once.
    const { response: again } = await c.get(`/async/chat/completions/${data.id}`).withResponse();
    expect(again.status).toBe(200);
    expect(fake.requests.filter((r) => JSON.stringify(r.json).includes('async hello'))).toHaveLength(1);
  });

  it('runs embeddings, and a failure becomes a failed job with the error envelope', async () => {
    const c = client(gw);
    const emb = await c.post<Job>('/async/embeddings', {
      body: { model: 'openai/text-embedding-3-small', input: 'vector me' },
    });
    const done = await poll(c, `/async/embeddings/${emb.id}`);
    expect(done.status).toBe('completed');
    expect((done.result as { data: { embedding: number[] }[] }).data[0]?.embedding).toHaveLength(8);

    // A provider that is not configured: accepted (a fallback or a later config could serve it), then failed.
    const unknown = await c.post<Job>('/async/chat/completions', {
      body: { model: 'nosuch/gpt', messages: [{ role: 'user', content: 'x' }] },
    });
    const failed = await poll(c, `/async/chat/completions/${unknown.id}`);
    expect(failed.status).toBe('failed');
    expect(failed.status_code).toBeGreaterThanOrEqual(400);
    expect(failed.error?.status_code).toBe(failed.status_code);
    expect(failed.error?.error.message).toBeTruthy();
  });
});

describe('bad input', () => {
  it('refuses an invalid body, streaming and a bad TTL header with 400, storing no job', async () => {
    const before = await jobCount(gw);
    const c = client(gw);
    await expect(c.post('/async/chat/completions', { body: { model: 'openai/gpt-4o-mini' } })).rejects.toMatchObject({
      status: 400,
    });
    await expect(c.post('/async/chat/completions', { body: { ...chatBody('s'), stream: true } })).rejects.toMatchObject(
      { status: 400, param: 'stream' },
    );
    await expect(
      c.post('/async/chat/completions', {
        body: chatBody('ttl'),
        headers: { 'x-gateway-async-job-result-ttl': 'soon' },
      }),
    ).rejects.toMatchObject({ status: 400, param: 'x-gateway-async-job-result-ttl' });
    await expect(
      c.post('/async/embeddings', { body: { model: 'openai/text-embedding-3-small' } }),
    ).rejects.toMatchObject({ status: 400 });
    expect(await jobCount(gw)).toBe(before);
  });

  it('refuses a model the virtual key may not use (403) before storing a job', async () => {
    const vk = await virtualKey(gw, 'only-4-1', {
      provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4.1'], key_ids: ['*'], weight: 1 }],
    });
    const before = await jobCount(gw);
    await expect(client(gw, vk.value).post('/async/chat/completions', { body: chatBody('no') })).rejects.toMatchObject({
      status: 403,
    });
    expect(await jobCount(gw)).toBe(before);
  });
});

describe('who sees a job', () => {
  it('another virtual key gets 404 reading or cancelling it; the submitter and the admin read it', async () => {
    const owner = await virtualKey(gw, 'owner');
    const other = await virtualKey(gw, 'other');
    const job = await client(gw, owner.value).post<Job>('/async/chat/completions', { body: chatBody('mine') });
    const path = `/async/chat/completions/${job.id}`;
    await expect(client(gw, other.value).get(path)).rejects.toMatchObject({ status: 404 });
    await expect(client(gw, other.value).delete(path)).rejects.toMatchObject({ status: 404 });
    // The gateway token is another caller too.
    await expect(client(gw).get(path)).rejects.toMatchObject({ status: 404 });
    expect((await poll(client(gw, owner.value), path)).status).toBe('completed');
    const admin = await gw.admin(`/v1${path}`);
    expect(admin.status).toBe(200);
    // Not a job id at all, or an unknown one: not found.
    await expect(client(gw).get('/async/chat/completions/not-a-job')).rejects.toMatchObject({ status: 404 });
    await expect(client(gw).get(`/async/chat/completions/${crypto.randomUUID()}`)).rejects.toMatchObject({
      status: 404,
    });
    // The job read at another operation's path is not found either.
    await expect(client(gw, owner.value).get(`/async/embeddings/${job.id}`)).rejects.toMatchObject({ status: 404 });
  });
});

describe('cancel, bounds and TTL', () => {
  it('cancels a queued job (200, cancelled); a second cancel is 409; the job reads as cancelled', async () => {
    const c = client(idle);
    const job = await c.post<Job>('/async/chat/completions', { body: chatBody('cancel me') });
    expect(job.status).toBe('queued');
    const path = `/async/chat/completions/${job.id}`;
    const cancelled = await c.delete<Job>(path);
    expect(cancelled.status).toBe('cancelled');
    await expect(c.delete(path)).rejects.toMatchObject({ status: 409 });
    const { data, response } = await c.get<Job>(path).withResponse();
    expect(response.status).toBe(200);
    expect(data.status).toBe('cancelled');
    expect(data.result).toBeUndefined();
  });

  it('stores what the worker needs but no credential', async () => {
    const vk = await virtualKey(idle, 'secretive');
    const job = await client(idle, vk.value).post<Job>('/async/chat/completions', {
      body: chatBody('keep my secret'),
      headers: { 'x-upstream-token': 'tok-should-not-be-stored', 'x-gateway-fallbacks': 'openai/gpt-4.1' },
    });
    const r = await idle.rt.state.db.query<{ request: string; owner: string }>(
      'SELECT request::text AS request, owner FROM async_jobs WHERE id = $1',
      [job.id],
    );
    const stored = r.rows[0]!;
    expect(stored.owner).toBe(`vk:${vk.id}`);
    expect(stored.request).toContain('keep my secret');
    expect(stored.request).toContain('x-gateway-fallbacks');
    expect(stored.request).not.toContain(vk.value);
    expect(stored.request).not.toContain('tok-should-not-be-stored');
    expect(stored.request.toLowerCase()).not.toContain('authorization');
  });

  it('bounds the jobs one key may have queued (429 past GATEWAY_ASYNC_MAX_QUEUED_PER_KEY)', async () => {
    const vk = await virtualKey(idle, 'bounded');
    const c = client(idle, vk.value);
    await c.post('/async/chat/completions', { body: chatBody('1') });
    await c.post('/async/chat/completions', { body: chatBody('2') });
    await expect(c.post('/async/chat/completions', { body: chatBody('3') })).rejects.toMatchObject({ status: 429 });
    // Another key is not bounded by this one's jobs.
    const other = await virtualKey(idle, 'unbounded');
    const { response } = await client(idle, other.value)
      .post('/async/chat/completions', { body: chatBody('4') })
      .withResponse();
    expect(response.status).toBe(202);
  });

  it('keeps a result for the TTL the header names, then it is gone (404) and swept from Postgres', async () => {
    const c = client(gw);
    const job = await c.post<Job>('/async/chat/completions', {
      body: chatBody('short lived'),
      headers: { 'x-gateway-async-job-result-ttl': '1' },
    });
    const path = `/async/chat/completions/${job.id}`;
    const done = await poll(c, path);
    expect(Date.parse(done.expires_at ?? '') - Date.parse(done.completed_at ?? '')).toBe(1000);
    await new Promise((r) => setTimeout(r, 1200));
    await expect(c.get(path)).rejects.toMatchObject({ status: 404 });
    const t0 = Date.now();
    for (;;) {
      const r = await gw.rt.state.db.query('SELECT 1 FROM async_jobs WHERE id = $1', [job.id]);
      if (r.rows.length === 0) break;
      if (Date.now() - t0 > 5000) throw new Error('expired job not swept');
      await new Promise((res) => setTimeout(res, 100));
    }
  });
});

describe('rate limits', () => {
  it('counts a job against the request limit once, at submission; its run is not refused by it', async () => {
    const vk = await virtualKey(gw, 'one-per-minute', {
      rate_limit: { request_max_limit: 1, request_reset_duration: '1m' },
    });
    const c = client(gw, vk.value);
    const job = await c.post<Job>('/async/chat/completions', { body: chatBody('limited') });
    await expect(c.post('/async/chat/completions', { body: chatBody('over') })).rejects.toMatchObject({ status: 429 });
    const done = await poll(c, `/async/chat/completions/${job.id}`);
    expect(done.status).toBe('completed');
  });
});

describe('budgets', () => {
  it('reserves at submission and charges the job once under its id', async () => {
    const vk = await virtualKey(gw, 'budgeted', { budgets: [{ max_limit: 10, reset_duration: '1d' }] });
    const c = client(gw, vk.value);
    const job = await c.post<Job>('/async/chat/completions', { body: chatBody('charge me once') });
    const done = await poll(c, `/async/chat/completions/${job.id}`);
    const usage = (done.result as { usage: { completion_tokens: number } }).usage;
    const cost = usage.completion_tokens * OUTPUT_PRICE;
    // The charge is committed in the background right after the answer (batched): waited for.
    const t0 = Date.now();
    let charges: number[] = [];
    while (charges.length === 0 && Date.now() - t0 < 5000) {
      await new Promise((r) => setTimeout(r, 25));
      const r = await gw.rt.state.db.query<{ cost_nano: string }>(
        'SELECT cost_nano FROM usage_charges WHERE request_id = $1',
        [job.id],
      );
      charges = r.rows.map((row) => Number(row.cost_nano));
    }
    expect(charges).toEqual([Math.round(cost * 1e9)]);
    const detail = (await (await gw.admin(`/api/governance/virtual-keys/${vk.id}`)).json()) as {
      budgets: { current_usage: number }[];
    };
    expect(detail.budgets[0]?.current_usage).toBeCloseTo(cost, 9);
  });

  it('refuses a job whose budget is spent (402) before storing it', async () => {
    const vk = await virtualKey(gw, 'broke', { budgets: [{ max_limit: 0.000001, reset_duration: '1d' }] });
    const before = await jobCount(gw);
    await expect(
      client(gw, vk.value).post('/async/chat/completions', { body: { ...chatBody('too dear'), max_tokens: 1000 } }),
    ).rejects.toMatchObject({ status: 402 });
    expect(await jobCount(gw)).toBe(before);
  });
});
