// Faults with real servers: two gateway processes on a Postgres and a Redis started for this file only, a
// bounded load, then Redis killed and restarted, Postgres stopped and started, one gateway SIGKILLed.
// No request may answer 500; a governed request answers 503 `coordination_unavailable` while Redis is down;
// and in the end each budget's usage (in Postgres and as the API shows it) is the summed cost of the
// requests that succeeded.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spoolDirFor } from '../../gateway/src/state/spool.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { type StoppableServer, startStoppablePostgres, startStoppableRedis } from '../harness/fault-servers.ts';
import { ADMIN_KEY, adminCall } from '../harness/gateway.ts';
import { type GatewayProcess, startGatewayProcess } from '../harness/gateway-process.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';
import { sleep, waitFor } from '../harness/wait.ts';

const OUTPUT_PRICE = 0.0025; // USD per output token, input free: a request costs completion_tokens × this
const NANO_PER_TOKEN = Math.round(OUTPUT_PRICE * 1e9);

let postgres: StoppableServer;
let redis: StoppableServer;
let fake: OpenAIFake;
const dataDirs: TempDir[] = [];
let env: Record<string, string>;
let pods: GatewayProcess[] = [];

interface Key {
  id: string;
  value: string;
  /** Summed cost of the requests of this key that succeeded, nano-USD. */
  spentNano: number;
}
const keys: Record<'budget' | 'rate' | 'plain', Key> = {
  budget: { id: '', value: '', spentNano: 0 },
  rate: { id: '', value: '', spentNano: 0 },
  plain: { id: '', value: '', spentNano: 0 },
};

interface Outcome {
  key: keyof typeof keys;
  status: number;
  code: string | undefined;
  retryAfter: string | null;
  /** The gateway's request id (x-gateway-request-id); empty when no answer came. */
  id: string;
  pod: string;
}

function admin(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  return adminCall(pods[0]!.url, method, path, body);
}

async function chat(pod: GatewayProcess, name: keyof typeof keys): Promise<Outcome> {
  const key = keys[name];
  const res = await fetch(`${pod.url}/v1/chat/completions`, {
    method: 'POST',
    // Plain requests use session stickiness: it lives in Redis, and must not fail them while Redis is down.
    headers: {
      'x-gateway-vk': key.value,
      'content-type': 'application/json',
      ...(name === 'plain' ? { 'x-gateway-session-id': 'fault-session' } : {}),
    },
    // A bounded max_tokens keeps each reservation small, as real clients do.
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }),
  }).catch(() => undefined);
  // A connection error (a pod died) is an outcome the assertions report, not an exception that stops the load.
  if (res === undefined)
    return { key: name, status: 0, code: 'connection_error', retryAfter: null, id: '', pod: pod.url };
  const json = (await res.json()) as { usage?: { completion_tokens: number }; error?: { code: string } };
  if (res.status === 200) key.spentNano += (json.usage?.completion_tokens ?? 0) * NANO_PER_TOKEN;
  return {
    key: name,
    status: res.status,
    code: json.error?.code,
    retryAfter: res.headers.get('retry-after'),
    id: res.headers.get('x-gateway-request-id') ?? '',
    pod: pod.url,
  };
}

/** Requests from `workers` loops per pod, round robin over the keys, until `stop()` (bounded by `maxMs`). */
function load(targets: GatewayProcess[], workers = 3, maxMs = 10_000): { stop(): Promise<Outcome[]> } {
  const outcomes: Outcome[] = [];
  const deadline = Date.now() + maxMs;
  let stopped = false;
  const names = Object.keys(keys) as (keyof typeof keys)[];
  const loops = targets.flatMap((pod) =>
    Array.from({ length: workers }, async (_, w) => {
      for (let i = w; !stopped && Date.now() < deadline; i++) {
        outcomes.push(await chat(pod, names[i % names.length]!));
      }
    }),
  );
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

function startPod(dir: TempDir): Promise<GatewayProcess> {
  return startGatewayProcess({ ...env, GATEWAY_DATA_DIR: dir.path });
}

beforeAll(async () => {
  [postgres, redis, fake] = await Promise.all([
    startStoppablePostgres(),
    startStoppableRedis(),
    createOpenAIFake().start(),
  ]);
  dataDirs.push(await tempDir('gw-fault-a-'), await tempDir('gw-fault-b-'));
  env = { DATABASE_URL: postgres.url, REDIS_URL: redis.url, GATEWAY_ADMIN_API_KEY: ADMIN_KEY };
  pods = [await startPod(dataDirs[0]!)];
  pods.push(await startPod(dataDirs[1]!));
  await admin('POST', '/api/providers', { provider: 'openai', network_config: { base_url: fake.url, max_retries: 0 } });
  await admin('POST', '/api/providers/openai/keys', { name: 'k', value: 'sk-fake-0123456789abcdef', models: ['*'] });
  await admin('POST', '/api/governance/pricing-overrides', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0,
    output_cost_per_token: OUTPUT_PRICE,
  });
  const create = async (name: string, extra: Record<string, unknown>): Promise<void> => {
    const vk = await admin('POST', '/api/governance/virtual-keys', {
      name,
      provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }],
      ...extra,
    });
    Object.assign(keys[name as keyof typeof keys], { id: String(vk['id']), value: String(vk['value']) });
  };
  await create('budget', { budgets: [{ max_limit: 1_000, reset_duration: '1d' }] });
  await create('rate', { rate_limit: { request_max_limit: 1_000_000, request_reset_duration: '1m' } });
  await create('plain', {});
  // The other pod learns of the keys through Redis and a read of Postgres: wait until both authenticate each.
  for (const pod of pods)
    for (const key of Object.values(keys))
      await waitFor(
        async () =>
          (await fetch(`${pod.url}/api/governance/virtual-keys/quota`, { headers: { 'x-gateway-vk': key.value } }))
            .status === 200,
        10_000,
        'every pod knows every key',
      );
}, 120_000);

afterAll(async () => {
  await Promise.all(pods.map((p) => p.stop()));
  await fake?.stop();
  await Promise.all([postgres?.destroy(), redis?.destroy(), ...dataDirs.map((d) => d.remove())]);
});

/** Budget usage as charged in Postgres, nano-USD. */
async function chargedInPostgres(budgetOwner: string): Promise<number> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ total: string }>(
      `SELECT COALESCE(sum(c.cost_nano), 0)::text AS total FROM usage_charges c
       JOIN budgets b ON b.id = c.budget_id WHERE b.virtual_key_id = $1`,
      [budgetOwner],
    );
    return Number(rows[0]?.total ?? 0);
  } finally {
    await client.end();
  }
}

/** Ids of the rows of a query's first column, sorted (one entry per row: a duplicate would show). */
async function idsIn(sql: string, params: unknown[] = []): Promise<string[]> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(sql, params);
    return rows.map((r) => r.id).sort();
  } finally {
    await client.end();
  }
}

const logRows = () => idsIn(`SELECT id FROM request_logs WHERE request_type = 'chat_completion'`);

const spooled = async (dir: TempDir, prefix = '') =>
  (await readdir(spoolDirFor(dir.path, postgres.url)).catch(() => [])).filter((n) => n.startsWith(prefix));

/** Request ids in a pod's spool files: a log line starts with the id and a tab, a charge line is a JSON array. */
async function spooledIds(dir: TempDir, prefix: 'logs-' | 'charges-'): Promise<Set<string>> {
  const ids = new Set<string>();
  const spoolDir = spoolDirFor(dir.path, postgres.url);
  for (const name of await spooled(dir, prefix)) {
    const text = await readFile(join(spoolDir, name), 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      // A line being appended may be cut: it counts once it is whole.
      if (prefix === 'logs-') ids.add(line.slice(0, line.indexOf('\t')));
      else if (line.endsWith(']')) ids.add(String((JSON.parse(line) as unknown[])[0]));
    }
  }
  return ids;
}

describe('Redis and Postgres faults under load', () => {
  it('serves through them, answers only 200 or 503 coordination_unavailable, and loses no charge', async () => {
    const all: Outcome[] = [];
    // Warm up: everything is served.
    let run = load(pods);
    await sleep(500);
    const warm = await run.stop();
    expect(warm.filter((o) => o.status !== 200)).toEqual([]);
    all.push(...warm);

    // Redis killed (its data is gone) and restarted under load.
    run = load(pods);
    await sleep(300);
    await redis.kill();
    await sleep(1_500);
    const during = load(pods, 1);
    await sleep(500);
    const down = await during.stop();
    await redis.start();
    // Back within the client's reconnect delay (200 ms) plus the first admissions' loads from Postgres.
    await waitFor(
      async () => {
        const probe = await chat(pods[1]!, 'budget');
        all.push(probe);
        return probe.status === 200;
      },
      5_000,
      'governed requests served',
    );
    await sleep(500);
    all.push(...(await run.stop()), ...down);
    // While Redis was down: keys without limits were served, governed ones refused with 503 and Retry-After.
    expect(down.filter((o) => o.key === 'plain').every((o) => o.status === 200)).toBe(true);
    const governedDown = down.filter((o) => o.key !== 'plain');
    expect(governedDown.length).toBeGreaterThan(0);
    for (const o of governedDown) expect(o).toMatchObject({ status: 503, code: 'coordination_unavailable' });
    expect(governedDown.every((o) => o.retryAfter === '1')).toBe(true);
    // Once Redis is back, every request is served again.
    const after = load(pods);
    await sleep(500);
    const recovered = await after.stop();
    expect(recovered.filter((o) => o.status !== 200)).toEqual([]);
    all.push(...recovered);

    // Postgres stopped under load: inference goes on from the snapshot, charges wait in each pod's spool.
    await postgres.kill();
    run = load(pods);
    await sleep(1_000);
    const pgDown = await run.stop();
    expect(pgDown.filter((o) => o.status !== 200)).toEqual([]);
    all.push(...pgDown);
    // Pod B dies with its charges and request logs on disk only: a charge is spooled right after its response,
    // a request log within the flush interval (1 s), which is what a kill may lose of the logs; past that
    // (plus the append, with slack for a loaded machine) everything B answered is in its spool.
    const answeredByB = pgDown.filter((o) => o.pod === pods[1]!.url).map((o) => o.id);
    const chargedByB = pgDown.filter((o) => o.pod === pods[1]!.url && o.key === 'budget').map((o) => o.id);
    expect(chargedByB.length).toBeGreaterThan(0);
    await waitFor(
      async () => {
        const [logged, charged] = await Promise.all([
          spooledIds(dataDirs[1]!, 'logs-'),
          spooledIds(dataDirs[1]!, 'charges-'),
        ]);
        return answeredByB.every((id) => logged.has(id)) && chargedByB.every((id) => charged.has(id));
      },
      3_000,
      "pod B's answers logged and charged in its spool",
    );
    pods[1]!.child.kill('SIGKILL');
    await new Promise((r) => pods[1]!.child.once('exit', r));
    await postgres.start();
    // Its replacement (same data directory, as a restarted container) drains what it left.
    pods[1] = await startPod(dataDirs[1]!);
    await waitFor(
      async () => (await spooled(dataDirs[0]!)).length === 0 && (await spooled(dataDirs[1]!)).length === 0,
      10_000,
      'both spools drained',
    );

    expect(all.filter((o) => o.status >= 500 && o.code !== 'coordination_unavailable')).toEqual([]);
    expect(new Set(all.map((o) => o.status))).toEqual(new Set([200, 503]));
    expect(keys.budget.spentNano).toBeGreaterThan(0);
    expect(await chargedInPostgres(keys.budget.id)).toBe(keys.budget.spentNano);
    // Per request: one charge for each governed request that succeeded, none for any other.
    const budgetIds = all.filter((o) => o.key === 'budget' && o.status === 200).map((o) => o.id);
    const chargedIds = await idsIn(
      'SELECT c.request_id AS id FROM usage_charges c JOIN budgets b ON b.id = c.budget_id WHERE b.virtual_key_id = $1',
      [keys.budget.id],
    );
    expect(chargedIds).toEqual(budgetIds.sort());
    const detail = await admin('GET', `/api/governance/virtual-keys/${keys.budget.id}`);
    const usage = (detail['budgets'] as { current_usage: number }[])[0]!.current_usage;
    expect(Math.round(usage * 1e9)).toBe(keys.budget.spentNano);
    // Every request was logged once, also those both pods served while Postgres was down.
    // Bounded wait; the comparison below names what is missing or duplicated if the bound passes.
    await waitFor(async () => (await logRows()).length >= all.length, 10_000, 'every request logged').catch(
      () => undefined,
    );
    expect(await logRows()).toEqual(all.map((o) => o.id).sort());
  }, 90_000);
});
