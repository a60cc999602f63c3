// An accepted async job survives the loss of the pod running it: gateway processes on one Postgres and one Redis;
// the pod working on a job is SIGKILLed while the (slow) upstream call is in flight; another pod claims the job's
// stream entry once it has been idle past GATEWAY_ASYNC_CLAIM_IDLE_MS, runs it to completion, and the budget is
// charged exactly once (one usage_charges row under the job id, the key's usage equal to one answer's cost).
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { ADMIN_KEY, adminCall } from '../harness/gateway.ts';
import { type GatewayProcess, startGatewayProcess } from '../harness/gateway-process.ts';

interface Job {
  id: string;
  status: string;
  result?: { usage: { completion_tokens: number }; choices: { message: { content: string } }[] };
}

const OUTPUT_PRICE = 0.001;
let fake: OpenAIFake;
let env: Record<string, string>;
let db: pg.Client;
const pods: GatewayProcess[] = [];

beforeAll(async () => {
  fake = await createOpenAIFake().start();
  const databaseUrl = await createTestDatabase();
  env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: inject('redisUrl'),
    GATEWAY_REDIS_PREFIX: testKeyPrefix(),
    GATEWAY_ADMIN_API_KEY: ADMIN_KEY,
    GATEWAY_ASYNC_CLAIM_IDLE_MS: '1500',
    GATEWAY_ASYNC_POLL_MS: '50',
    GATEWAY_ASYNC_WORKERS: '2',
  };
  pods.push(await startGatewayProcess(env));
  db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
}, 60_000);

afterAll(async () => {
  // A SIGKILLed pod has exited already (its exitCode stays null: it ended by a signal).
  await Promise.all(pods.filter((p) => p.child.signalCode === null).map((p) => p.stop()));
  await db?.end();
  await fake?.stop();
});

async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a pod dies mid-job', () => {
  it('another pod claims the job after the idle timeout, completes it, and it is charged once', async () => {
    const a = pods[0]!;
    const admin = (method: string, path: string, body?: unknown) => adminCall(a.url, method, path, body);
    await admin('POST', '/api/providers', {
      provider: 'openai',
      network_config: { base_url: fake.url, max_retries: 0 },
    });
    await admin('POST', '/api/providers/openai/keys', { name: 'k', value: 'sk-fake-0123456789abcdef', models: ['*'] });
    await admin('POST', '/api/governance/pricing-overrides', {
      scope: 'global',
      provider: 'openai',
      model: 'gpt-4o-mini',
      input_cost_per_token: 0,
      output_cost_per_token: OUTPUT_PRICE,
    });
    const vk = await admin('POST', '/api/governance/virtual-keys', {
      name: 'survivor',
      provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }],
      budgets: [{ max_limit: 10, reset_duration: '1d' }],
    });
    const key = String(vk['value']);

    // Slow upstream: the kill lands while pod A waits for the answer.
    fake.latencyMs = 10_000;
    const clientA = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: key, maxRetries: 0 });
    const { data: job, response } = await clientA
      .post<Job>('/async/chat/completions', {
        body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'survive the kill' }] },
      })
      .withResponse();
    expect(response.status).toBe(202);
    await until('pod A calling the upstream', 10_000, async () =>
      fake.requests.some((r) => JSON.stringify(r.json).includes('survive the kill')) ? true : undefined,
    );
    const running = await db.query('SELECT status, attempts FROM async_jobs WHERE id = $1', [job.id]);
    expect(running.rows[0]).toMatchObject({ status: 'processing', attempts: 1 });

    a.child.kill('SIGKILL');
    await new Promise((r) => a.child.once('exit', r));
    fake.latencyMs = 0;
    const b = await startGatewayProcess(env);
    pods.push(b);

    const clientB = new OpenAI({ baseURL: `${b.url}/v1`, apiKey: key, maxRetries: 0 });
    const done = await until('the job completed on pod B', 20_000, async () => {
      const j = await clientB.get<Job>(`/async/chat/completions/${job.id}`);
      return j.status === 'completed' || j.status === 'failed' ? j : undefined;
    });
    expect(done.status).toBe('completed');
    expect(done.result?.choices[0]?.message.content).toBe('Echo from gpt-4o-mini: survive the kill');
    // Run twice upstream (the killed call and pod B's), answered and charged once.
    expect(fake.requests.filter((r) => JSON.stringify(r.json).includes('survive the kill'))).toHaveLength(2);
    const row = await db.query('SELECT status, attempts FROM async_jobs WHERE id = $1', [job.id]);
    expect(row.rows[0]).toMatchObject({ status: 'completed', attempts: 2 });

    const cost = (done.result?.usage.completion_tokens ?? 0) * OUTPUT_PRICE;
    const charges = await until('the charge stored', 5_000, async () => {
      const r = await db.query<{ cost_nano: string }>('SELECT cost_nano FROM usage_charges WHERE request_id = $1', [
        job.id,
      ]);
      return r.rows.length > 0 ? r.rows.map((x) => Number(x.cost_nano)) : undefined;
    });
    expect(charges).toEqual([Math.round(cost * 1e9)]);
    const detail = await adminCall(b.url, 'GET', `/api/governance/virtual-keys/${String(vk['id'])}`);
    const budget = (detail['budgets'] as { current_usage: number }[])[0];
    expect(budget?.current_usage).toBeCloseTo(cost, 9);
    // One log row for the job, written by pod B.
    const logs = await until('the log row', 5_000, async () => {
      const r = await db.query('SELECT status_code FROM request_logs WHERE id = $1', [job.id]);
      return r.rows.length > 0 ? r.rows : undefined;
    });
    expect(logs).toEqual([{ status_code: 200 }]);
  }, 90_000);
});
