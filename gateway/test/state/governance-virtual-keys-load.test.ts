// loadGovernance on a real Postgres database: every governance table into the read model the snapshot holds.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { createSecretBox } from '../../src/crypto/secretbox.ts';
import { providerCatalog } from '../../src/providers/registry.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import { loadGovernance, loadGovernanceConsistent } from '../../src/state/services/governance/load.ts';
import { VirtualKeyService } from '../../src/state/services/governance/virtual-keys.ts';
import { ProviderService } from '../../src/state/services/providers.ts';

const API = { source: 'api' } as const;
/** The same tests on Postgres and on embedded PGlite. */
const DRIVERS = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: () => openDb({}) },
];

let db: Db;
let svc: VirtualKeyService;

describe.each(DRIVERS)('on $name', (driver) => {
  beforeAll(async () => {
    db = await driver.open();
    await migrate(db);
    const publish = async () => undefined;
    const providers = new ProviderService({ db, box: createSecretBox(undefined), catalog: providerCatalog, publish });
    await providers.create({ provider: 'openai' }, API);
    await providers.addKey('openai', { id: 'oa-1', value: 'sk-openai-1', models: ['*'] }, API);
    // mcp_configs name existing MCP clients.
    await db.query(
      `INSERT INTO mcp_clients (id, name, connection_type, connection_string, auth_type, source)
       VALUES ('mcp-fs', 'fs', 'http', 'https://fs.example.com/mcp', 'none', 'api')`,
    );
    svc = new VirtualKeyService({ db, catalog: providerCatalog, publish, usage: async () => new Map() });
  });
  afterAll(async () => {
    await db?.close();
  });

  describe('loadGovernance', () => {
    it('reads empty tables into an empty model', async () => {
      const m = await loadGovernance(db);
      expect(m.virtualKeysByHash.size).toBe(0);
      expect(m.virtualKeysById.size).toBe(0);
      expect(m.teams.size).toBe(0);
      expect(m.customers.size).toBe(0);
      expect(m.routingRules).toEqual([]);
      expect(m.pricingOverrides).toEqual([]);
    });

    it('builds keys by hash and id with provider configs and budgets, calendar alignment from the key', async () => {
      await db.query(`INSERT INTO teams (id, name, source, rate_limit) VALUES ('t1', 'T1', 'api', $1)`, [
        JSON.stringify({ request_max_limit: 10, request_reset_duration: '1m' }),
      ]);
      await db.query(`INSERT INTO customers (id, name, source) VALUES ('c1', 'C1', 'api')`);
      await db.query(`INSERT INTO budgets (id, team_id, max_limit_nano, reset_duration) VALUES ('tb', 't1', 5, '1d')`);
      await db.query(
        `INSERT INTO budgets (id, customer_id, max_limit_nano, reset_duration) VALUES ('cb', 'c1', 6, '1M')`,
      );
      const created = await svc.create(
        {
          name: 'k1',
          expires_at: '2031-05-06T07:08:09Z',
          calendar_aligned: true,
          team_id: 't1',
          budgets: [{ max_limit: 0.5, reset_duration: '1d' }],
          allowed_extra_headers: ['x-a'],
          mcp_configs: [{ mcp_client_name: 'fs', tools_to_execute: ['*'], tools_to_auto_execute: ['read'] }],
          rate_limit: { token_max_limit: 100, token_reset_duration: '1h' },
          provider_configs: [
            {
              provider: 'openai',
              allowed_models: ['gpt-4o'],
              key_ids: ['oa-1'],
              weight: 1.5,
              budgets: [{ max_limit: 2, reset_duration: '1w' }],
            },
            { provider: 'anthropic', allowed_models: ['*'], key_ids: ['*'] },
          ],
        },
        API,
      );
      const off = await svc.create(
        { name: 'k2', is_active: false, budgets: [{ max_limit: 1, reset_duration: '1h' }] },
        API,
      );

      const m = await loadGovernanceConsistent(db);
      const hash = createHash('sha256').update(String(created['value'])).digest('hex');
      const k1 = m.virtualKeysByHash.get(hash);
      expect(k1).toBe(m.virtualKeysById.get(String(created['id'])));
      const pcId = (created['provider_configs'] as { id: string }[])[0]?.id; // view shape
      expect(k1).toEqual({
        id: created['id'],
        name: 'k1',
        is_active: true,
        expires_at_ms: Date.parse('2031-05-06T07:08:09Z'),
        calendar_aligned: true,
        rate_limit: { token_max_limit: 100, token_reset_duration: '1h' },
        allowed_extra_headers: ['x-a'],
        mcp_configs: [{ mcp_client_name: 'fs', tools_to_execute: ['*'], tools_to_auto_execute: ['read'] }],
        team_id: 't1',
        customer_id: null,
        provider_configs: [
          {
            id: pcId,
            provider: 'openai',
            allowed_models: ['gpt-4o'],
            key_ids: ['oa-1'],
            weight: 1.5,
            rate_limit: null,
            budgets: [
              {
                id: expect.any(String),
                owner_kind: 'provider_config',
                owner_id: pcId,
                max_limit_nano: 2_000_000_000,
                reset_duration: '1w',
                anchor_ms: expect.any(Number),
                calendar_aligned: true,
              },
            ],
          },
          {
            id: expect.any(String),
            provider: 'anthropic',
            allowed_models: ['*'],
            key_ids: ['*'],
            weight: null,
            rate_limit: null,
            budgets: [],
          },
        ],
        budgets: [
          {
            id: expect.any(String),
            owner_kind: 'virtual_key',
            owner_id: created['id'],
            max_limit_nano: 500_000_000,
            reset_duration: '1d',
            anchor_ms: expect.any(Number),
            calendar_aligned: true,
          },
        ],
      });
      const k2 = m.virtualKeysById.get(String(off['id']));
      expect(k2).toMatchObject({
        is_active: false,
        expires_at_ms: null,
        provider_configs: [],
        calendar_aligned: false,
      });
      expect(k2?.budgets[0]).toMatchObject({ owner_kind: 'virtual_key', calendar_aligned: false });
      expect(m.virtualKeysByHash.size).toBe(2);

      expect(m.teams.get('t1')).toMatchObject({
        name: 'T1',
        rate_limit: { request_max_limit: 10, request_reset_duration: '1m' },
        budgets: [{ id: 'tb', owner_kind: 'team', owner_id: 't1', max_limit_nano: 5, calendar_aligned: false }],
      });
      expect(m.customers.get('c1')?.budgets).toMatchObject([{ id: 'cb', owner_kind: 'customer', max_limit_nano: 6 }]);
    });

    it('sorts enabled routing rules by priority and parses override prices into numbers', async () => {
      const rule = (id: string, priority: number, enabled = true) =>
        db.query(
          `INSERT INTO routing_rules (id, name, condition, targets, fallbacks, scope, scope_id, priority, enabled)
           VALUES ($1, $1, 'true', $2, $3, 'global', NULL, $4, $5)`,
          [
            id,
            JSON.stringify([{ provider: 'openai', model: 'gpt-4o', weight: 1 }]),
            JSON.stringify(['anthropic/claude']),
            priority,
            enabled,
          ],
        );
      await rule('low', 1);
      await rule('high', 10);
      await rule('off', 100, false);
      await rule('mid', 5);
      await db.query(
        `INSERT INTO pricing_overrides (id, scope, scope_id, provider, model, input_cost_per_token, output_cost_per_token,
           cache_read_cost_per_token) VALUES ('p1', 'provider', 'openai', 'openai', 'gpt-4o', '0.0000025', '0.00001', '0.00000125')`,
      );
      const m = await loadGovernance(db);
      expect(m.routingRules.map((r) => r.id)).toEqual(['high', 'mid', 'low']);
      expect(m.routingRules[0]).toEqual({
        id: 'high',
        name: 'high',
        condition: 'true',
        targets: [{ provider: 'openai', model: 'gpt-4o', weight: 1 }],
        fallbacks: ['anthropic/claude'],
        scope: 'global',
        scope_id: null,
        priority: 10,
      });
      expect(m.pricingOverrides).toEqual([
        {
          id: 'p1',
          scope: 'provider',
          scope_id: 'openai',
          provider: 'openai',
          model: 'gpt-4o',
          price: { input: 0.0000025, output: 0.00001, cache_read: 0.00000125 },
        },
      ]);
    });
  });
});
