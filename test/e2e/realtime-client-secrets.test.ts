// Client secrets under governance: a browser spends a minted secret directly at the provider, where the gateway
// cannot meter it, so a mint is refused (403 permission_denied, before anything reaches the provider) whenever a
// budget or a token rate limit applies to the candidate that would mint it. Request rate limits only count the
// mint. The official openai SDK mints through a gateway on real Postgres and Redis in front of the fake realtime
// upstream.
import OpenAI, { PermissionDeniedError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRealtimeFake, type RealtimeFake } from '../fakes/realtime-openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, freshWindow, type Json, logOf, pc, waitFor } from './governance-helpers.ts';

const OPENAI_KEY = 'sk-realtime-secrets-upstream-0123456789';
const AZURE_KEY = 'azure-realtime-secrets-upstream-0123456789';
const MC = '/api/governance/model-configs';
const WHY =
  /could not be metered; open the call through POST \/v1\/realtime\/calls or the session through GET \/v1\/realtime/;

let fake: RealtimeFake;
let gw: TestGateway;

beforeAll(async () => {
  fake = await createRealtimeFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ id: 'o1', name: 'openai-one', value: OPENAI_KEY, models: ['*'] }],
        },
        azure: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ id: 'a1', name: 'azure-one', value: AZURE_KEY, models: ['*'] }],
        },
      },
    },
  });
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-realtime',
    input_cost_per_token: 0,
    output_cost_per_token: 0.000001,
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await fake?.stop();
});

beforeEach(() => fake.reset());

/** Mints through the SDK; the secret, or the SDK's error. */
function mint(apiKey: string, model = 'openai/gpt-realtime'): Promise<OpenAI.Realtime.ClientSecretCreateResponse> {
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
  return client.realtime.clientSecrets.create({ session: { type: 'realtime', model } });
}

async function refused(apiKey: string, model?: string): Promise<PermissionDeniedError> {
  const err = await mint(apiKey, model).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(PermissionDeniedError);
  // Checked just above.
  return err as PermissionDeniedError;
}

/** The envelope of a refused mint: 403 permission_denied, saying why and what to use instead; its message. */
function expectRefusal(err: PermissionDeniedError): string {
  expect(err.status).toBe(403);
  const error = err.error as Json; // the envelope's error object, as the SDK exposes it
  expect(error).toMatchObject({ code: 'permission_denied' });
  const message = String(error['message']);
  expect(message).toMatch(WHY);
  return message;
}

function secretsCalls() {
  return fake.calls.filter((c) => c.path.endsWith('/realtime/client_secrets'));
}

async function rowsOf(vkId: string, n = 1): Promise<Json[]> {
  return waitFor(
    async () => (await adminJson(gw, `/api/logs?virtual_key_ids=${vkId}`))['logs'] as Json[],
    (l) => l.length >= n,
  );
}

describe('minting a client secret under a spend limit', () => {
  it('refuses a virtual key with a budget with 403 before the provider is called, charges nothing, logs one row', async () => {
    const vk = await createVk(gw, {
      budgets: [{ max_limit: 1, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const budgetId = String((vk.view['budgets'] as Json[])[0]?.['id']); // view shape
    const err = await refused(vk.value);
    const message = expectRefusal(err);
    expect(message).toContain(`budget ${budgetId}`);
    expect(message).toContain('openai/gpt-realtime');
    expect(secretsCalls()).toHaveLength(0);

    const rows = await rowsOf(vk.id);
    expect(rows).toHaveLength(1);
    const row = await logOf(gw, err.headers.get('x-gateway-request-id') ?? String(rows[0]?.['id']));
    expect(row).toMatchObject({
      request_type: 'realtime_client_secret',
      status: 'error',
      status_code: 403,
      virtual_key_id: vk.id,
    });
    expect(row['cost_nano'] ?? 0).toBe(0);
    const view = await adminJson(gw, `/api/governance/virtual-keys/${vk.id}`);
    expect((view['budgets'] as Json[])[0]?.['current_usage']).toBe(0);
  });

  it('refuses a virtual key whose team has a budget', async () => {
    const team = await adminJson(gw, '/api/governance/teams', 'POST', {
      name: `secrets-team-${Date.now()}`,
      budgets: [{ max_limit: 100, reset_duration: '1M' }],
    });
    const teamBudget = String((team['budgets'] as Json[])[0]?.['id']); // view shape
    const vk = await createVk(gw, { team_id: team['id'], provider_configs: [pc('openai')] });
    expect(expectRefusal(await refused(vk.value))).toContain(`budget ${teamBudget}`);
    expect(secretsCalls()).toHaveLength(0);
  });

  it('refuses a virtual key with a token rate limit (its tokens could not be counted either)', async () => {
    const vk = await createVk(gw, {
      rate_limit: { token_max_limit: 100_000, token_reset_duration: '1h' },
      provider_configs: [pc('openai')],
    });
    expect(expectRefusal(await refused(vk.value))).toContain('token rate limit');
    expect(secretsCalls()).toHaveLength(0);
  });

  it('refuses a gateway token when a model config has a budget for that model; other models still mint', async () => {
    const created = await adminJson(gw, MC, 'POST', {
      model_name: 'gpt-realtime-mini',
      provider: 'openai',
      budget: { max_limit: 50, reset_duration: '1d' },
    });
    const mc = created['model_config'] as Json;
    try {
      const message = expectRefusal(await refused(INFERENCE_TOKEN, 'openai/gpt-realtime-mini'));
      expect(message).toContain('openai/gpt-realtime-mini');
      expect(secretsCalls()).toHaveLength(0);
      expect((await mint(INFERENCE_TOKEN, 'openai/gpt-realtime')).value).toMatch(/^ek_fake_/);
      expect(secretsCalls()).toHaveLength(1);
    } finally {
      await adminJson(gw, `${MC}/${mc['id']}`, 'DELETE');
    }
    // Without the model's budget, the mint goes through.
    expect((await mint(INFERENCE_TOKEN, 'openai/gpt-realtime-mini')).value).toMatch(/^ek_fake_/);
  });

  it('refuses a candidate with a provider-config budget, and falls back to one without a spend limit', async () => {
    const vk = await createVk(gw, {
      provider_configs: [
        pc('openai', { budgets: [{ max_limit: 100, reset_duration: '1d' }], weight: 1 }),
        pc('azure', { weight: 0 }),
      ],
    });
    expectRefusal(await refused(vk.value, 'openai/gpt-realtime'));
    expect(secretsCalls()).toHaveLength(0);
    // Unprefixed: openai (the weighted choice) is refused, azure (its fallback, no spend limit) mints the secret.
    expect((await mint(vk.value, 'gpt-realtime')).value).toMatch(/^ek_fake_/);
    const calls = secretsCalls();
    expect(calls).toHaveLength(1);
    expect(calls[0]?.path).toBe('/openai/v1/realtime/client_secrets');
    expect(calls[0]?.headers['api-key']).toBe(AZURE_KEY);
  });
});

describe('minting a client secret without a spend limit', () => {
  it('mints for a virtual key with only a request rate limit, counting the mint as a request', async () => {
    await freshWindow(60_000);
    const vk = await createVk(gw, {
      rate_limit: { request_max_limit: 1, request_reset_duration: '1m' },
      provider_configs: [pc('openai')],
    });
    expect((await mint(vk.value)).value).toMatch(/^ek_fake_/);
    expect(secretsCalls()[0]?.headers['authorization']).toBe(`Bearer ${OPENAI_KEY}`);
    const second = await mint(vk.value).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(OpenAI.RateLimitError);
    expect(secretsCalls()).toHaveLength(1);
    const rows = await rowsOf(vk.id, 2);
    expect(rows.map((r) => r['status_code']).sort()).toEqual([200, 429]);
  });

  it('mints for a gateway token with no limits, logged as a success', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
    const { data, response } = await client.realtime.clientSecrets
      .create({ session: { type: 'realtime', model: 'openai/gpt-realtime' } })
      .withResponse();
    expect(data.value).toMatch(/^ek_fake_/);
    expect(secretsCalls()).toHaveLength(1);
    expect(await logOf(gw, response.headers.get('x-gateway-request-id'))).toMatchObject({
      request_type: 'realtime_client_secret',
      status: 'success',
      status_code: 200,
      provider: 'openai',
    });
  });

  it('mints for a virtual key without limits', async () => {
    const plain = await createVk(gw, { provider_configs: [pc('openai')] });
    expect((await mint(plain.value)).value).toMatch(/^ek_fake_/);
    expect(secretsCalls()).toHaveLength(1);
  });
});
