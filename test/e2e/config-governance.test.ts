// config.json `governance` loads at every start, idempotently: teams, customers, virtual keys, pricing overrides
// and routing rules from the file govern inference; a restart keeps ids and budget usage; API rows stay as made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfigFile } from '../../gateway/src/config/load.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { createTestDatabase } from '../harness/db.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import {
  adminJson,
  bearer,
  budgetsOf,
  chat,
  expectEnvelope,
  freshWindow,
  type Json,
  VK,
} from './governance-helpers.ts';

const PROVIDER_KEY = 'sk-upstream-0123456789abcdef';
const BUDGETED = 'sk-vk-file-budgeted-0123456789abcdef';
const LIMITED = 'sk-vk-file-limited-0123456789abcdefg';
const API_KEY_FILE_VALUE = 'sk-vk-file-shadow-0123456789abcdefgh';
/** USD per output token for the budgeted key (a virtual-key pricing override from the file; input is free). */
const PRICE = 0.000001;
/**
 * Reservation = max_tokens x PRICE. The budget fits one reservation plus half a token: the first request is
 * admitted, and once it is charged (at least one token) the next reservation no longer fits.
 */
const MAX_TOKENS = 1000;
const BUDGET_USD = (MAX_TOKENS + 0.5) * PRICE;

let openai: OpenAIFake;
beforeAll(async () => {
  openai = await createOpenAIFake().start();
});
afterAll(async () => {
  await openai?.stop();
});

function providers(): Json {
  return {
    openai: {
      network_config: { base_url: openai.url, max_retries: 0 },
      keys: [{ id: 'k1', name: 'main', value: PROVIDER_KEY, models: ['*'] }],
    },
  };
}

function config(extraKeys: Json[] = []): Json {
  return {
    providers: providers(),
    governance: {
      teams: [{ name: 'Platform team', budgets: [{ max_limit: 100, reset_duration: '1M' }] }],
      customers: [{ name: 'Acme Corp', rate_limit: { request_max_limit: 1000, request_reset_duration: '1h' } }],
      virtual_keys: [
        {
          name: 'budgeted',
          value: BUDGETED,
          customer: 'Acme Corp',
          provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o-mini'], key_ids: ['k1'], weight: 1 }],
          budgets: [{ max_limit: BUDGET_USD, reset_duration: '1d' }],
        },
        {
          name: 'limited',
          value: LIMITED,
          team: 'Platform team',
          provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }],
          rate_limit: { request_max_limit: 2, request_reset_duration: '1h' },
        },
        ...extraKeys,
      ],
      pricing_overrides: [
        {
          scope: 'virtual_key',
          scope_id: 'budgeted',
          provider: 'openai',
          model: 'gpt-4o-mini',
          input_cost_per_token: 0,
          output_cost_per_token: PRICE,
        },
      ],
      routing_rules: [
        {
          name: 'premium to gpt-4.1',
          condition: '"x-tier" in request.headers && request.headers["x-tier"] == "premium"',
          targets: [{ provider: 'openai', model: 'gpt-4.1' }],
          scope: 'team',
          scope_id: 'Platform team',
        },
      ],
    },
  };
}

async function list(gw: TestGateway, path: string, field: string): Promise<Json[]> {
  return (await adminJson(gw, path))[field] as Json[]; // list envelope `{<items>, total}`
}

/** Ids and names of every governance row, to compare across restarts. */
async function inventory(gw: TestGateway): Promise<Record<string, string[]>> {
  const ids = (rows: Json[]) => rows.map((r) => `${String(r['name'] ?? r['model'])}=${String(r['id'])}`).sort();
  return {
    teams: ids(await list(gw, '/api/governance/teams', 'teams')),
    customers: ids(await list(gw, '/api/governance/customers', 'customers')),
    virtual_keys: ids(await list(gw, VK, 'virtual_keys')),
    pricing: ids(await list(gw, '/api/governance/pricing-overrides', 'pricing_overrides')),
    rules: ids(await list(gw, '/api/governance/routing-rules', 'routing_rules')),
    budgets: (await list(gw, '/api/governance/budgets', 'budgets')).map((b) => String(b['id'])).sort(),
  };
}

async function keyByName(gw: TestGateway, name: string): Promise<Json> {
  const found = (await list(gw, VK, 'virtual_keys')).find((k) => k['name'] === name);
  expect(found, name).toBeDefined();
  return adminJson(gw, `${VK}/${String(found?.['id'])}`);
}

async function usageOf(gw: TestGateway, name: string): Promise<number> {
  const [budget] = budgetsOf(await keyByName(gw, name));
  return Number(budget?.['current_usage']);
}

describe('config.json governance', () => {
  it('governs inference from the file, and a restart keeps ids, budget usage and API-made keys', async () => {
    await freshWindow(3_600_000);
    const databaseUrl = await createTestDatabase();
    const first = await startTestGateway({ databaseUrl, config: config() });
    let before: Record<string, string[]>;
    let used: number;
    let apiKey: Json;
    try {
      const budgeted = await keyByName(first, 'budgeted');
      expect(budgeted).toMatchObject({ source: 'config', team_id: null, value_hint: expect.any(String) });
      const customers = await list(first, '/api/governance/customers', 'customers');
      expect(budgeted['customer_id']).toBe(customers[0]?.['id']);

      // The file's value authenticates; the budget (priced by the file's override) admits one request.
      const ok = await chat(first, bearer(BUDGETED), { max_tokens: MAX_TOKENS });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(openai.last().headers['authorization']).toBe(`Bearer ${PROVIDER_KEY}`);
      await expect.poll(() => usageOf(first, 'budgeted')).toBeGreaterThan(0);
      expectEnvelope(await chat(first, bearer(BUDGETED), { max_tokens: MAX_TOKENS }), 402, 'budget_exceeded');
      expectEnvelope(await chat(first, bearer(BUDGETED), { model: 'openai/gpt-4.1' }), 403, 'permission_denied');

      // The team-scoped rule routes the team's key; its rate limit admits two requests.
      const routed = await chat(first, { ...bearer(LIMITED), 'x-tier': 'premium' });
      expect(routed.status, JSON.stringify(routed.body)).toBe(200);
      expect((openai.last().json as Json)['model']).toBe('gpt-4.1'); // upstream body
      expect((await chat(first, bearer(LIMITED))).status).toBe(200);
      expectEnvelope(await chat(first, bearer(LIMITED)), 429, 'rate_limited');

      apiKey = await adminJson(first, VK, 'POST', {
        name: 'shadowed',
        description: 'made through the API',
        provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o-mini'], key_ids: ['k1'] }],
      });
      before = await inventory(first);
      expect(before['virtual_keys']).toHaveLength(3);
      expect(before['budgets']).toHaveLength(2);
      used = await usageOf(first, 'budgeted');
    } finally {
      await first.close();
    }

    // Same file plus a key named like the API-made one: nothing is duplicated, the API key is untouched.
    const shadow = { name: 'shadowed', value: API_KEY_FILE_VALUE, description: 'from the file' };
    const second = await startTestGateway({ databaseUrl, config: config([shadow]) });
    try {
      expect(await inventory(second)).toEqual(before);
      expect(await usageOf(second, 'budgeted')).toBe(used);
      expectEnvelope(await chat(second, bearer(BUDGETED), { max_tokens: MAX_TOKENS }), 402, 'budget_exceeded');
      expect((await chat(second, bearer(LIMITED))).status).toBe(200);

      const shadowed = await keyByName(second, 'shadowed');
      expect(shadowed).toMatchObject({
        id: apiKey['id'],
        source: 'api',
        description: 'made through the API',
        value_hint: apiKey['value_hint'],
      });
      expectEnvelope(await chat(second, bearer(API_KEY_FILE_VALUE)), 403, 'permission_denied');
      expect((await chat(second, bearer(String(apiKey['value'])))).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('compatibility mode (version 1) reads empty allow-lists of the file as all, and no provider configs as all', async () => {
    const gw = await startTestGateway({
      config: {
        version: 1,
        providers: providers(),
        governance: {
          virtual_keys: [
            { name: 'legacy', value: BUDGETED, provider_configs: [{ provider: 'openai', allowed_models: [] }] },
            { name: 'bare', value: LIMITED },
          ],
        },
      },
    });
    try {
      const legacy = await keyByName(gw, 'legacy');
      expect(legacy['provider_configs']).toMatchObject([{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }]);
      const bare = await keyByName(gw, 'bare');
      expect(bare['provider_configs']).toMatchObject([
        { provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: null },
      ]);
      expect((await chat(gw, bearer(BUDGETED))).status).toBe(200);
      expect((await chat(gw, bearer(LIMITED), { model: 'openai/gpt-4.1' })).status).toBe(200);

      // The REST API follows the 1.5 rules whatever the file says: empty allowed_models denies all.
      const viaApi = await adminJson(gw, VK, 'POST', {
        name: 'strict',
        provider_configs: [{ provider: 'openai', allowed_models: [], key_ids: ['*'] }],
      });
      expectEnvelope(await chat(gw, bearer(String(viaApi['value']))), 403, 'permission_denied');
    } finally {
      await gw.close();
    }
  });

  it('refuses a file whose governance section is invalid, naming the JSON path', () => {
    const file = (vks: Json[]) => JSON.stringify({ governance: { virtual_keys: vks } });
    const good = { name: 'a', value: 'env.VK_A', provider_configs: [{ provider: 'openai', allowed_models: ['*'] }] };
    const env = { VK_A: BUDGETED };
    expect(parseConfigFile(file([good]), env).governance.virtual_keys[0]?.value).toBe(BUDGETED);

    const bad = { ...good, name: 'c', provider_configs: [{ provider: 'openai', allowed_models: ['*', 'gpt-4o'] }] };
    const parse = () => parseConfigFile(file([good, { ...good, name: 'b' }, bad]), env);
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(
      /governance\.virtual_keys\[2\]\.provider_configs\[0\]\.allowed_models: .*"\*" must stand alone/,
    );
    expect(() => parseConfigFile(file([{ name: 'no-value' }]), env)).toThrow(
      /governance\.virtual_keys\[0\]\.value: required/,
    );
    expect(() => parseConfigFile(file([{ ...good, team_id: 'x' }]), env)).toThrow(
      /virtual_keys\[0\]\.team_id: .*by name/,
    );
    expect(() => parseConfigFile(JSON.stringify({ governance: { budgets: [] } }), env)).toThrow(
      /governance: Unrecognized key: "budgets"/,
    );
  });

  it('refuses to start when the file names a team that does not exist', async () => {
    const start = startTestGateway({
      config: {
        providers: providers(),
        governance: { virtual_keys: [{ name: 'orphan', value: BUDGETED, team: 'Nobody' }] },
      },
    });
    await expect(start).rejects.toThrow(ConfigError);
    await expect(start).rejects.toThrow('governance.virtual_keys[0].team: there is no team named "Nobody"');
  });
});
