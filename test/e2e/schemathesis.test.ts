// schemathesis against a running gateway (real Postgres + Redis, a fake OpenAI upstream): every operation of
// /openapi.json, positive and negative inputs, with the admin credential (and the quota self-service with a
// virtual key, the one operation the admin key may not call). No answer may be a 5xx, and every answer must
// match the document (status, content type, body schema). Bounded: a few examples per operation, one worker
// and a hard timeout.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { ensureSchemathesis, runSchemathesis, type SchemathesisRun } from '../harness/schemathesis.ts';

const RUN_TIMEOUT_MS = 480_000;

let gw: TestGateway;
let upstream: OpenAIFake;
let st: string;
let work: string;
/** The seeded virtual key's value (for the quota self-service). */
let vkValue: string;

async function created(path: string, body: unknown): Promise<{ id: string; value?: string }> {
  const res = await gw.admin(path, { method: 'POST', body });
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(path.includes('pricing-overrides') ? 201 : 200);
  return (await res.json()) as { id: string; value?: string };
}

/**
 * One of everything, with budgets, limits and usage, so that the listings schemathesis reads carry real rows
 * (their answers are checked against the document too), and request logs exist.
 */
async function seed(): Promise<void> {
  const team = await created('/api/governance/teams', {
    name: 'fuzz-team',
    budgets: [{ max_limit: 5, reset_duration: '1d' }],
    rate_limit: { token_max_limit: 100_000, token_reset_duration: '1h' },
  });
  await created('/api/governance/customers', {
    name: 'fuzz-customer',
    budgets: [{ max_limit: 50, reset_duration: '1M' }],
  });
  const vk = await created('/api/governance/virtual-keys', {
    name: 'fuzz-quota',
    team_id: team.id,
    budgets: [{ max_limit: 10, reset_duration: '30d' }],
    rate_limit: { request_max_limit: 1000, request_reset_duration: '1m' },
    provider_configs: [
      {
        provider: 'openai',
        allowed_models: ['*'],
        key_ids: ['*'],
        weight: 1,
        budgets: [{ max_limit: 1, reset_duration: '1h' }],
        rate_limit: { request_max_limit: 1000, request_reset_duration: '1h' },
      },
    ],
  });
  vkValue = vk.value ?? '';
  await created('/api/governance/pricing-overrides', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0.000001,
    output_cost_per_token: 0.000002,
  });
  await created('/api/governance/routing-rules', {
    name: 'fuzz-rule',
    condition: 'true',
    targets: [{ provider: 'openai', model: 'gpt-4o-mini' }],
    scope: 'virtual_key',
    scope_id: vk.id,
  });
  await created('/api/providers/openai/keys', {
    name: 'second',
    value: 'sk-test-second-key-0123456789',
    models: ['gpt-4.1'],
  });
  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-vk': vkValue, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
  });
  expect(chat.status).toBe(200);
  const failed = await gw.admin('/v1/chat/completions', { method: 'POST', body: { model: 'nowhere/x', messages: [] } });
  expect(failed.status).toBe(400);
}

beforeAll(async () => {
  st = ensureSchemathesis();
  upstream = createOpenAIFake();
  await upstream.start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: `${upstream.url}/v1`, max_retries: 0 },
          keys: [{ name: 'main', value: 'sk-test-upstream-key', models: ['*'] }],
        },
      },
    },
  });
  work = mkdtempSync(join(tmpdir(), 'schemathesis-'));
  await seed();
}, 360_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/**
 * The framework mounts serve the very operations of `/compat-a` and the native prefixes again under their own
 * prefix (same handlers, same schemas): fuzzed once, at the canonical prefix. The census test still checks their
 * authentication route by route.
 */
const MOUNTS = '^/(aggregator|langchain|pydanticai)/';

async function operationsInMounts(): Promise<number> {
  const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, object> };
  const mounts = new RegExp(MOUNTS);
  return Object.entries(doc.paths)
    .filter(([path]) => mounts.test(path))
    .reduce((n, [, item]) => n + Object.keys(item).length, 0);
}

/**
 * One bounded run over the operations `filter` selects (all by default), with `headers` on every request. The
 * stateful phase (sequences along OpenAPI links) needs the linked operations, so only the run over all has it.
 */
async function schemathesis(headers: string[], filter: string[] = []): Promise<SchemathesisRun> {
  const run = await runSchemathesis(
    st,
    [
      `${gw.url}/openapi.json`,
      ...filter,
      '--checks',
      'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance',
      '--mode',
      'all',
      '--phases',
      filter[0] === '--exclude-path-regex' ? 'examples,coverage,fuzzing,stateful' : 'examples,coverage,fuzzing',
      '--max-examples',
      process.env['SCHEMATHESIS_MAX_EXAMPLES'] ?? '25',
      '--seed',
      process.env['SCHEMATHESIS_SEED'] ?? '20261125',
      // One worker: hypothesis and CPython 3.11's ast module are not safe to share between threads
      // (runs with two failed at random with "AST constructor recursion depth mismatch").
      '--workers',
      '1',
      '--request-timeout',
      '20',
      '--generation-database',
      'none',
      '--suppress-health-check',
      'all',
      '--continue-on-failure',
      '--no-color',
      '--output-sanitize',
      'false',
      ...headers.flatMap((h) => ['-H', h]),
    ],
    RUN_TIMEOUT_MS,
    work,
  );
  const log = process.env['SCHEMATHESIS_LOG'];
  if (log) writeFileSync(log, run.output, { flag: 'a' });
  expect(run.timedOut, 'schemathesis finished within its time bound').toBe(false);
  // Its report names every failing operation with a curl line to reproduce it.
  expect(run.code, run.output.slice(-20_000)).toBe(0);
  return run;
}

/**
 * Operations that change where upstream calls go (a provider's network settings, the outbound proxy): fuzzed last
 * and alone, so that the run over every other operation keeps reaching the fake upstream. (A fuzzed partial update
 * of the seeded provider's `network_config` drops its fake `base_url`, and later upstream calls would leave the
 * machine for the real provider.)
 */
const ROUTING_THE_UPSTREAM = ['updateProvider', 'deleteProvider', 'updateProxyConfig'];

describe('schemathesis', () => {
  it(
    // First: the run over every operation may leave any client settings behind (PUT /api/config).
    'finds none in the quota self-service, called with a virtual key that has budgets and limits',
    async () => {
      const run = await schemathesis([`x-gateway-vk: ${vkValue}`], ['--include-operation-id', 'getVirtualKeyQuota']);
      expect(run.output).toMatch(/Selected: 1\/\d+/);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
  it(
    'finds no 5xx and no answer that breaks the document, in any operation',
    async () => {
      const run = await schemathesis(
        [`Authorization: Bearer ${ADMIN_KEY}`],
        ['--exclude-path-regex', MOUNTS, ...ROUTING_THE_UPSTREAM.flatMap((id) => ['--exclude-operation-id', id])],
      );
      const selected = /Selected: (\d+)\/(\d+)/.exec(run.output);
      expect(Number(selected?.[1]), 'every operation outside the framework mounts selected').toBe(
        Number(selected?.[2]) - (await operationsInMounts()) - ROUTING_THE_UPSTREAM.length,
      );
    },
    RUN_TIMEOUT_MS + 30_000,
  );
  it(
    'finds none in the operations that change where upstream calls go, fuzzed last',
    async () => {
      const run = await schemathesis(
        [`Authorization: Bearer ${ADMIN_KEY}`],
        ROUTING_THE_UPSTREAM.flatMap((id) => ['--include-operation-id', id]),
      );
      expect(run.output).toMatch(new RegExp(`Selected: ${ROUTING_THE_UPSTREAM.length}/\\d+`));
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
