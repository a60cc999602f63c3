// VirtualKeyService and BudgetService on a real Postgres database: what is stored, what is shown, what is refused.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { createSecretBox } from '../../src/crypto/secretbox.ts';
import type { Budget } from '../../src/governance/model.ts';
import { providerCatalog } from '../../src/providers/registry.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import { StateError } from '../../src/state/errors.ts';
import type { ChangeEvent } from '../../src/state/events.ts';
import type { Actor } from '../../src/state/services/catalog.ts';
import { BudgetService, type BudgetUsage } from '../../src/state/services/governance/budgets.ts';
import { VirtualKeyService } from '../../src/state/services/governance/virtual-keys.ts';
import { ProviderService } from '../../src/state/services/providers.ts';

const API: Actor = { source: 'api' };
const K8S: Actor = { source: 'kubernetes', ownerRef: 'default/team-a-key' };
const HOUR = 3_600_000;

/** The same tests on Postgres and on embedded PGlite. */
const DRIVERS = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: () => openDb({}) },
];

let db: Db;
let svc: VirtualKeyService;
let budgets: BudgetService;
const events: ChangeEvent[] = [];
const usageCalls: Budget[][] = [];

/** 1.5 USD used in a period starting at the budget's anchor and lasting an hour. */
async function usage(list: Budget[]): Promise<Map<string, BudgetUsage>> {
  usageCalls.push(list);
  return new Map(
    list.map((b) => [b.id, { usedNano: 1_500_000_000, periodStartMs: b.anchor_ms, periodEndMs: b.anchor_ms + HOUR }]),
  );
}

async function counts(): Promise<Record<string, number>> {
  const { rows } = await db.query<{ k: number; p: number; b: number }>(
    `SELECT (SELECT count(*) FROM virtual_keys)::int AS k, (SELECT count(*) FROM vk_provider_configs)::int AS p,
            (SELECT count(*) FROM budgets)::int AS b`,
  );
  return { ...rows[0] };
}

async function refused(fn: () => Promise<unknown>, code: StateError['code']): Promise<StateError> {
  const err = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StateError);
  const se = err as StateError; // checked by the assertion above
  expect(se.code).toBe(code);
  return se;
}

const FULL = {
  name: 'full',
  description: 'everything set',
  expires_at: '2030-01-01T00:00:00Z',
  calendar_aligned: true,
  budget: { max_limit: 1, reset_duration: '1d' },
  budgets: [
    { max_limit: 12.345678901, reset_duration: '30d' },
    { max_limit: 1, reset_duration: '1h' },
  ],
  rate_limit: { request_max_limit: 100, request_reset_duration: '1m' },
  provider_configs: [
    {
      provider: 'openai',
      allowed_models: ['gpt-4o', 'gpt-4o-mini'],
      key_ids: ['oa-1'],
      weight: 2,
      budgets: [{ max_limit: 5, reset_duration: '1w' }],
      rate_limit: { token_max_limit: 1000, token_reset_duration: '1h' },
    },
    { provider: 'anthropic', allowed_models: ['*'], key_ids: ['*'] },
  ],
  mcp_configs: [{ mcp_client_name: 'files', tools_to_execute: ['read', 'write'], tools_to_auto_execute: ['read'] }],
  allowed_extra_headers: ['X-Trace-Id', 'x-tenant'],
  team_id: 'team-1',
};

describe.each(DRIVERS)('on $name', (driver) => {
  beforeAll(async () => {
    db = await driver.open();
    await migrate(db);
    const providers = new ProviderService({
      db,
      box: createSecretBox(undefined),
      catalog: providerCatalog,
      publish: async () => undefined,
    });
    await providers.create({ provider: 'openai' }, API);
    await providers.create({ provider: 'anthropic' }, API);
    await providers.addKey('openai', { id: 'oa-1', value: 'sk-openai-1', models: ['*'] }, API);
    await providers.addKey('openai', { id: 'oa-2', value: 'sk-openai-2', models: ['*'] }, API);
    await providers.addKey('anthropic', { id: 'an-1', value: 'sk-ant-1', models: ['*'] }, API);
    await db.query(`INSERT INTO teams (id, name, source) VALUES ('team-1', 'Team one', 'api')`);
    await db.query(`INSERT INTO customers (id, name, source) VALUES ('cust-1', 'Customer one', 'api')`);
    // mcp_configs name existing MCP clients.
    await db.query(
      `INSERT INTO mcp_clients (id, name, connection_type, connection_string, auth_type, source)
       VALUES ('mcp-files', 'files', 'http', 'https://files.example.com/mcp', 'none', 'api')`,
    );
    const publish = async (e: ChangeEvent) => {
      events.push(e);
    };
    svc = new VirtualKeyService({ db, catalog: providerCatalog, publish, usage });
    budgets = new BudgetService({ db, usage });
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(() => {
    events.length = 0;
    usageCalls.length = 0;
  });

  describe('VirtualKeyService.create', () => {
    it('generates a value, shows it once and stores only its SHA-256 and a hint', async () => {
      const created = await svc.create({ name: 'generated' }, API);
      const value = String(created['value']);
      expect(value).toMatch(/^sk-vk-[A-Za-z0-9_-]{43}$/);
      expect(created['value_hint']).toBe(`${value.slice(0, 8)}…${value.slice(-4)}`);
      expect(created).not.toHaveProperty('value_hash');
      expect(created).toMatchObject({ is_active: true, provider_configs: [], budgets: [], source: 'api' });
      const { rows } = await db.query('SELECT * FROM virtual_keys WHERE id = $1', [created['id']]);
      expect(rows[0]?.['value_hash']).toBe(createHash('sha256').update(value).digest('hex'));
      expect(JSON.stringify(rows[0])).not.toContain(value);
      // Only this key changed: pods reload just its rows.
      expect(events).toEqual([{ kind: 'governance', virtual_key_ids: [created['id']] }]);

      const shown = await svc.get(String(created['id']));
      expect(shown).not.toHaveProperty('value');
      expect(shown).not.toHaveProperty('value_hash');
    });

    it('stores a caller-chosen value (the operator passes one from a Secret), legacy prefix included', async () => {
      const value = 'sk-gw-legacy-value-0123456789';
      const created = await svc.create({ name: 'legacy', value }, K8S);
      expect(created['value']).toBe(value);
      expect(created).toMatchObject({ source: 'kubernetes', owner_ref: 'default/team-a-key' });
      await refused(() => svc.create({ name: 'legacy-again', value }, API), 'conflict');
    });

    it('stores every field; budgets in nano-USD; the old singular budget is ignored', async () => {
      const created = await svc.create(FULL, API);
      const id = String(created['id']);
      expect(created).toMatchObject({
        name: 'full',
        description: 'everything set',
        expires_at: '2030-01-01T00:00:00.000Z',
        calendar_aligned: true,
        rate_limit: { request_max_limit: 100, request_reset_duration: '1m' },
        allowed_extra_headers: ['x-trace-id', 'x-tenant'],
        mcp_configs: FULL.mcp_configs,
        team_id: 'team-1',
        customer_id: null,
        provider_configs: [
          { provider: 'openai', allowed_models: ['gpt-4o', 'gpt-4o-mini'], key_ids: ['oa-1'], weight: 2 },
          { provider: 'anthropic', allowed_models: ['*'], key_ids: ['*'], weight: null, rate_limit: null, budgets: [] },
        ],
      });
      const { rows } = await db.query<{ max_limit_nano: number; reset_duration: string }>(
        'SELECT max_limit_nano, reset_duration FROM budgets WHERE virtual_key_id = $1 ORDER BY created_at',
        [id],
      );
      expect(rows).toEqual([
        { max_limit_nano: 12_345_678_901, reset_duration: '30d' },
        { max_limit_nano: 1_000_000_000, reset_duration: '1h' },
      ]);
      const keyBudgets = created['budgets'] as Record<string, unknown>[]; // the view's budgets are objects
      expect(keyBudgets).toHaveLength(2);
      expect(keyBudgets[0]).toMatchObject({
        max_limit: 12.345678901,
        reset_duration: '30d',
        virtual_key_id: id,
        current_usage: 1.5,
      });
      const pcs = created['provider_configs'] as { id: string; budgets: Record<string, unknown>[] }[]; // view shape
      expect(pcs[0]?.budgets[0]).toMatchObject({ max_limit: 5, reset_duration: '1w', provider_config_id: pcs[0]?.id });
      expect(pcs[0]?.budgets[0]).not.toHaveProperty('virtual_key_id');
      // usage is asked for every budget of the key, each carrying the key's calendar alignment
      expect(usageCalls.at(-1)?.map((b) => [b.owner_kind, b.calendar_aligned])).toEqual([
        ['virtual_key', true],
        ['virtual_key', true],
        ['provider_config', true],
      ]);
    });

    it('refuses bad input with a message naming the field and stores nothing', async () => {
      const before = await counts();
      const cases: [unknown, string][] = [
        [
          { name: 'x', provider_configs: [{ provider: 'openai', allowed_models: ['*', 'gpt-4o'] }] },
          'provider_configs[0].allowed_models',
        ],
        [
          { name: 'x', provider_configs: [{ provider: 'openai', key_ids: ['oa-1', 'oa-1'] }] },
          'provider_configs[0].key_ids',
        ],
        [
          { name: 'x', provider_configs: [{ provider: 'openai', key_ids: ['nope'] }] },
          'provider_configs[0].key_ids[0]',
        ],
        [
          { name: 'x', provider_configs: [{ provider: 'openai', key_ids: ['an-1'] }] },
          'provider_configs[0].key_ids[0]',
        ],
        [{ name: 'x', provider_configs: [{ provider: 'openai', allowed_keys: ['oa-1'] }] }, 'key_ids'],
        [{ name: 'x', provider_configs: [{ provider: 'nosuch' }] }, 'provider_configs[0].provider'],
        [
          { name: 'x', provider_configs: [{ provider: 'openai' }, { provider: 'openai' }] },
          'provider_configs[1].provider',
        ],
        [{ name: 'x', team_id: 'team-1', customer_id: 'cust-1' }, 'customer_id'],
        [{ name: 'x', team_id: 'no-team' }, 'team_id'],
        [{ name: 'x', customer_id: 'no-customer' }, 'customer_id'],
        [{ name: 'x', budgets: [{ max_limit: 1, reset_duration: '0d' }] }, 'budgets[0].reset_duration'],
        [{ name: 'x', budgets: [{ max_limit: -1, reset_duration: '1d' }] }, 'budgets[0].max_limit'],
        [{ name: 'x', budgets: [{ max_limit: 1, reset_duration: '1d', calendar_aligned: true }] }, 'calendar_aligned'],
        [{ name: 'x', budgets: [{ id: 'unknown', max_limit: 1, reset_duration: '1d' }] }, 'budgets[0].id'],
        [{ name: 'x', rate_limit: { request_max_limit: 5 } }, 'rate_limit.request_reset_duration'],
        [{ name: 'x', allowed_extra_headers: ['bad header'] }, 'allowed_extra_headers[0]'],
        [{ name: 'x', allowed_extra_headers: ['X-A', 'x-a'] }, 'allowed_extra_headers'],
        [
          { name: 'x', mcp_configs: [{ mcp_client_name: 'm', tools_to_execute: ['a'], tools_to_auto_execute: ['b'] }] },
          'tools_to_auto_execute',
        ],
        [
          {
            name: 'x',
            mcp_configs: [{ mcp_client_name: 'files', tools_to_execute: ['*'] }, { mcp_client_name: 'gone' }],
          },
          'mcp_configs[1].mcp_client_name: there is no MCP client named "gone"',
        ],
        [{ name: 'x', value: 'sk-vk-short' }, 'value'],
        [{ name: 'x', value: 'sk-other-0123456789abcdefghij' }, 'value'],
        [{ name: 'x', surprise: true }, 'surprise'],
        [{ description: 'no name' }, 'name'],
        [{ name: 'full' }, 'full'],
      ];
      for (const [body, mention] of cases) {
        const err = await refused(() => svc.create(body, API), mention === 'full' ? 'conflict' : 'invalid');
        expect(err.message, JSON.stringify(body)).toContain(mention);
        expect(err.message).not.toContain('sk-other-0123456789abcdefghij');
      }
      expect(await counts()).toEqual(before);
      expect(events).toEqual([]);
    });
  });

  describe('VirtualKeyService.update', () => {
    it('replaces the lists; a repeated budget id keeps its row; provider configs keep their id per provider', async () => {
      const created = await svc.create({ ...FULL, name: 'to-update' }, API);
      const id = String(created['id']);
      const [keep, drop] = created['budgets'] as { id: string }[]; // view shape
      const pcs = created['provider_configs'] as { id: string; provider: string }[]; // view shape
      await db.query(
        `INSERT INTO usage_charges (request_id, budget_id, period_start, cost_nano) VALUES ('r1', $1, now(), 7)`,
        [keep?.id],
      );

      const updated = await svc.update(
        id,
        {
          name: 'updated',
          calendar_aligned: false,
          budgets: [
            { id: keep?.id, max_limit: 99, reset_duration: '1M' },
            { max_limit: 3, reset_duration: '1Y' },
          ],
          provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['oa-1', 'oa-2'], weight: null }],
        },
        API,
      );
      expect(updated).toMatchObject({
        name: 'updated',
        calendar_aligned: false,
        team_id: null,
        allowed_extra_headers: [],
      });
      const ub = updated['budgets'] as { id: string; max_limit: number; reset_duration: string }[]; // view shape
      expect(ub.map((b) => [b.max_limit, b.reset_duration])).toEqual([
        [99, '1M'],
        [3, '1Y'],
      ]);
      expect(ub[0]?.id).toBe(keep?.id);
      expect(ub.map((b) => b.id)).not.toContain(drop?.id);
      const upcs = updated['provider_configs'] as { id: string; provider: string; budgets: unknown[] }[]; // view shape
      expect(upcs).toHaveLength(1);
      expect(upcs[0]).toMatchObject({ id: pcs[0]?.id, provider: 'openai', weight: null, budgets: [] });
      const charges = await db.query('SELECT * FROM usage_charges WHERE budget_id = $1', [keep?.id]);
      expect(charges.rowCount).toBe(1);
      expect(usageCalls.at(-1)?.every((b) => !b.calendar_aligned)).toBe(true);
      expect(events).toEqual([
        { kind: 'governance', virtual_key_ids: [id] },
        { kind: 'governance', virtual_key_ids: [id] },
      ]);
    });

    it('accepts its own GET view back (read-only fields ignored) and refuses a value or unknown budget ids', async () => {
      const created = await svc.create({ ...FULL, name: 'round-trip' }, API);
      const id = String(created['id']);
      const { value: _value, ...view } = created;
      const again = await svc.update(id, { ...view, description: 'edited' }, API);
      expect(again['description']).toBe('edited');
      expect(again['budgets']).toEqual(created['budgets']);
      expect(again['provider_configs']).toEqual(created['provider_configs']);
      const before = await counts();
      events.length = 0;
      const err = await refused(
        () => svc.update(id, { ...view, value: 'sk-vk-0123456789abcdefghijkl' }, API),
        'invalid',
      );
      expect(err.message).toContain('the value cannot be changed; create a new key');
      await refused(
        () =>
          svc.update(id, { name: 'round-trip', budgets: [{ id: 'nope', max_limit: 1, reset_duration: '1d' }] }, API),
        'invalid',
      );
      await refused(() => svc.update(id, { name: 'round-trip', id: 'other' }, API), 'invalid');
      await refused(() => svc.update('missing', { name: 'x' }, API), 'not_found');
      expect(await counts()).toEqual(before);
      expect(events).toEqual([]);
      expect((await svc.get(id))['description']).toBe('edited');
    });

    it('refuses REST changes to keys owned by Kubernetes; the operator may change them', async () => {
      const created = await svc.create({ name: 'owned' }, K8S);
      const id = String(created['id']);
      await refused(() => svc.update(id, { name: 'owned', is_active: false }, API), 'owned_by_kubernetes');
      await refused(() => svc.delete(id, API), 'owned_by_kubernetes');
      expect((await svc.update(id, { name: 'owned', is_active: false }, K8S))['is_active']).toBe(false);
      await svc.delete(id, K8S);
      await refused(() => svc.get(id), 'not_found');
    });
  });

  describe('VirtualKeyService.list and delete; BudgetService.list', () => {
    it('lists keys without values, with budgets on the key and on each provider config', async () => {
      const list = await svc.list();
      const full = list.find((k) => k['name'] === 'full');
      expect(full).toBeDefined();
      for (const k of list) {
        expect(k).not.toHaveProperty('value');
        expect(k).not.toHaveProperty('value_hash');
        expect(String(k['value_hint'])).toMatch(/^sk-(vk|gw)-.{2}….{4}$/);
      }
      expect(full?.['budgets']).toEqual([
        { id: expect.any(String), max_limit: 12.345678901, reset_duration: '30d', virtual_key_id: full?.['id'] },
        { id: expect.any(String), max_limit: 1, reset_duration: '1h', virtual_key_id: full?.['id'] },
      ]);
      const pcs = full?.['provider_configs'] as { id: string; budgets: unknown[] }[]; // view shape
      expect(pcs[0]?.budgets).toEqual([
        { id: expect.any(String), max_limit: 5, reset_duration: '1w', provider_config_id: pcs[0]?.id },
      ]);
    });

    it('lists every budget with its parent, limit and usage', async () => {
      await db.query(
        `INSERT INTO budgets (id, team_id, max_limit_nano, reset_duration) VALUES ('team-budget', 'team-1', 2000000000, '1d')`,
      );
      const all = await budgets.list();
      const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM budgets');
      expect(all).toHaveLength(rows[0]?.n ?? -1);
      const team = all.find((b) => b['id'] === 'team-budget');
      expect(team).toMatchObject({ team_id: 'team-1', max_limit: 2, reset_duration: '1d', current_usage: 1.5 });
      const last = new Date(String(team?.['last_reset'])).getTime();
      expect(new Date(String(team?.['next_reset'])).getTime() - last).toBe(HOUR);
      const pcBudget = all.find((b) => 'provider_config_id' in b);
      expect(pcBudget).toBeDefined();
      expect(usageCalls.at(-1)?.find((b) => b.owner_kind === 'provider_config')?.calendar_aligned).toBe(true);
      await db.query(`DELETE FROM budgets WHERE id = 'team-budget'`);
    });

    it('deletes a key with its provider configs and budgets', async () => {
      const created = await svc.create({ ...FULL, name: 'to-delete' }, API);
      const id = String(created['id']);
      const before = await counts();
      await svc.delete(id, API);
      expect(await counts()).toEqual({
        k: (before['k'] ?? 0) - 1,
        p: (before['p'] ?? 0) - 2,
        b: (before['b'] ?? 0) - 3,
      });
      await refused(() => svc.get(id), 'not_found');
      await refused(() => svc.delete(id, API), 'not_found');
    });
  });
});
