// An async job's charge is in Postgres before its answer is stored. Gateway processes (pods) on one Postgres and
// one Redis, each with its own data directory (its charge spool, as each pod has its own disk). The charge is held
// by a test transaction's lock on usage_charges (reads still pass); the answer's store by a row lock on the job.
// A worker-less pod does the admin calls, so only the pod a test starts runs its job.
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { ADMIN_KEY, adminCall } from '../harness/gateway.ts';
import { type GatewayProcess, startGatewayProcess } from '../harness/gateway-process.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';

interface Job {
  id: string;
  status: string;
  result?: { usage: { completion_tokens: number }; choices: { message: { content: string } }[] };
}

const OUTPUT_PRICE = 0.001;
let fake: OpenAIFake;
let env: Record<string, string>;
/** Queries of the test. */
let db: pg.Client;
/** Holds the locks, in its own transaction. */
let locker: pg.Client;
let admin: GatewayProcess;
let vk: { id: string; key: string };
/** Pods started by the current test, with their data directories. */
let pods: { pod: GatewayProcess; dir: TempDir }[] = [];
const dirs: TempDir[] = [];

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
  };
  admin = await pod({ GATEWAY_ASYNC_WORKERS: '0' });
  // Outlives the tests' pods.
  pods = [];
  db = new pg.Client({ connectionString: databaseUrl });
  locker = new pg.Client({ connectionString: databaseUrl });
  await Promise.all([db.connect(), locker.connect()]);
  const call = (method: string, path: string, body?: unknown) => adminCall(admin.url, method, path, body);
  await call('POST', '/api/providers', { provider: 'openai', network_config: { base_url: fake.url, max_retries: 0 } });
  await call('POST', '/api/providers/openai/keys', { name: 'k', value: 'sk-fake-0123456789abcdef', models: ['*'] });
  await call('POST', '/api/governance/pricing-overrides', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0,
    output_cost_per_token: OUTPUT_PRICE,
  });
}, 60_000);

afterEach(async () => {
  await locker.query('ROLLBACK').catch(() => undefined);
  // A SIGKILLed pod has exited already (its exitCode stays null: it ended by a signal).
  await Promise.all(pods.filter((p) => p.pod.child.signalCode === null).map((p) => p.pod.stop()));
  pods = [];
  fake.latencyMs = 0;
});

afterAll(async () => {
  await admin?.stop();
  await Promise.all([db?.end(), locker?.end()]);
  await fake?.stop();
  await Promise.all(dirs.map((d) => d.remove()));
});

async function pod(extra: Record<string, string> = {}): Promise<GatewayProcess> {
  const dir = await tempDir('gw-async-charge-');
  dirs.push(dir);
  const p = await startGatewayProcess({ ...env, GATEWAY_DATA_DIR: dir.path, ...extra });
  pods.push({ pod: p, dir });
  return p;
}

async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function budgetedKey(name: string): Promise<{ id: string; key: string }> {
  const created = await adminCall(admin.url, 'POST', '/api/governance/virtual-keys', {
    name,
    provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }],
    budgets: [{ max_limit: 10, reset_duration: '1d' }],
  });
  return { id: String(created['id']), key: String(created['value']) };
}

async function submit(p: GatewayProcess, text: string): Promise<string> {
  const c = new OpenAI({ baseURL: `${p.url}/v1`, apiKey: vk.key, maxRetries: 0 });
  const { data, response } = await c
    .post<Job>('/async/chat/completions', {
      body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: text }] },
    })
    .withResponse();
  expect(response.status).toBe(202);
  return data.id;
}

async function jobRow(id: string): Promise<{ status: string; attempts: number }> {
  const r = await db.query<{ status: string; attempts: number }>(
    'SELECT status, attempts FROM async_jobs WHERE id = $1',
    [id],
  );
  return r.rows[0]!;
}

async function chargesOf(id: string): Promise<number[]> {
  const r = await db.query<{ cost_nano: string }>('SELECT cost_nano FROM usage_charges WHERE request_id = $1', [id]);
  return r.rows.map((x) => Number(x.cost_nano));
}

async function completed(p: GatewayProcess, id: string): Promise<Job> {
  const c = new OpenAI({ baseURL: `${p.url}/v1`, apiKey: vk.key, maxRetries: 0 });
  return until(`job ${id} completed`, 20_000, async () => {
    const j = await c.get<Job>(`/async/chat/completions/${id}`);
    if (j.status !== 'completed' && j.status !== 'failed') return undefined;
    // Read as soon as the job reads completed: its charge must be there already.
    expect(await chargesOf(id)).toHaveLength(1);
    return j;
  });
}

async function usage(): Promise<number | undefined> {
  const detail = await adminCall(admin.url, 'GET', `/api/governance/virtual-keys/${vk.id}`);
  return (detail['budgets'] as { current_usage: number }[])[0]?.current_usage;
}

const upstreamCalls = (text: string) => fake.requests.filter((r) => JSON.stringify(r.json).includes(text)).length;

/** A pod that is gone leaves statements waiting on the test's locks; they must not run once the lock is released. */
async function endWaitingStatements(): Promise<void> {
  await db.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
  );
}

async function kill(p: GatewayProcess): Promise<void> {
  p.child.kill('SIGKILL');
  await new Promise((r) => p.child.once('exit', r));
}

describe('the charge is in Postgres before the answer is stored', () => {
  it('keeps the job processing while its charge cannot be written, then completes it charged once', async () => {
    vk = await budgetedKey('held-charge');
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE usage_charges IN EXCLUSIVE MODE');
    const a = await pod();
    const id = await submit(a, 'hold my charge');
    await until('the upstream called', 10_000, async () => (upstreamCalls('hold my charge') > 0 ? true : undefined));
    // Well past the batch window and the spill to the spool (250 ms): the answer is known, the charge is not stored.
    await sleep(1500);
    expect(await jobRow(id)).toMatchObject({ status: 'processing', attempts: 1 });
    expect(await chargesOf(id)).toEqual([]);

    await locker.query('COMMIT');
    const done = await completed(a, id);
    expect(done.status).toBe('completed');
    const cost = (done.result?.usage.completion_tokens ?? 0) * OUTPUT_PRICE;
    expect(await chargesOf(id)).toEqual([Math.round(cost * 1e9)]);
    expect(await usage()).toBeCloseTo(cost, 9);
    expect(upstreamCalls('hold my charge')).toBe(1);
    expect(await jobRow(id)).toMatchObject({ status: 'completed', attempts: 1 });
  }, 60_000);

  it('a pod killed after its charge is stored and before the answer: the run on another pod charges nothing', async () => {
    vk = await budgetedKey('charged-then-killed');
    fake.latencyMs = 1500;
    const a = await pod();
    const id = await submit(a, 'charged then killed');
    await until('the upstream called', 10_000, async () =>
      upstreamCalls('charged then killed') > 0 ? true : undefined,
    );
    // Claimed by pod A (attempt 1): its answer's store now waits for the job's row.
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM async_jobs WHERE id = $1 FOR UPDATE', [id]);
    const charged = await until('the charge stored', 10_000, async () => {
      const c = await chargesOf(id);
      return c.length > 0 ? c : undefined;
    });
    expect(charged).toHaveLength(1);
    // Stored means counted too: the coordinator's usage follows the durable row, and a kill between the two would
    // leave the live usage short until the period is reloaded from Postgres (a race of the test, not the rule).
    await until('the charge counted', 10_000, async () => (((await usage()) ?? 0) > 0 ? true : undefined));
    await kill(a);
    await endWaitingStatements();
    await locker.query('COMMIT');
    fake.latencyMs = 0;
    expect(await jobRow(id)).toMatchObject({ status: 'processing', attempts: 1 });

    const b = await pod();
    const done = await completed(b, id);
    expect(done.status).toBe('completed');
    expect(await jobRow(id)).toMatchObject({ status: 'completed', attempts: 2 });
    expect(upstreamCalls('charged then killed')).toBe(2);
    const cost = (done.result?.usage.completion_tokens ?? 0) * OUTPUT_PRICE;
    expect(await chargesOf(id)).toEqual([Math.round(cost * 1e9)]);
    expect(await usage()).toBeCloseTo(cost, 9);
  }, 60_000);

  it('a pod killed while its charge is held: the job is run again on another pod and charged once', async () => {
    vk = await budgetedKey('held-then-killed');
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE usage_charges IN EXCLUSIVE MODE');
    const a = await pod();
    const id = await submit(a, 'held then killed');
    await until('the upstream called', 10_000, async () => (upstreamCalls('held then killed') > 0 ? true : undefined));
    await sleep(1500);
    // Before, pod A stored the answer here and its charge died with it.
    expect(await jobRow(id)).toMatchObject({ status: 'processing', attempts: 1 });
    await kill(a);
    await endWaitingStatements();
    await locker.query('COMMIT');

    const b = await pod();
    const done = await completed(b, id);
    expect(done.status).toBe('completed');
    expect(await jobRow(id)).toMatchObject({ status: 'completed', attempts: 2 });
    expect(upstreamCalls('held then killed')).toBe(2);
    const cost = (done.result?.usage.completion_tokens ?? 0) * OUTPUT_PRICE;
    // One charge row. Pod A's spooled copy stays on its disk (drained, a no-op, if its pod comes back); the
    // coordinator counted it too, so the key's live usage is above this until the period is loaded again.
    expect(await chargesOf(id)).toEqual([Math.round(cost * 1e9)]);
  }, 60_000);
});
