// The services are the one write path (REST API, config.json, operator): hostile ids, names and values are refused
// there as `invalid` naming the field, before any query, on Postgres and on PGlite; nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { createSecretBox } from '../../src/crypto/secretbox.ts';
import { providerCatalog } from '../../src/providers/registry.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import type { Actor } from '../../src/state/services/catalog.ts';
import { BudgetService } from '../../src/state/services/governance/budgets.ts';
import { OwnerService } from '../../src/state/services/governance/owners.ts';
import { PricingOverrideService } from '../../src/state/services/governance/pricing-overrides.ts';
import { RoutingRuleService } from '../../src/state/services/governance/routing-rules.ts';
import { VirtualKeyService } from '../../src/state/services/governance/virtual-keys.ts';
import { OwnedResources } from '../../src/state/services/kubernetes.ts';
import { ProviderService } from '../../src/state/services/providers.ts';
import { expectStateError } from './governance-helpers.ts';

const DRIVERS = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: () => openDb({}) },
];
const API: Actor = { source: 'api' };
const OPERATOR: Actor = { source: 'kubernetes', ownerRef: 'ns/res' };
/** Path parameters no row can carry: each is refused before it reaches a query. */
const BAD_IDS = ['', '\u0000', 'a\u0000b', 'a\r\nb', 'a\u007f', 'a\u0085', '\ud800', 'x'.repeat(129)];

describe.each(DRIVERS)('hostile input to the services on $name', ({ open }) => {
  let db: Db;
  let providers: ProviderService;
  let virtualKeys: VirtualKeyService;
  let teams: OwnerService;
  let budgets: BudgetService;
  let pricing: PricingOverrideService;
  let rules: RoutingRuleService;
  let owned: OwnedResources;

  beforeAll(async () => {
    db = await open();
    await migrate(db);
    const publish = async () => {};
    const usage = async () => new Map();
    providers = new ProviderService({ db, box: createSecretBox(undefined), catalog: providerCatalog, publish });
    virtualKeys = new VirtualKeyService({ db, catalog: providerCatalog, publish, usage });
    teams = new OwnerService('team', { db, publish, usage });
    budgets = new BudgetService({ db, usage });
    pricing = new PricingOverrideService({ db, catalog: providerCatalog, publish });
    rules = new RoutingRuleService({ db, catalog: providerCatalog, publish });
    owned = new OwnedResources({ db, providers, virtualKeys });
    await providers.create({ provider: 'openai' }, API);
  });
  afterAll(async () => {
    await db?.close();
  });

  async function counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const table of ['providers', 'provider_keys', 'virtual_keys', 'teams', 'budgets', 'routing_rules']) {
      // Fixed table names, never input.
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      out[table] = rows[0]?.n ?? 0;
    }
    return out;
  }

  it('refuses a bad path id or name with `invalid` naming the parameter, for reads and writes', async () => {
    const before = await counts();
    for (const bad of BAD_IDS) {
      const label = JSON.stringify(bad).slice(0, 20);
      const calls: [string, () => Promise<unknown>][] = [
        ['provider', () => providers.get(bad)],
        ['provider', () => providers.update(bad, {}, OPERATOR)],
        ['provider', () => providers.delete(bad, OPERATOR)],
        ['provider', () => providers.listKeys(bad)],
        ['provider', () => providers.addKey(bad, { name: 'k', value: 'sk-1' }, OPERATOR)],
        ['key_id', () => providers.getKey('openai', bad)],
        ['key_id', () => providers.updateKey('openai', bad, { value: 'sk-1' }, OPERATOR)],
        ['key_id', () => providers.deleteKey('openai', bad, OPERATOR)],
        ['id', () => virtualKeys.get(bad)],
        ['id', () => virtualKeys.update(bad, { name: 'x' }, OPERATOR)],
        ['id', () => virtualKeys.setValue(bad, 'sk-vk-0123456789abcdefghijkl', OPERATOR)],
        ['id', () => virtualKeys.delete(bad, OPERATOR)],
        ['id', () => teams.get(bad)],
        ['id', () => teams.update(bad, { name: 'x' }, API)],
        ['id', () => teams.delete(bad, API)],
        ['id', () => budgets.get(bad)],
        ['id', () => pricing.get(bad)],
        ['id', () => pricing.update(bad, {})],
        ['id', () => rules.delete(bad)],
        ['id', () => rules.update(bad, {})],
        ['provider', () => owned.applyProvider('ns/p', bad, {})],
        ['provider', () => owned.deleteProvider('ns/p', bad)],
        ['key_id', () => owned.applyProviderKey('ns/k', 'openai', bad, { value: 'sk-1' })],
        ['key_id', () => owned.deleteProviderKey('ns/k', bad)],
        ['id', () => owned.applyVirtualKey('ns/v', bad, { name: 'v', value: 'sk-vk-0123456789abcdefghijkl' })],
        ['id', () => owned.deleteVirtualKey('ns/v', bad)],
      ];
      for (const [param, call] of calls) {
        const err = await expectStateError(call(), 'invalid');
        expect(err.param, `${label} ${param}`).toBe(param);
      }
    }
    expect(await counts()).toEqual(before);
  });

  it('keeps a well-formed id that names nothing a not_found', async () => {
    await expectStateError(providers.get('nope'), 'not_found');
    await expectStateError(providers.getKey('openai', 'nope'), 'not_found');
    await expectStateError(virtualKeys.get('nope'), 'not_found');
    await expectStateError(teams.get('nope'), 'not_found');
  });

  it('refuses bodies the database could not store, naming the field, and stores nothing', async () => {
    const before = await counts();
    const cases: [string, () => Promise<unknown>][] = [
      ['name', () => virtualKeys.create({ name: 'a\u0000' }, OPERATOR)],
      ['description', () => virtualKeys.create({ name: 'a', description: 'x\u0000' }, API)],
      ['name', () => teams.create({ name: '\ud800' }, API)],
      [
        'network_config.extra_headers.x-a',
        () =>
          providers.create(
            { provider: 'groq', network_config: { extra_headers: { 'x-a': 'a\u0000' } } },
            OPERATOR,
            'groq',
          ),
      ],
      ['value', () => providers.addKey('openai', { name: 'k', value: 'sk-\r\nx' }, OPERATOR)],
      ['aliases', () => providers.addKey('openai', { name: 'k', value: 'sk-1', aliases: { 'a\u0000': 'b' } }, API)],
      [
        'condition',
        () => rules.create({ name: 'r', condition: 'true\u0000', targets: [{ provider: 'openai', model: 'm' }] }),
      ],
      [
        'model',
        () =>
          pricing.create({
            scope: 'global',
            provider: 'openai',
            model: 'm\u0000',
            input_cost_per_token: 0,
            output_cost_per_token: 0,
          }),
      ],
    ];
    for (const [param, call] of cases) {
      const err = await expectStateError(call(), 'invalid');
      expect(String(err.param).startsWith(param), `${param}: ${err.message}`).toBe(true);
    }
    expect(await counts()).toEqual(before);
  });
});
