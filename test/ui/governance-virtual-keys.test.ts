// Virtual keys in a real browser: create one with a budget and a provider config through the form, copy its value
// from the dialog (the only place it is shown), call the gateway with it through the official openai SDK against
// the fake upstream, and see the budget's usage on the key's page and in the list; edits and refusals in words;
// operator-owned keys read-only. Screenshots go to test/artifacts/ui/.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  choose,
  confirmAction,
  expectOperatorOwned,
  type GovernanceUi,
  openPage,
  shot,
  startGovernanceUi,
} from './governance-helpers.ts';
import { logIn, type UiGateway } from './harness.ts';

let env: GovernanceUi;
let gw: UiGateway;

interface Budget {
  id: string;
  max_limit: number;
  reset_duration: string;
  current_usage: number;
}
interface Vk {
  id: string;
  name: string;
  is_active: boolean;
  team_id: string | null;
  budgets: Budget[];
  provider_configs: { provider: string; allowed_models: string[]; key_ids: string[]; budgets: Budget[] }[];
}

let teamId = '';

beforeAll(async () => {
  env = await startGovernanceUi();
  gw = env.gw;
  // A known price, so the usage the page shows is a known amount.
  const res = await gw.admin('/api/governance/pricing-overrides', {
    method: 'POST',
    body: {
      scope: 'global',
      provider: 'openai',
      model: 'gpt-4o-mini',
      input_cost_per_token: 0.001,
      output_cost_per_token: 0.002,
    },
  });
  expect(res.status).toBe(201);
  const team = await gw.admin('/api/governance/teams', { method: 'POST', body: { name: 'ml-team' } });
  teamId = ((await team.json()) as { id: string }).id;
}, 120_000);
afterAll(async () => {
  await env?.close();
});

async function vks(): Promise<Vk[]> {
  return ((await (await gw.admin('/api/governance/virtual-keys')).json()) as { virtual_keys: Vk[] }).virtual_keys;
}
async function vk(id: string): Promise<Vk> {
  return (await (await gw.admin(`/api/governance/virtual-keys/${id}`)).json()) as Vk;
}

/** The page's text for a USD amount, as the dashboard writes it. */
function usdText(n: number): string {
  const digits = Math.abs(n) >= 1 ? 2 : Math.min(8, 2 - Math.floor(Math.log10(Math.abs(n))) + 1);
  return `$${n.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: digits })}`;
}

let keyId = '';

const open = () => openPage(env.browser);

describe('virtual keys page', () => {
  it('creates a key with a budget, shows its value once with a copy button, and the value works with the openai SDK', async () => {
    const { context, page, problems } = await open();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
    await logIn(page, gw);
    await page.getByRole('link', { name: 'Virtual keys', exact: true }).click();
    await page.getByText('No virtual key yet').waitFor();
    await shot(page, 'virtual-keys-empty');

    await page.getByRole('link', { name: 'New virtual key' }).click();
    await page.getByRole('heading', { name: 'New virtual key' }).waitFor();
    await page.getByLabel('Name', { exact: false }).first().fill('ui-app');
    await page.getByRole('button', { name: 'Add budget to the key' }).click();
    await page.getByLabel('Budget 1 of the key: limit (USD)').fill('5');
    await page.getByLabel('Budget 1 of the key: resets every').fill('1d');
    await page.getByRole('button', { name: 'Add provider config' }).click();
    await choose(page, 'Provider 1', 'openai');
    await shot(page, 'virtual-key-new');
    await page.getByRole('button', { name: 'Create virtual key' }).click();

    const dialog = page.getByRole('dialog', { name: 'Virtual key created' });
    await dialog.waitFor();
    const shown = (await dialog.getByLabel('Virtual key value').textContent())?.trim() ?? '';
    expect(shown).toMatch(/^sk-vk-/);
    await dialog.getByRole('button', { name: 'Copy key' }).click();
    await dialog.getByRole('button', { name: 'Copied' }).waitFor();
    const copied = String(await page.evaluate('navigator.clipboard.readText()'));
    expect(copied).toBe(shown);
    await shot(page, 'virtual-key-created');

    // Stored as typed.
    const [stored] = await vks();
    expect(stored).toMatchObject({
      name: 'ui-app',
      is_active: true,
      budgets: [{ max_limit: 5, reset_duration: '1d' }],
      provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }],
    });
    keyId = stored?.id ?? '';

    // Closing the dialog leads to the key's page, which never shows the value again.
    await dialog.getByRole('button', { name: 'Done: I have stored it' }).click();
    await page.getByRole('heading', { name: 'Virtual key ui-app' }).waitFor();
    expect(await page.content()).not.toContain(copied);

    // The copied value is a working key: the official SDK, through the gateway, to the fake upstream.
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: copied, maxRetries: 0 });
    const reply = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello from the dashboard test' }],
      max_tokens: 50,
    });
    expect(reply.choices[0]?.message.content).toContain('hello from the dashboard test');
    expect(env.upstream.requests).toHaveLength(1);

    // The charge, as the API reports it once settled...
    let usage = 0;
    await expect
      .poll(async () => {
        usage = (await vk(keyId)).budgets[0]?.current_usage ?? 0;
        return usage;
      })
      .toBeGreaterThan(0);
    // ... is what the key's page shows against its budget (after a refresh of the usage).
    const text = `${usdText(usage)} of $5 per 1 day`;
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh usage' }).click();
        return page.getByRole('table', { name: 'Usage of ui-app' }).getByText(text).count();
      })
      .toBe(1);
    await shot(page, 'virtual-key-detail');
    expect(await page.content()).not.toContain(copied);

    // And the list shows it too.
    await page.getByRole('link', { name: 'Virtual keys', exact: true }).click();
    const table = page.getByRole('table', { name: 'Virtual keys' });
    await table.getByText(text).waitFor();
    await table.getByText('active', { exact: true }).waitFor();
    await shot(page, 'virtual-keys');
    expect(await page.content()).not.toContain(copied);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('edits the key: deactivates it, keeps the budget’s usage, and shows a refused field in words under it', async () => {
    const before = await vk(keyId);
    const { context, page, problems } = await open();
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}virtual-keys/${keyId}`);
    await page.getByRole('heading', { name: 'Virtual key ui-app' }).waitFor();

    // A reset the API refuses: its words, under the field and in the alert, never JSON; nothing stored.
    await page.getByLabel('Budget 1 of the key: resets every').fill('fortnightly');
    await page.getByRole('button', { name: 'Save virtual key' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'reset_duration' });
    await alert.waitFor();
    expect(await alert.textContent()).not.toContain('{');
    await page
      .getByText(/expected a count \(1-9999\) and a unit/)
      .first()
      .waitFor();
    expect((await vk(keyId)).budgets[0]?.reset_duration).toBe('1d');
    await shot(page, 'virtual-key-error');

    await page.getByLabel('Budget 1 of the key: resets every').fill('1d');
    await page.getByLabel('Active (an inactive key is refused)').click();
    await page.getByRole('combobox', { name: 'Allowed extra headers' }).fill('x-trace-id');
    await page.getByRole('combobox', { name: 'Allowed extra headers' }).press('Enter');
    // The key joins a team; its openai config gets its own budget, rate limit and model allow-list.
    await page.getByText('A team', { exact: true }).click();
    await choose(page, 'Team', 'ml-team');
    const models = page.getByRole('combobox', { name: 'Allowed models (openai)' });
    await models.press('Backspace');
    await models.fill('gpt-4o-mini');
    await models.press('Enter');
    await page.getByRole('button', { name: 'Add budget to openai' }).click();
    await page.getByLabel('Budget 1 of openai: limit (USD)').fill('2');
    await page.getByLabel('Budget 1 of openai: resets every').fill('1w');
    await page.getByLabel('Requests allowed (openai)').fill('60');
    await page.getByLabel('Requests window (openai)').fill('1m');
    await page.getByRole('button', { name: 'Save virtual key' }).click();
    await page.getByText('Virtual key ui-app saved').waitFor();
    const after = await vk(keyId);
    expect(after).toMatchObject({
      is_active: false,
      allowed_extra_headers: ['x-trace-id'],
      team_id: teamId,
      customer_id: null,
      provider_configs: [
        {
          provider: 'openai',
          allowed_models: ['gpt-4o-mini'],
          key_ids: ['*'],
          budgets: [{ max_limit: 2, reset_duration: '1w' }],
          rate_limit: { request_max_limit: 60, request_reset_duration: '1m' },
        },
      ],
    });
    // Sent back with its id: the same budget, its usage kept.
    expect(after.budgets[0]?.id).toBe(before.budgets[0]?.id);
    expect(after.budgets[0]?.current_usage).toBe(before.budgets[0]?.current_usage);
    await page.getByText('inactive', { exact: true }).first().waitFor();
    await page.getByRole('link', { name: 'Team: ml-team' }).first().waitFor();
    // The usage table has a row for the provider config, with its budget and rate limit.
    const usage = page.getByRole('table', { name: 'Usage of ui-app' });
    await usage.getByText('$0 of $2 per 1 week').waitFor();
    await usage.getByText(/of 60 requests per 1 minute/).waitFor();
    await shot(page, 'virtual-key-edited');
    expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
    await context.close();
  }, 90_000);

  it('shows a key the operator wrote as read-only, naming its Kubernetes object', async () => {
    const row = (await gw.rt.state.virtualKeys.create(
      { name: 'crd-key', budgets: [{ max_limit: 1, reset_duration: '1M' }] },
      { source: 'kubernetes', ownerRef: 'ml/crd-key' },
    )) as { id: string };
    const { context, page, problems } = await open();
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}virtual-keys/${row.id}`);
    await expectOperatorOwned(page, 'ml/crd-key', ['Save virtual key', 'Delete virtual key', 'Add provider config']);
    await shot(page, 'virtual-key-kubernetes');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('deletes a key after confirming', async () => {
    const { context, page, problems } = await open();
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}virtual-keys/${keyId}`);
    await confirmAction(page, 'Delete virtual key');
    await page.getByRole('heading', { name: 'Virtual keys' }).waitFor();
    expect((await gw.admin(`/api/governance/virtual-keys/${keyId}`)).status).toBe(404);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);
});
