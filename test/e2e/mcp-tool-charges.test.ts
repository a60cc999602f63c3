// MCP tool prices paid from budgets, end to end (Postgres + Redis): an MCP SDK tool server whose client prices
// `read` ($0.25) and `fail` ($0.50) per call through PUT /api/mcp/client/{id}, called by virtual keys through the
// three places tools run (POST /v1/mcp/tool/execute, the auto-execute loop of a chat completion, tools/call on the
// gateway's /mcp). A successful priced call is charged to the key's, its team's and its customer's budgets as one
// charge keyed by its tool-log id; failures, unpriced tools and the admin key charge nothing; a spent budget refuses
// before the tool server is called; two pods charging one budget at once stay exact. Inference is free here, so
// every cent a budget shows is a tool's.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { McpToolServer } from '../fakes/mcp-servers.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { ADMIN_KEY, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, expectEnvelope, type Json, pc, waitFor as poll } from './governance-helpers.ts';
import {
  addMcpClient,
  callTool,
  chatCalls,
  openaiProvider,
  startFilesServer,
  startMcpGateway,
  untilConnected,
} from './mcp-helpers.ts';

const MODEL = 'openai/gpt-4o-mini';
const PRICES = { read: 0.25, fail: 0.5 };

let openai: OpenAIFake;
let files: McpToolServer;
let gw: TestGateway;
let clientId: string;

beforeAll(async () => {
  [openai, files] = await Promise.all([createOpenAIFake().start(), startFilesServer()]);
  gw = await startMcpGateway({ providers: openaiProvider(openai.url) });
  // Model calls cost nothing: a budget's usage is the tools' alone.
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0,
    output_cost_per_token: 0,
  });
  clientId = await addMcpClient(gw, {
    name: 'files',
    connection_type: 'http',
    connection_string: files.url,
    tools_to_execute: ['read', 'write', 'fail'],
    tools_to_auto_execute: ['read', 'fail'],
  });
  // The reference sets tool_pricing on update only (its tools are known then); `write` stays unpriced.
  await adminJson(gw, `/api/mcp/client/${clientId}`, 'PUT', { tool_pricing: PRICES });
  await poll(
    async () => gw.rt.state.snapshot.mcpClients.get(clientId)?.tool_pricing['read'],
    (p) => p === PRICES.read,
  );
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.stop(), files?.close()]);
});

beforeEach(() => {
  openai.reset();
  files.calls.length = 0;
});

const FILES_GRANT = [{ mcp_client_name: 'files', tools_to_execute: ['*'], tools_to_auto_execute: ['read', 'fail'] }];

/** A key granted the files tools with one daily budget of `limit` USD (and `extra`: team_id, customer_id). */
function payer(limit: number, extra: Json = {}) {
  return createVk(gw, {
    provider_configs: [pc('openai')],
    budgets: [{ max_limit: limit, reset_duration: '1d' }],
    mcp_configs: FILES_GRANT,
    ...extra,
  });
}

/** POST /v1/mcp/tool/execute (chat form) on `on` with these headers. */
async function execute(headers: Record<string, string>, name: string, args: Json = {}, on: TestGateway = gw) {
  const res = await fetch(`${on.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}

const vk = (value: string) => ({ 'x-gateway-vk': value });

/** Every budget the management API lists, by id: its current usage in USD. */
async function usageOf(id: string): Promise<number | undefined> {
  const list = (await adminJson(gw, '/api/governance/budgets'))['budgets'] as Json[]; // list envelope
  const b = list.find((x) => x['id'] === id);
  return b === undefined ? undefined : Number(b['current_usage']);
}

/** The usage of budget `id` once it reads `expected` (charges are stored after the answer left). */
async function settledAt(id: string, expected: number): Promise<number | undefined> {
  return poll(
    () => usageOf(id),
    (u) => u !== undefined && Math.abs(u - expected) < 1e-9,
  );
}

const budgetIdOf = (view: Json): string => String((view['budgets'] as Json[])[0]?.['id']); // the create view

/** The tool-log rows (flushed first) of key `id`, oldest first. */
async function toolRows(vkId: string): Promise<Json[]> {
  const out = await adminJson(gw, `/api/mcp-logs?virtual_key_ids=${vkId}&order=asc&limit=100`);
  return out['logs'] as Json[]; // the listing's rows
}

/** The durable charges of budget `id`: request id and nano-USD, as usage_charges holds them. */
async function chargesOf(budgetId: string): Promise<{ request_id: string; cost_nano: string }[]> {
  const { rows } = await gw.rt.state.db.query<{ request_id: string; cost_nano: string }>(
    'SELECT request_id, cost_nano::text AS cost_nano FROM usage_charges WHERE budget_id = $1 ORDER BY request_id',
    [budgetId],
  );
  return rows;
}

describe('POST /v1/mcp/tool/execute', () => {
  it('charges a successful priced call its price to the key, team and customer budgets, once, by its tool-log id', async () => {
    const customer = await adminJson(gw, '/api/governance/customers', 'POST', {
      name: `acme-${Date.now()}`,
      budgets: [{ max_limit: 10, reset_duration: '1M' }],
    });
    const team = await adminJson(gw, '/api/governance/teams', 'POST', {
      name: `research-${Date.now()}`,
      customer_id: customer['id'],
      budgets: [{ max_limit: 10, reset_duration: '1M' }],
    });
    const key = await payer(5, { team_id: team['id'] });
    const budgets = [budgetIdOf(key.view), budgetIdOf(team), budgetIdOf(customer)];

    const r = await execute(vk(key.value), 'files-read', { text: 'a' });
    expect(r.status).toBe(200);
    for (const id of budgets) expect(await settledAt(id, 0.25)).toBeCloseTo(0.25, 9);

    // One charge per budget, keyed by the call's tool-log row, whose cost is the same price.
    const [row] = await toolRows(key.id);
    expect(row).toMatchObject({ tool_name: 'read', status: 'success', cost: 0.25 });
    for (const id of budgets) {
      expect(await chargesOf(id)).toEqual([{ request_id: String(row?.['id']), cost_nano: '250000000' }]);
    }
    // The key's own usage view says the same.
    const detail = await adminJson(gw, `/api/governance/virtual-keys/${key.id}`);
    expect((detail['budgets'] as Json[])[0]?.['current_usage']).toBeCloseTo(0.25, 9);
  });

  it('charges nothing for a failed call, an unpriced tool or the admin key', async () => {
    const key = await payer(5);
    const budget = budgetIdOf(key.view);
    const failed = await execute(vk(key.value), 'files-fail');
    expect(failed.body).toMatchObject({ is_error: true, content: 'disk on fire' });
    expect((await execute(vk(key.value), 'files-write', { text: 'x' })).status).toBe(200);
    expect((await execute({ authorization: `Bearer ${ADMIN_KEY}` }, 'files-read')).status).toBe(200);
    expect(files.calls.map((c) => c.tool)).toEqual(['fail', 'write', 'read']);
    // A priced success afterwards is the only charge.
    expect((await execute(vk(key.value), 'files-read')).status).toBe(200);
    expect(await settledAt(budget, 0.25)).toBeCloseTo(0.25, 9);
    expect(await chargesOf(budget)).toHaveLength(1);
    const rows = await toolRows(key.id);
    expect(rows.map((x) => [x['tool_name'], x['status'], x['cost']])).toEqual([
      ['fail', 'error', null],
      ['write', 'success', null],
      ['read', 'success', 0.25],
    ]);
  });

  it('a spent budget refuses with 402 before the tool server is called, and logs no tool call', async () => {
    const key = await payer(0.5);
    expect((await execute(vk(key.value), 'files-read', { n: 1 })).status).toBe(200);
    expect((await execute(vk(key.value), 'files-read', { n: 2 })).status).toBe(200);
    const refused = await execute(vk(key.value), 'files-read', { n: 3 });
    const message = expectEnvelope(refused, 402, 'budget_exceeded');
    expect(message).toContain(budgetIdOf(key.view));
    expect(message).toContain('tool files-read costs $0.25');
    expect(files.calls.map((c) => c.args)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await settledAt(budgetIdOf(key.view), 0.5)).toBeCloseTo(0.5, 9);
    expect(await toolRows(key.id)).toHaveLength(2);
    // Unpriced tools still run: the budget pays only for what has a price.
    expect((await execute(vk(key.value), 'files-write')).status).toBe(200);
  });
});

describe('the auto-execute loop', () => {
  const ask = (key: string) =>
    new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'look it up' }],
    });
  /** The last message of the model's `i`th request (the fake records parsed JSON bodies). */
  const toolMessage = (i: number): Json | undefined => {
    const body = openai.requests[i]?.json as Json | undefined;
    return (body?.['messages'] as Json[] | undefined)?.at(-1);
  };

  it('charges each auto-executed priced call to the key and its team; a failing one is not charged', async () => {
    const team = await adminJson(gw, '/api/governance/teams', 'POST', {
      name: `loop-team-${Date.now()}`,
      budgets: [{ max_limit: 10, reset_duration: '1d' }],
    });
    const key = await payer(5, { team_id: team['id'] });
    openai.script({
      status: 200,
      body: chatCalls([
        { name: 'files-read', args: { text: '1' } },
        { name: 'files-read', args: { text: '2' } },
      ]),
    });
    const r = await ask(key.value);
    expect(r.choices[0]?.finish_reason).toBe('stop');
    expect(files.calls).toHaveLength(2);
    expect(await settledAt(budgetIdOf(key.view), 0.5)).toBeCloseTo(0.5, 9);
    expect(await settledAt(budgetIdOf(team), 0.5)).toBeCloseTo(0.5, 9);

    openai.script({ status: 200, body: chatCalls([{ name: 'files-fail' }]) });
    await ask(key.value);
    expect(toolMessage(3)).toMatchObject({ role: 'tool', content: 'disk on fire' });
    // Give a wrong charge the time to land, then check it did not.
    await new Promise((r) => setTimeout(r, 300));
    expect(await usageOf(budgetIdOf(key.view))).toBeCloseTo(0.5, 9);
    expect(await chargesOf(budgetIdOf(key.view))).toHaveLength(2);
  });

  it('a budget without room for the price: the model reads the refusal, the tool server is not called', async () => {
    const key = await payer(0.2);
    openai.script({ status: 200, body: chatCalls([{ name: 'files-read', args: { text: 'x' } }]) });
    const r = await ask(key.value);
    expect(r.choices[0]?.finish_reason).toBe('stop');
    expect(files.calls).toHaveLength(0);
    const told = toolMessage(1);
    expect(told).toMatchObject({ role: 'tool' });
    expect(String(told?.['content'])).toMatch(/^Error: budget \S+ would be exceeded: .*tool files-read costs \$0\.25/);
    const [row] = await toolRows(key.id);
    expect(row).toMatchObject({
      tool_name: 'read',
      status: 'error',
      cost: null,
      error_details: { is_gateway_error: true, error: { type: 'budget_exceeded', code: 'budget_exceeded' } },
    });
    expect(await usageOf(budgetIdOf(key.view))).toBe(0);
  });
});

describe('/mcp tools/call', () => {
  it('charges a priced call; a spent budget is a tool error the MCP client reads, without calling the tool', async () => {
    const key = await payer(0.25);
    expect(await callTool(gw, key.value, 'files-read')).toEqual({ isError: false, text: 'read:{}' });
    expect(await settledAt(budgetIdOf(key.view), 0.25)).toBeCloseTo(0.25, 9);
    const refused = await callTool(gw, key.value, 'files-read');
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^budget \S+ would be exceeded: \$0\.25 used or reserved of \$0\.25, tool files-read/);
    expect(files.calls).toHaveLength(1);
    expect(await chargesOf(budgetIdOf(key.view))).toHaveLength(1);
    // Failures and unpriced tools cost nothing here either.
    expect((await callTool(gw, key.value, 'files-write')).isError).toBe(false);
    const rows = await toolRows(key.id);
    expect(rows.map((x) => [x['status'], x['cost']])).toEqual([
      ['success', 0.25],
      ['error', null],
      ['success', null],
    ]);
  });
});

describe('two pods', () => {
  let other: TestGateway | undefined;
  afterAll(async () => {
    await other?.close();
  });

  it('charging one budget at once from both pods admits exactly what fits and charges exactly that', async () => {
    other = await startMcpGateway({
      providers: openaiProvider(openai.url),
      databaseUrl: gw.databaseUrl!,
      redisKeyPrefix: gw.redisKeyPrefix!,
    });
    await untilConnected(other, clientId);
    const b = other;
    await poll(
      async () => b.rt.mcp.connections.tools().length > 0 && b.rt.state.snapshot.mcpClients.get(clientId),
      (c) => c !== false && c?.tool_pricing['read'] === PRICES.read,
    );
    const key = await payer(1);
    await poll(
      async () => b.rt.state.snapshot.governance.virtualKeysById.has(key.id),
      (known) => known,
    );
    const calls = Array.from({ length: 12 }, (_, i) =>
      execute(vk(key.value), 'files-read', { i }, i % 2 === 0 ? gw : b),
    );
    const statuses = (await Promise.all(calls)).map((c) => c.status).sort();
    expect(statuses).toEqual([...Array(4).fill(200), ...Array(8).fill(402)]);
    expect(files.calls).toHaveLength(4);
    expect(await settledAt(budgetIdOf(key.view), 1)).toBeCloseTo(1, 9);
    expect(await chargesOf(budgetIdOf(key.view))).toHaveLength(4);
  });
});
