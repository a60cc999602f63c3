// Teams, customers and model configs in a real browser: a customer with an email and a budget, a team of that
// customer with a budget and a rate limit whose usage (after a request by a key of the team, through the openai SDK
// against the fake upstream) shows on the team's page; a model's and a provider's limits set, changed and removed;
// refusals in words. Pricing overrides: governance-pricing.test.ts.
// Screenshots of each page go to test/artifacts/ui/.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  choose,
  confirmAction,
  expectOperatorOwned,
  type GovernanceUi,
  getJson,
  loggedInPage,
  shot,
  startGovernanceUi,
} from './governance-helpers.ts';
import type { UiGateway } from './harness.ts';

let env: GovernanceUi;
let gw: UiGateway;

type Json = Record<string, unknown>;

beforeAll(async () => {
  env = await startGovernanceUi();
  gw = env.gw;
}, 120_000);
afterAll(async () => {
  await env?.close();
});

const get = (path: string): Promise<Json> => getJson(gw, path);
const open = () => loggedInPage(env);

let customerId = '';
let teamId = '';

describe('teams and customers pages', () => {
  it('creates a customer with an email and a budget, and a team of it with a budget and a rate limit', async () => {
    const { context, page, problems } = await open();
    await page.getByRole('link', { name: 'Customers', exact: true }).click();
    await page.getByText('No customer yet').waitFor();
    await page.getByRole('button', { name: 'New customer' }).click();
    const dialog = page.getByRole('dialog', { name: 'New customer' });
    await dialog.getByLabel('Name', { exact: false }).first().fill('acme');
    await dialog.getByLabel('Email').fill('ops@acme.test');
    await dialog.getByRole('button', { name: 'Add budget to the customer' }).click();
    await dialog.getByLabel('Budget 1 of the customer: limit (USD)').fill('100');
    // A reset the API refuses: its words under the field; nothing stored.
    await dialog.getByLabel('Budget 1 of the customer: resets every').fill('monthly');
    await dialog.getByRole('button', { name: 'Create customer' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'reset_duration' }).waitFor();
    await dialog
      .getByText(/expected a count \(1-9999\) and a unit/)
      .first()
      .waitFor();
    expect((await get('/api/governance/customers'))['total']).toBe(0);
    await dialog.getByLabel('Budget 1 of the customer: resets every').fill('1M');
    await dialog.getByRole('button', { name: 'Create customer' }).click();
    await page.getByRole('heading', { name: 'Customer acme' }).waitFor();
    const [customer] = (await get('/api/governance/customers'))['customers'] as Json[];
    expect(customer).toMatchObject({
      name: 'acme',
      email: 'ops@acme.test',
      budgets: [{ max_limit: 100, reset_duration: '1M' }],
    });
    customerId = String(customer?.['id']);

    await page.getByRole('link', { name: 'Teams', exact: true }).click();
    await page.getByRole('button', { name: 'New team' }).click();
    const teamDialog = page.getByRole('dialog', { name: 'New team' });
    await teamDialog.getByLabel('Name', { exact: false }).first().fill('platform');
    await choose(page, 'Customer', 'acme');
    await teamDialog.getByRole('button', { name: 'Add budget to the team' }).click();
    await teamDialog.getByLabel('Budget 1 of the team: limit (USD)').fill('20');
    await teamDialog.getByLabel('Budget 1 of the team: resets every').fill('1d');
    await teamDialog.getByLabel('Requests allowed (team)').fill('100');
    await teamDialog.getByLabel('Requests window (team)').fill('1h');
    await shot(page, 'team-new');
    await teamDialog.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('heading', { name: 'Team platform' }).waitFor();
    const [team] = (await get('/api/governance/teams'))['teams'] as Json[];
    expect(team).toMatchObject({
      name: 'platform',
      customer_id: customerId,
      budgets: [{ max_limit: 20, reset_duration: '1d' }],
      rate_limit: { request_max_limit: 100, request_reset_duration: '1h' },
    });
    teamId = String(team?.['id']);
    expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
    await context.close();
  }, 90_000);

  it('shows a team’s budget and rate-limit usage after a request by one of its keys', async () => {
    await gw.admin('/api/governance/pricing-overrides', {
      method: 'POST',
      body: {
        scope: 'global',
        provider: 'openai',
        model: 'gpt-4o-mini',
        input_cost_per_token: 0.001,
        output_cost_per_token: 0.002,
      },
    });
    const created = await gw.admin('/api/governance/virtual-keys', {
      method: 'POST',
      body: {
        name: 'platform-app',
        team_id: teamId,
        provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }],
      },
    });
    const key = (await created.json()) as { value: string };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key.value, maxRetries: 0 });
    await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 20,
    });
    let usage = 0;
    await expect
      .poll(async () => {
        const t = await get(`/api/governance/teams/${teamId}`);
        usage = Number((t['budgets'] as Json[])[0]?.['current_usage']);
        return usage;
      })
      .toBeGreaterThan(0);

    const { context, page, problems } = await open();
    await page.goto(`${gw.uiUrl}teams/${teamId}`);
    await page.getByRole('heading', { name: 'Team platform' }).waitFor();
    await page.getByText(/^\$0\.0\d+ of \$20 per 1 day$/).waitFor();
    await page.getByText('1 of 100 requests per 1 hour').waitFor();
    await page.getByRole('link', { name: 'platform-app' }).waitFor();
    await shot(page, 'team-detail');

    await page.getByRole('link', { name: 'Teams', exact: true }).click();
    await page.getByRole('table', { name: 'Teams' }).getByText('1 of 100 requests per 1 hour').waitFor();
    await shot(page, 'teams');

    await page.getByRole('link', { name: 'Customers', exact: true }).click();
    const customers = page.getByRole('table', { name: 'Customers' });
    await customers.getByText('ops@acme.test').waitFor();
    await customers.getByText('1 team(s)').waitFor();
    await shot(page, 'customers');
    await customers.getByRole('link', { name: 'acme' }).click();
    await page.getByRole('heading', { name: 'Customer acme' }).waitFor();
    await page.getByRole('link', { name: 'platform', exact: true }).waitFor();
    await shot(page, 'customer-detail');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('edits and deletes a team', async () => {
    const { context, page, problems } = await open();
    await page.goto(`${gw.uiUrl}teams/${teamId}`);
    await page.getByLabel('Requests allowed (team)').fill('50');
    await page.getByRole('button', { name: 'Save team' }).click();
    await page.getByText('Team platform saved').waitFor();
    const t = await get(`/api/governance/teams/${teamId}`);
    expect(t['rate_limit']).toEqual({ request_max_limit: 50, request_reset_duration: '1h' });
    // The budget was sent back with its id: the same budget, its usage kept.
    expect(Number((t['budgets'] as Json[])[0]?.['current_usage'])).toBeGreaterThan(0);

    // A team its key still names cannot go: the API's reason, in words.
    await confirmAction(page, 'Delete team');
    const alert = page.getByRole('alert').filter({ hasText: 'still referenced by 1 virtual key' });
    await alert.waitFor();
    expect(await alert.textContent()).not.toContain('{');
    expect((await gw.admin(`/api/governance/teams/${teamId}`)).status).toBe(200);

    // Once its key is gone, it goes.
    const keys = (await get('/api/governance/virtual-keys'))['virtual_keys'] as Json[];
    for (const k of keys) await gw.admin(`/api/governance/virtual-keys/${String(k['id'])}`, { method: 'DELETE' });
    await confirmAction(page, 'Delete team');
    await page.getByRole('heading', { name: 'Teams', exact: true }).waitFor();
    expect((await gw.admin(`/api/governance/teams/${teamId}`)).status).toBe(404);
    expect(problems.filter((p) => !p.includes('409'))).toEqual([]);
    await context.close();
  }, 90_000);
  it('shows a team the operator wrote as read-only, naming its Kubernetes object', async () => {
    const row = (await gw.rt.state.teams.create(
      { name: 'crd-team', budgets: [{ max_limit: 5, reset_duration: '1M' }] },
      { source: 'kubernetes', ownerRef: 'ml/crd-team' },
    )) as { id: string };
    const { context, page, problems } = await open();
    await page.goto(`${gw.uiUrl}teams/${row.id}`);
    await expectOperatorOwned(page, 'ml/crd-team', ['Save team', 'Delete team', 'Add budget to the team']);
    await shot(page, 'team-kubernetes');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);
});

describe('model configs page', () => {
  it('limits a model and a provider, shows their usage, changes and removes them', async () => {
    const { context, page, problems } = await open();
    await page.getByRole('link', { name: 'Model & provider limits', exact: true }).click();
    await page.getByText('No model config').waitFor();
    await page.getByRole('button', { name: 'New model config' }).click();
    const dialog = page.getByRole('dialog', { name: 'New model config' });
    await dialog.getByRole('textbox', { name: /^Model/ }).fill('gpt-4o-mini');
    await dialog.getByLabel('Budget limit (USD)').fill('10');
    await dialog.getByLabel('Budget resets every').fill('1d');
    await dialog.getByLabel('Requests allowed (model)').fill('1000');
    await dialog.getByLabel('Requests window (model)').fill('1h');
    await dialog.getByRole('button', { name: 'Save limits' }).click();
    const configs = page.getByRole('table', { name: 'Model configs' });
    await configs.getByText('every provider').waitFor();
    await configs.getByText('$0 of $10 per 1 day').waitFor();
    await configs.getByText('0 of 1,000 requests per 1 hour').waitFor();
    const [mc] = (await get('/api/governance/model-configs'))['model_configs'] as Json[];
    expect(mc).toMatchObject({
      model_name: 'gpt-4o-mini',
      budget: { max_limit: 10, reset_duration: '1d', calendar_aligned: false },
      rate_limit: { request_max_limit: 1000, request_reset_duration: '1h' },
    });
    expect(mc?.['provider']).toBeUndefined();

    await page.getByRole('button', { name: 'Limit a provider' }).click();
    const provDialog = page.getByRole('dialog', { name: 'Limit a provider' });
    await choose(page, 'Provider', 'openai');
    await provDialog.getByLabel('Tokens allowed (provider)').fill('100000');
    await provDialog.getByLabel('Tokens window (provider)').fill('1d');
    await provDialog.getByRole('button', { name: 'Save limits' }).click();
    const providers = page.getByRole('table', { name: 'Provider limits' });
    await providers.getByText('0 of 100,000 tokens per 1 day').waitFor();
    await shot(page, 'model-configs');

    // Emptying the model's budget removes it; the rate limit stays.
    await page.getByRole('button', { name: 'Edit limits of gpt-4o-mini' }).click();
    const edit = page.getByRole('dialog', { name: 'Limits of gpt-4o-mini' });
    await edit.getByLabel('Budget limit (USD)').fill('');
    await edit.getByLabel('Budget resets every').fill('');
    await edit.getByRole('button', { name: 'Save limits' }).click();
    await configs.getByText('No budget').waitFor();
    const [after] = (await get('/api/governance/model-configs'))['model_configs'] as Json[];
    expect(after?.['budget']).toBeUndefined();
    expect(after?.['rate_limit']).toMatchObject({ request_max_limit: 1000 });

    await confirmAction(page, 'Remove limits of openai', 'Remove');
    await page.getByText('No provider is limited').waitFor();
    await confirmAction(page, 'Delete model config gpt-4o-mini');
    await page.getByText('No model config').waitFor();
    expect((await get('/api/governance/model-configs'))['count']).toBe(0);
    expect((await get('/api/governance/providers'))['count']).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);
});
