// /api/governance/virtual-keys and /api/governance/budgets on a real gateway (Postgres + Redis): every bad input is
// a 400 in the gateway envelope naming the field, and stores nothing; the value is shown once and only hashed.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerCatalog } from '../../gateway/src/providers/registry.ts';
import { VirtualKeyService } from '../../gateway/src/state/services/governance/virtual-keys.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';

type Json = Record<string, unknown>;
const VK = '/api/governance/virtual-keys';
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ config: { mcp: { allowed_private_networks: ['127.0.0.0/8'] } } });
  // Virtual keys' mcp_configs name an existing MCP client (disabled: nothing listens there).
  const fs = { name: 'fs', connection_type: 'http', connection_string: 'http://127.0.0.1:9/mcp', disabled: true };
  expect((await gw.admin('/api/mcp/client', { method: 'POST', body: fs })).status).toBe(200);
  for (const [provider, id] of [
    ['openai', 'oa-1'],
    ['openai', 'oa-2'],
    ['anthropic', 'an-1'],
  ] as const) {
    if ((await gw.admin(`/api/providers/${provider}`)).status === 404) {
      expect((await gw.admin('/api/providers', { method: 'POST', body: { provider } })).status).toBe(200);
    }
    const key = { id, value: `sk-test-${id}`, models: ['*'] };
    expect((await gw.admin(`/api/providers/${provider}/keys`, { method: 'POST', body: key })).status).toBe(200);
  }
  // Teams and customers have their own API; rows are enough here.
  await gw.rt.state.db.query(`INSERT INTO teams (id, name, source) VALUES ('team-1', 'Team one', 'api')`);
  await gw.rt.state.db.query(`INSERT INTO customers (id, name, source) VALUES ('cust-1', 'Customer one', 'api')`);
});
afterAll(async () => {
  await gw?.close();
});

async function json(res: Response): Promise<Json> {
  return (await res.json()) as Json; // every response of these routes is a JSON object
}

async function send(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await gw.admin(path, body === undefined ? { method } : { method, body });
  return { status: res.status, body: await json(res) };
}

async function stored(): Promise<Json> {
  const { rows } = await gw.rt.state.db.query(
    `SELECT (SELECT count(*) FROM virtual_keys)::int AS keys, (SELECT count(*) FROM vk_provider_configs)::int AS configs,
            (SELECT count(*) FROM budgets)::int AS budgets,
            (SELECT coalesce(jsonb_agg(to_jsonb(v) - 'updated_at' ORDER BY id), '[]') FROM virtual_keys v) AS rows`,
  );
  return { ...rows[0] };
}

/** The envelope's `error` object. */
function errorOf(body: Json): Json {
  return body['error'] as Json; // every error response of /api carries the envelope
}

function expect400(r: { status: number; body: Json }, mention: string, label: string): void {
  expect(r.status, label).toBe(400);
  expect(r.body['status_code']).toBe(400);
  expect(r.body['is_gateway_error']).toBe(true);
  expect(typeof r.body['event_id']).toBe('string');
  const err = errorOf(r.body);
  expect(err['code']).toBe('invalid_request');
  expect(err['type']).toBe('invalid_request_error');
  expect(String(err['message']), label).toContain(mention);
}

const pc = (extra: Json) => ({ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], ...extra });
const mcp = (extra: Json) => ({
  mcp_client_name: 'fs',
  tools_to_execute: ['a', 'b'],
  tools_to_auto_execute: [],
  ...extra,
});

/** [label, body fields on top of a valid name, text the error message must contain]. */
const BAD: [string, Json, string][] = [
  [
    'mixed * in allowed_models',
    { provider_configs: [pc({ allowed_models: ['*', 'gpt-4o'] })] },
    'provider_configs[0].allowed_models',
  ],
  ['mixed * in key_ids', { provider_configs: [pc({ key_ids: ['oa-1', '*'] })] }, 'provider_configs[0].key_ids'],
  [
    'mixed * in tools_to_execute',
    { mcp_configs: [mcp({ tools_to_execute: ['*', 'a'] })] },
    'mcp_configs[0].tools_to_execute',
  ],
  [
    'mixed * in tools_to_auto_execute',
    { mcp_configs: [mcp({ tools_to_auto_execute: ['a', '*'] })] },
    'mcp_configs[0].tools_to_auto_execute',
  ],
  ['mixed * in allowed_extra_headers', { allowed_extra_headers: ['*', 'x-a'] }, 'allowed_extra_headers'],
  [
    'duplicate allowed_models',
    { provider_configs: [pc({ allowed_models: ['gpt-4o', 'gpt-4o'] })] },
    'duplicate value "gpt-4o"',
  ],
  ['duplicate key_ids', { provider_configs: [pc({ key_ids: ['oa-1', 'oa-1'] })] }, 'provider_configs[0].key_ids'],
  [
    'duplicate tools_to_execute',
    { mcp_configs: [mcp({ tools_to_execute: ['a', 'a'] })] },
    'mcp_configs[0].tools_to_execute',
  ],
  [
    'duplicate tools_to_auto_execute',
    { mcp_configs: [mcp({ tools_to_auto_execute: ['a', 'a'] })] },
    'mcp_configs[0].tools_to_auto_execute',
  ],
  [
    'duplicate headers after lower-casing',
    { allowed_extra_headers: ['X-Tenant', 'x-tenant'] },
    'duplicate value "x-tenant"',
  ],
  [
    'auto-execute outside tools_to_execute',
    { mcp_configs: [mcp({ tools_to_auto_execute: ['c'] })] },
    'tools_to_auto_execute',
  ],
  ['duplicate mcp client', { mcp_configs: [mcp({}), mcp({})] }, 'mcp_configs[1].mcp_client_name'],
  ['team and customer', { team_id: 'team-1', customer_id: 'cust-1' }, 'team_id or customer_id, not both'],
  ['unknown team', { team_id: 'no-such-team' }, 'team_id: no team with id no-such-team'],
  ['unknown customer', { customer_id: 'no-such-customer' }, 'customer_id'],
  [
    'unknown MCP client',
    { mcp_configs: [mcp({}), mcp({ mcp_client_name: 'no_such_client' })] },
    'mcp_configs[1].mcp_client_name: there is no MCP client named "no_such_client"',
  ],
  [
    'unknown key id',
    { provider_configs: [pc({ key_ids: ['oa-1', 'missing-key'] })] },
    'provider_configs[0].key_ids[1]',
  ],
  [
    'key id of another provider',
    { provider_configs: [pc({ key_ids: ['an-1'] })] },
    'no key with id an-1 for provider openai',
  ],
  ['unknown provider', { provider_configs: [pc({ provider: 'nosuch' })] }, 'provider_configs[0].provider'],
  ['duplicate provider', { provider_configs: [pc({}), pc({})] }, 'provider_configs[1].provider'],
  ['reset_duration 0d', { budgets: [{ max_limit: 1, reset_duration: '0d' }] }, 'budgets[0].reset_duration'],
  ['reset_duration without unit', { budgets: [{ max_limit: 1, reset_duration: '30' }] }, 'budgets[0].reset_duration'],
  ['reset_duration bad unit', { budgets: [{ max_limit: 1, reset_duration: '1x' }] }, 'budgets[0].reset_duration'],
  ['reset_duration too long', { budgets: [{ max_limit: 1, reset_duration: '10000d' }] }, 'budgets[0].reset_duration'],
  [
    'provider-config budget reset_duration',
    { provider_configs: [pc({ budgets: [{ max_limit: 1, reset_duration: '1 d' }] })] },
    'provider_configs[0].budgets[0].reset_duration',
  ],
  [
    'rate limit reset_duration',
    { rate_limit: { request_max_limit: 1, request_reset_duration: '1s' } },
    'rate_limit.request_reset_duration',
  ],
  ['rate limit without its duration', { rate_limit: { token_max_limit: 100 } }, 'rate_limit.token_reset_duration'],
  ['negative max_limit', { budgets: [{ max_limit: -0.01, reset_duration: '1d' }] }, 'budgets[0].max_limit'],
  ['negative weight', { provider_configs: [pc({ weight: -1 })] }, 'provider_configs[0].weight'],
  [
    'calendar_aligned on a budget',
    { budgets: [{ max_limit: 1, reset_duration: '1M', calendar_aligned: true }] },
    'calendar_aligned',
  ],
  ['header with a space', { allowed_extra_headers: ['x tenant'] }, 'allowed_extra_headers[0]'],
  ['header with a colon', { allowed_extra_headers: ['x-a', 'x:b'] }, 'allowed_extra_headers[1]'],
  ['header pattern', { allowed_extra_headers: ['x-custom-*'] }, 'allowed_extra_headers[0]'],
  ['allowed_keys', { provider_configs: [pc({ allowed_keys: ['oa-1'] })] }, 'allowed_keys was renamed key_ids'],
  ['unknown field', { surprise: 1 }, 'surprise'],
  ['unknown provider-config field', { provider_configs: [pc({ keys: ['oa-1'] })] }, 'provider_configs[0]'],
  ['unknown budget id', { budgets: [{ id: 'never-shown', max_limit: 1, reset_duration: '1d' }] }, 'budgets[0].id'],
  ['bad expires_at', { expires_at: 'next week' }, 'expires_at'],
  ['empty name', { name: ' ' }, 'name'],
];

describe('bad input: 400 in the envelope, nothing stored', () => {
  it.each(BAD)('create: %s', async (label, fields, mention) => {
    const before = await stored();
    expect400(await send('POST', VK, { name: `bad-${label}`, ...fields }), mention, label);
    expect(await stored()).toEqual(before);
  });

  it('create: a value with the wrong prefix or too short, never echoed', async () => {
    const before = await stored();
    for (const value of ['sk-xx-0123456789abcdefghijklmn', 'sk-vk-short', 'sk-vk-has a space 0123456789']) {
      const r = await send('POST', VK, { name: 'bad-value', value });
      expect400(r, 'value: must start with sk-vk-', value);
      expect(JSON.stringify(r.body)).not.toContain(value);
    }
    expect400(await send('POST', VK, []), '(root)', 'array body');
    expect400(await send('POST', VK, { description: 'no name' }), 'name', 'missing name');
    expect(await stored()).toEqual(before);
  });

  it.each(BAD)('update: %s', async (label, fields, mention) => {
    const created = await send('POST', VK, {
      name: `target-${label}`,
      budgets: [{ max_limit: 1, reset_duration: '1d' }],
    });
    expect(created.status).toBe(200);
    const id = String(created.body['id']);
    const view = (await send('GET', `${VK}/${id}`)).body;
    const before = await stored();
    expect400(await send('PUT', `${VK}/${id}`, { name: `target-${label}`, ...fields }), mention, label);
    expect(await stored()).toEqual(before);
    expect((await send('GET', `${VK}/${id}`)).body).toEqual(view);
    expect((await send('DELETE', `${VK}/${id}`)).status).toBe(200);
  });

  it('update: a value cannot be changed', async () => {
    const created = await send('POST', VK, { name: 'keep-my-value' });
    const id = String(created.body['id']);
    const before = await stored();
    const r = await send('PUT', `${VK}/${id}`, { name: 'keep-my-value', value: 'sk-vk-another-value-0123456789' });
    expect400(r, 'the value cannot be changed; create a new key', 'value on update');
    expect(await stored()).toEqual(before);
  });
});

describe('create, list, get, update, delete', () => {
  let id = '';
  let value = '';

  it('creates a key (200, as the reference) showing its value once; only its SHA-256 is stored; the singular budget is ignored', async () => {
    const res = await gw.admin(VK, {
      method: 'POST',
      body: {
        name: 'tenant-a',
        description: 'tenant A',
        budget: { max_limit: 100, reset_duration: '1M' },
        budgets: [
          { max_limit: 10, reset_duration: '1d' },
          { max_limit: 200.5, reset_duration: '1M' },
        ],
        calendar_aligned: true,
        provider_configs: [
          {
            provider: 'openai',
            allowed_models: ['gpt-4o'],
            key_ids: ['oa-1', 'oa-2'],
            weight: 1,
            budgets: [{ max_limit: 5, reset_duration: '1w' }],
          },
          { provider: 'anthropic', allowed_models: ['*'], key_ids: ['*'] },
        ],
        mcp_configs: [{ mcp_client_name: 'fs', tools_to_execute: ['*'], tools_to_auto_execute: ['read'] }],
        allowed_extra_headers: ['X-Tenant'],
        team_id: 'team-1',
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await json(res);
    id = String(body['id']);
    value = String(body['value']);
    expect(value).toMatch(/^sk-vk-[A-Za-z0-9_-]{43}$/);
    expect(body).not.toHaveProperty('value_hash');
    expect(body).toMatchObject({
      name: 'tenant-a',
      value_hint: `${value.slice(0, 8)}…${value.slice(-4)}`,
      is_active: true,
      calendar_aligned: true,
      allowed_extra_headers: ['x-tenant'],
      team_id: 'team-1',
      source: 'api',
    });
    expect(body['budgets']).toHaveLength(2);
    const { rows } = await gw.rt.state.db.query('SELECT * FROM virtual_keys WHERE id = $1', [id]);
    expect(rows[0]?.['value_hash']).toBe(createHash('sha256').update(value).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(value);
  });

  it('lists keys without values, with budgets on the key and on each provider config', async () => {
    const { status, body } = await send('GET', VK);
    expect(status).toBe(200);
    const list = body['virtual_keys'] as Json[]; // the list envelope
    expect(body['total']).toBe(list.length);
    const key = list.find((k) => k['id'] === id);
    expect(JSON.stringify(list)).not.toContain(value);
    expect(key).not.toHaveProperty('value');
    expect(key?.['budgets']).toEqual([
      { id: expect.any(String), max_limit: 10, reset_duration: '1d', virtual_key_id: id },
      { id: expect.any(String), max_limit: 200.5, reset_duration: '1M', virtual_key_id: id },
    ]);
    const pcs = key?.['provider_configs'] as Json[]; // view shape
    expect(pcs).toMatchObject([
      { provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['oa-1', 'oa-2'], weight: 1 },
      { provider: 'anthropic', weight: null, budgets: [] },
    ]);
    expect(pcs[0]?.['budgets']).toEqual([
      { id: expect.any(String), max_limit: 5, reset_duration: '1w', provider_config_id: pcs[0]?.['id'] },
    ]);
  });

  it('gets one key with full budget details', async () => {
    const { status, body } = await send('GET', `${VK}/${id}`);
    expect(status).toBe(200);
    expect(body).not.toHaveProperty('value');
    const all = [
      ...(body['budgets'] as Json[]), // view shape
      ...(body['provider_configs'] as { budgets: Json[] }[]).flatMap((p) => p.budgets), // view shape
    ];
    expect(all).toHaveLength(3);
    for (const b of all) {
      expect(b).toMatchObject({ id: expect.any(String), current_usage: 0 });
      expect('virtual_key_id' in b || 'provider_config_id' in b).toBe(true);
      expect(Date.parse(String(b['next_reset']))).toBeGreaterThan(Date.parse(String(b['last_reset'])));
    }
  });

  it('updates: lists are replaced, a repeated budget id is kept, the value stays', async () => {
    const view = (await send('GET', `${VK}/${id}`)).body;
    const [daily] = view['budgets'] as Json[]; // view shape
    const { status, body } = await send('PUT', `${VK}/${id}`, {
      name: 'tenant-a',
      calendar_aligned: false,
      is_active: false,
      budget: { max_limit: 1, reset_duration: '1d' },
      budgets: [
        { ...daily, max_limit: 20 },
        { max_limit: 1, reset_duration: '1h' },
      ],
      provider_configs: [
        { provider: 'anthropic', allowed_models: ['claude-3-5-sonnet'], key_ids: ['an-1'], weight: 3 },
      ],
      customer_id: 'cust-1',
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ is_active: false, calendar_aligned: false, team_id: null, customer_id: 'cust-1' });
    const budgets = body['budgets'] as Json[]; // view shape
    expect(budgets.map((b) => [b['max_limit'], b['reset_duration']])).toEqual([
      [20, '1d'],
      [1, '1h'],
    ]);
    expect(budgets[0]?.['id']).toBe(daily?.['id']);
    expect(body['provider_configs']).toMatchObject([
      { provider: 'anthropic', key_ids: ['an-1'], weight: 3, budgets: [] },
    ]);
    const { rows } = await gw.rt.state.db.query('SELECT value_hash FROM virtual_keys WHERE id = $1', [id]);
    expect(rows[0]?.['value_hash']).toBe(createHash('sha256').update(value).digest('hex'));
  });

  it('lists every budget with its parent at /api/governance/budgets', async () => {
    const { status, body } = await send('GET', '/api/governance/budgets');
    expect(status).toBe(200);
    const mine = (body['budgets'] as Json[]).filter((b) => b['virtual_key_id'] === id); // list envelope
    expect(mine.map((b) => b['max_limit'])).toEqual([20, 1]);
    expect(mine[0]).toMatchObject({ reset_duration: '1d', current_usage: 0 });
  });

  it('refuses a duplicate name (409) and changes to Kubernetes-owned keys (409)', async () => {
    const dup = await send('POST', VK, { name: 'tenant-a' });
    expect(dup.status).toBe(409);
    expect(errorOf(dup.body)['code']).toBe('conflict');
    const operator = new VirtualKeyService({
      db: gw.rt.state.db,
      catalog: providerCatalog,
      publish: async () => undefined,
      usage: async () => new Map(),
    });
    const owned = await operator.create({ name: 'from-crd' }, { source: 'kubernetes', ownerRef: 'ns/from-crd' });
    const ownedId = String(owned['id']);
    for (const r of [
      await send('PUT', `${VK}/${ownedId}`, { name: 'from-crd', is_active: false }),
      await send('DELETE', `${VK}/${ownedId}`),
    ]) {
      expect(r.status).toBe(409);
      expect(errorOf(r.body)['code']).toBe('owned_by_kubernetes');
      expect(String(errorOf(r.body)['message'])).toContain('kubectl');
    }
    expect((await send('GET', `${VK}/${ownedId}`)).body).toMatchObject({ is_active: true, owner_ref: 'ns/from-crd' });
  });

  it('deletes a key with its budgets; then 404', async () => {
    const del = await send('DELETE', `${VK}/${id}`);
    expect(del).toEqual({ status: 200, body: { deleted: id } });
    const gone = await send('GET', `${VK}/${id}`);
    expect(gone.status).toBe(404);
    expect(errorOf(gone.body)['code']).toBe('not_found');
    const { rows } = await gw.rt.state.db.query(
      `SELECT count(*)::int AS n FROM budgets b LEFT JOIN vk_provider_configs pc ON pc.id = b.provider_config_id
       WHERE b.virtual_key_id = $1 OR pc.virtual_key_id = $1`,
      [id],
    );
    expect(rows[0]?.['n']).toBe(0);
    expect((await send('PUT', `${VK}/${id}`, { name: 'x' })).status).toBe(404);
    expect((await send('DELETE', `${VK}/${id}`)).status).toBe(404);
  });
});
