// Teams and customers (one implementation over two tables) and the rate-limit listing, on real Postgres and
// PGlite: what is stored, what the views show, and that every refused write stores nothing.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import type { Budget } from '../../src/governance/model.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import type { StateError } from '../../src/state/errors.ts';
import type { ChangeEvent } from '../../src/state/events.ts';
import type { BudgetUsage } from '../../src/state/services/governance/budgets.ts';
import { CustomerService } from '../../src/state/services/governance/customers.ts';
import { type OwnerService, readOwnerModels } from '../../src/state/services/governance/owners.ts';
import {
  type RateLimitEntry,
  RateLimitService,
  rateLimitKey,
} from '../../src/state/services/governance/rate-limits.ts';
import { TeamService } from '../../src/state/services/governance/teams.ts';
import { expectStateError } from './governance-helpers.ts';

const drivers = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: async () => openDb({}) },
];

const PERIOD_START = Date.UTC(2030, 0, 1);
const PERIOD_END = Date.UTC(2030, 1, 1);

async function count(db: Db, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return rows[0]?.n ?? 0;
}

async function addVirtualKey(db: Db, id: string, owner: Record<string, string | null>): Promise<void> {
  await db.query(
    `INSERT INTO virtual_keys (id, name, value_hash, value_hint, source, team_id, customer_id)
     VALUES ($1, $1, $1, 'sk-vk-…', 'api', $2, $3)`,
    [id, owner['team_id'] ?? null, owner['customer_id'] ?? null],
  );
}

describe.each(drivers)('teams and customers: $name', (driver) => {
  let db: Db;
  let events: ChangeEvent[];
  let usageCalls: Budget[][];
  const deps = () => ({
    db,
    publish: async (e: ChangeEvent) => {
      events.push(e);
    },
    usage: async (budgets: Budget[]) => {
      usageCalls.push(budgets);
      return new Map<string, BudgetUsage>(
        budgets.map((b) => [b.id, { usedNano: 2_500_000_000, periodStartMs: PERIOD_START, periodEndMs: PERIOD_END }]),
      );
    },
  });

  beforeAll(async () => {
    db = await driver.open();
    await migrate(db);
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    events = [];
    usageCalls = [];
    await db.exec('DELETE FROM virtual_keys; DELETE FROM routing_rules; DELETE FROM teams; DELETE FROM customers;');
  });

  describe.each([
    { kind: 'team', table: 'teams', column: 'team_id', make: () => new TeamService(deps()) },
    { kind: 'customer', table: 'customers', column: 'customer_id', make: () => new CustomerService(deps()) },
  ])('$kind', ({ kind, table, column, make }) => {
    let svc: OwnerService;
    beforeEach(() => {
      svc = make();
    });

    it('creates with budgets and a rate limit; get and list show usage from the usage lookup', async () => {
      const created = await svc.create(
        {
          name: 'platform',
          description: 'the platform group',
          budgets: [
            { max_limit: 100.5, reset_duration: '1M' },
            { max_limit: 5, reset_duration: '1d' },
          ],
          rate_limit: { request_max_limit: 100, request_reset_duration: '1m' },
        },
        { source: 'api' },
      );
      expect(created).toMatchObject({
        name: 'platform',
        description: 'the platform group',
        rate_limit: { request_max_limit: 100, request_reset_duration: '1m' },
        source: 'api',
      });
      const budgets = created['budgets'] as Record<string, unknown>[];
      expect(budgets).toHaveLength(2);
      expect(budgets[0]).toMatchObject({
        max_limit: 100.5,
        reset_duration: '1M',
        current_usage: 2.5,
        last_reset: new Date(PERIOD_START).toISOString(),
        next_reset: new Date(PERIOD_END).toISOString(),
        [column]: created['id'],
      });
      expect(budgets[1]).toMatchObject({ max_limit: 5, reset_duration: '1d' });
      const { rows } = await db.query<{ max_limit_nano: number }>(
        `SELECT max_limit_nano FROM budgets WHERE ${column} = $1 ORDER BY created_at`,
        [created['id']],
      );
      expect(rows.map((r) => r.max_limit_nano)).toEqual([100_500_000_000, 5_000_000_000]);
      expect(events).toEqual([{ kind: 'governance' }]);
      expect(usageCalls.at(-1)?.map((b) => b.owner_kind)).toEqual([kind, kind]);

      const list = await svc.list();
      expect(list.map((t) => t['name'])).toEqual(['platform']);
      expect(list[0]?.['budgets']).toHaveLength(2);
      expect(await svc.get(String(created['id']))).toEqual(list[0]);
    });

    it('refuses bad input with a message naming the field, storing nothing', async () => {
      const bad: [unknown, string][] = [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: 'x', budgets: [{ max_limit: -1, reset_duration: '1d' }] }, 'budgets[0].max_limit'],
        [{ name: 'x', budgets: [{ max_limit: 1, reset_duration: '1 day' }] }, 'budgets[0].reset_duration'],
        [{ name: 'x', budgets: [{ max_limit: 1 }] }, 'budgets[0].reset_duration'],
        [{ name: 'x', budgets: [{ max_limit: 1, reset_duration: '1d', nope: 1 }] }, 'nope'],
        [{ name: 'x', rate_limit: { request_max_limit: 10 } }, 'rate_limit.request_reset_duration'],
        [{ name: 'x', rate_limit: { token_max_limit: 1.5, token_reset_duration: '1h' } }, 'rate_limit.token_max_limit'],
        [{ name: 'x', rate_limit: { token_max_limit: 10, token_reset_duration: '1x' } }, 'token_reset_duration'],
        [{ name: 'x', unknown_field: true }, 'unknown_field'],
        [{ name: 'x', budgets: [{ id: 'b1', max_limit: 1, reset_duration: '1d' }] }, 'budgets[0].id'],
        ['not an object', '(root)'],
      ];
      for (const [body, field] of bad) {
        await expectStateError(svc.create(body, { source: 'api' }), 'invalid', field);
      }
      expect(await count(db, table)).toBe(0);
      expect(await count(db, 'budgets')).toBe(0);
      expect(events).toEqual([]);
    });

    it('refuses a duplicate name with a conflict', async () => {
      await svc.create({ name: 'dup' }, { source: 'api' });
      await expectStateError(svc.create({ name: 'dup', budgets: [] }, { source: 'api' }), 'conflict', 'dup');
      expect(await count(db, table)).toBe(1);
    });

    it('PUT replaces fields; budgets sent with their id keep id, anchor and charges; others are replaced', async () => {
      const created = await svc.create(
        {
          name: 'a',
          budgets: [
            { max_limit: 10, reset_duration: '1d' },
            { max_limit: 20, reset_duration: '1w' },
          ],
          rate_limit: { token_max_limit: 1000, token_reset_duration: '1h' },
        },
        { source: 'api' },
      );
      const id = String(created['id']);
      const [daily, weekly] = created['budgets'] as { id: string }[];
      await db.query(
        `INSERT INTO usage_charges (request_id, budget_id, period_start, cost_nano) VALUES ('r1', $1, now(), 5)`,
        [daily!.id],
      );
      const before = await db.query<{ anchor_at: Date }>('SELECT anchor_at FROM budgets WHERE id = $1', [daily!.id]);

      // The GET view sent back with one edit is a valid PUT body.
      const view = await svc.get(id);
      const budgets = (view['budgets'] as Record<string, unknown>[]).slice(0, 1).map((b) => ({ ...b, max_limit: 15 }));
      const updated = await svc.update(
        id,
        { ...view, name: 'b', budgets: [...budgets, { max_limit: 1, reset_duration: '1M' }], rate_limit: null },
        { source: 'api' },
      );
      expect(updated).toMatchObject({ id, name: 'b', rate_limit: null });
      const after = updated['budgets'] as { id: string; max_limit: number; reset_duration: string }[];
      expect(after.map((b) => [b.max_limit, b.reset_duration])).toEqual([
        [15, '1d'],
        [1, '1M'],
      ]);
      expect(after[0]!.id).toBe(daily!.id);
      expect(after.map((b) => b.id)).not.toContain(weekly!.id);
      const anchor = await db.query<{ anchor_at: Date }>('SELECT anchor_at FROM budgets WHERE id = $1', [daily!.id]);
      expect(anchor.rows[0]!.anchor_at).toEqual(before.rows[0]!.anchor_at);
      expect(await count(db, 'usage_charges WHERE budget_id = $1', [daily!.id])).toBe(1);

      const withoutBudgets = await svc.update(id, { name: 'b' }, { source: 'api' });
      expect(withoutBudgets['budgets']).toEqual([]);
      expect(await count(db, 'usage_charges')).toBe(0);
      expect(events).toHaveLength(3);
    });

    it('refuses a PUT naming an unknown budget, another owner budget or another id, changing nothing', async () => {
      const a = await svc.create({ name: 'a', budgets: [{ max_limit: 1, reset_duration: '1d' }] }, { source: 'api' });
      const b = await svc.create({ name: 'b', budgets: [{ max_limit: 2, reset_duration: '1d' }] }, { source: 'api' });
      const otherBudget = (b['budgets'] as { id: string }[])[0]!.id;
      const id = String(a['id']);
      const cases: [unknown, StateError['code'], string][] = [
        [{ name: 'a2', budgets: [{ id: 'nope', max_limit: 1, reset_duration: '1d' }] }, 'invalid', 'budgets[0].id'],
        [{ name: 'a2', budgets: [{ id: otherBudget, max_limit: 1, reset_duration: '1d' }] }, 'invalid', otherBudget],
        [{ id: 'other', name: 'a2' }, 'invalid', 'path names'],
        [{ name: 'b' }, 'conflict', ''],
      ];
      for (const [body, code, text] of cases)
        await expectStateError(svc.update(id, body, { source: 'api' }), code, text);
      expect(await svc.get(id)).toEqual(a);
      expect(await count(db, 'budgets')).toBe(2);
      await expectStateError(svc.update('missing', { name: 'z' }, { source: 'api' }), 'not_found');
      await expectStateError(svc.get('missing'), 'not_found');
    });

    it('refuses to delete while virtual keys or routing rules reference it, naming how many', async () => {
      const t = await svc.create(
        { name: 'busy', budgets: [{ max_limit: 1, reset_duration: '1d' }] },
        { source: 'api' },
      );
      const id = String(t['id']);
      await addVirtualKey(db, 'vk1', { [column]: id });
      await addVirtualKey(db, 'vk2', { [column]: id });
      await expectStateError(svc.delete(id, { source: 'api' }), 'conflict', '2 virtual keys');
      await db.query('DELETE FROM virtual_keys WHERE id = $1', ['vk2']);
      await expectStateError(svc.delete(id, { source: 'api' }), 'conflict', '1 virtual key;');
      await db.query('DELETE FROM virtual_keys');
      await db.query(
        `INSERT INTO routing_rules (id, name, condition, targets, scope, scope_id) VALUES ('r', 'rule-1', 'true', '[]', $1, $2)`,
        [kind, id],
      );
      await expectStateError(svc.delete(id, { source: 'api' }), 'conflict', 'rule-1');
      expect(await count(db, table)).toBe(1);
      await db.query('DELETE FROM routing_rules');
      await svc.delete(id, { source: 'api' });
      expect(await count(db, table)).toBe(0);
      expect(await count(db, 'budgets')).toBe(0);
      await expectStateError(svc.delete(id, { source: 'api' }), 'not_found');
    });

    it('keeps Kubernetes-owned rows away from the REST API', async () => {
      const owned = await svc.create({ name: 'gitops' }, { source: 'kubernetes', ownerRef: 'ns/gitops' });
      const id = String(owned['id']);
      expect(owned['owner_ref']).toBe('ns/gitops');
      await expectStateError(svc.update(id, { name: 'x' }, { source: 'api' }), 'owned_by_kubernetes', 'kubectl');
      await expectStateError(svc.delete(id, { source: 'api' }), 'owned_by_kubernetes');
      await svc.update(id, { name: 'gitops', description: 'd' }, { source: 'kubernetes', ownerRef: 'ns/gitops' });
      expect((await svc.get(id))['description']).toBe('d');
    });

    it('applies config.json idempotently with stable ids, leaving API rows alone', async () => {
      const file = { name: 'from-file', budgets: [{ max_limit: 3, reset_duration: '1M' }] };
      const id = await svc.applyConfig(file);
      const first = await svc.get(id);
      expect(await svc.applyConfig({ ...file, description: 'again' })).toBe(id);
      const second = await svc.get(id);
      expect(second['description']).toBe('again');
      expect(second['budgets']).toEqual(first['budgets']);
      expect(second['source']).toBe('config');

      const api = await svc.create({ name: 'api-made', description: 'mine' }, { source: 'api' });
      expect(await svc.applyConfig({ name: 'api-made', description: 'file' })).toBe(api['id']);
      expect((await svc.get(String(api['id'])))['description']).toBe('mine');
    });

    it('loads the read model for the snapshot', async () => {
      const t = await svc.create(
        {
          name: 'rm',
          budgets: [{ max_limit: 0.000000001, reset_duration: '1h' }],
          rate_limit: { request_max_limit: 5, request_reset_duration: '1m' },
        },
        { source: 'api' },
      );
      const models = await readOwnerModels(db, svc.kind);
      const m = models.get(String(t['id']));
      expect(m).toMatchObject({ name: 'rm', rate_limit: { request_max_limit: 5, request_reset_duration: '1m' } });
      expect(m?.budgets).toEqual([
        expect.objectContaining({ owner_kind: kind, owner_id: t['id'], max_limit_nano: 1, calendar_aligned: false }),
      ]);
    });
  });

  it('lists every rate limit with its owner and the counters the lookup returns', async () => {
    const team = await new TeamService(deps()).create(
      { name: 'team-a', rate_limit: { request_max_limit: 10, request_reset_duration: '1m' } },
      { source: 'api' },
    );
    await new TeamService(deps()).create({ name: 'no-limit' }, { source: 'api' });
    const customer = await new CustomerService(deps()).create(
      { name: 'cust-a', rate_limit: { token_max_limit: 5000, token_reset_duration: '1h' } },
      { source: 'api' },
    );
    await db.query(
      `INSERT INTO virtual_keys (id, name, value_hash, value_hint, source, rate_limit)
       VALUES ('vk1', 'key-one', 'h1', 'sk-vk-…', 'api', $1)`,
      [
        JSON.stringify({
          request_max_limit: 3,
          request_reset_duration: '1h',
          token_max_limit: 9,
          token_reset_duration: '1d',
        }),
      ],
    );
    await db.query(
      `INSERT INTO vk_provider_configs (id, virtual_key_id, provider, rate_limit, position)
       VALUES ('pc1', 'vk1', 'openai', $1, 0), ('pc2', 'vk1', 'anthropic', NULL, 1)`,
      [JSON.stringify({ token_max_limit: 100, token_reset_duration: '1m' })],
    );
    let seen: RateLimitEntry[] = [];
    const svc = new RateLimitService({
      db,
      counts: async (entries) => {
        seen = entries;
        return new Map([
          [
            rateLimitKey({ owner_kind: 'team', owner_id: String(team['id']) }),
            { requests: { used: 4, resetAtMs: PERIOD_END } },
          ],
          [
            rateLimitKey({ owner_kind: 'provider_config', owner_id: 'pc1' }),
            { tokens: { used: 42, resetAtMs: PERIOD_START } },
          ],
        ]);
      },
    });
    const list = await svc.list();
    expect(seen).toHaveLength(4);
    expect(list).toEqual([
      {
        owner_kind: 'virtual_key',
        owner_id: 'vk1',
        owner_name: 'key-one',
        request_max_limit: 3,
        request_reset_duration: '1h',
        request_current_usage: 0,
        request_reset_at: null,
        token_max_limit: 9,
        token_reset_duration: '1d',
        token_current_usage: 0,
        token_reset_at: null,
      },
      {
        owner_kind: 'provider_config',
        owner_id: 'pc1',
        owner_name: 'key-one/openai',
        virtual_key_id: 'vk1',
        provider: 'openai',
        request_max_limit: null,
        request_reset_duration: null,
        request_current_usage: null,
        request_reset_at: null,
        token_max_limit: 100,
        token_reset_duration: '1m',
        token_current_usage: 42,
        token_reset_at: new Date(PERIOD_START).toISOString(),
      },
      expect.objectContaining({
        owner_kind: 'team',
        owner_id: team['id'],
        owner_name: 'team-a',
        request_max_limit: 10,
        request_current_usage: 4,
        request_reset_at: new Date(PERIOD_END).toISOString(),
        token_max_limit: null,
      }),
      expect.objectContaining({
        owner_kind: 'customer',
        owner_id: customer['id'],
        owner_name: 'cust-a',
        token_max_limit: 5000,
        token_current_usage: 0,
      }),
    ]);
  });

  it('asks for no counters when nothing is limited', async () => {
    const svc = new RateLimitService({
      db,
      counts: async () => {
        throw new Error('must not be called');
      },
    });
    expect(await svc.list()).toEqual([]);
  });
});
