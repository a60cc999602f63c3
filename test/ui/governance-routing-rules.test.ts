// Routing rules in a real browser: the CEL expression is checked as it is typed (an invalid one says why before
// anything is saved, a valid one says so), then a rule with weighted targets, a fallback, a team scope and a
// priority is created, disabled from the list, refused in words when saved with a bad expression, and deleted.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { choose, confirmAction, type GovernanceUi, openPage, shot, startGovernanceUi } from './governance-helpers.ts';
import { logIn, type UiGateway } from './harness.ts';

let env: GovernanceUi;
let gw: UiGateway;
let teamId = '';

interface Rule {
  id: string;
  name: string;
  enabled: boolean;
  cel_expression: string;
  targets: { provider?: string; model?: string; weight: number }[];
  fallbacks: string[];
  scope: string;
  scope_id: string | null;
  priority: number;
}

beforeAll(async () => {
  env = await startGovernanceUi();
  gw = env.gw;
  const team = await gw.admin('/api/governance/teams', { method: 'POST', body: { name: 'research' } });
  teamId = ((await team.json()) as { id: string }).id;
}, 120_000);
afterAll(async () => {
  await env?.close();
});

async function rules(): Promise<Rule[]> {
  return ((await (await gw.admin('/api/governance/routing-rules')).json()) as { routing_rules: Rule[] }).routing_rules;
}

const open = () => openPage(env.browser);

/** Types like a person (one key at a time), so the check runs on what is typed, not on a pasted value. */
async function typeCel(page: Page, text: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'CEL expression' });
  await box.fill('');
  await box.pressSequentially(text);
}

const VALID = 'request.message_count > 20 && "x-tier" in request.headers';

describe('routing rules page', () => {
  it('checks the CEL expression as it is typed, then creates a rule with targets, a fallback and a scope', async () => {
    const { context, page, problems } = await open();
    await logIn(page, gw);
    await page.getByRole('link', { name: 'Routing rules', exact: true }).click();
    await page.getByText('No routing rule yet').waitFor();
    await page.getByRole('link', { name: 'New routing rule' }).click();
    await page.getByLabel('Name', { exact: false }).first().fill('long-context');

    // Invalid: the gateway's reason, under the field, before anything is saved.
    await typeCel(page, 'request.model ==');
    const box = page.getByRole('textbox', { name: 'CEL expression' });
    await page.getByText(/syntax error/).waitFor();
    expect(await box.getAttribute('aria-invalid')).toBe('true');
    await shot(page, 'routing-rule-invalid-cel');
    // An unknown field is caught too, with its name.
    await typeCel(page, 'request.modle == "gpt-4o"');
    await page.getByText(/modle/).first().waitFor();
    expect(await rules()).toEqual([]);

    // Valid: said so, the error gone.
    await typeCel(page, VALID);
    await page.getByRole('status').filter({ hasText: 'Valid expression' }).waitFor();
    expect(await box.getAttribute('aria-invalid')).not.toBe('true');

    await choose(page, 'Target 1: provider', 'openai');
    await page.getByLabel('Target 1: model').fill('gpt-4.1');
    await page.getByLabel('Target 1: weight').fill('3');
    await page.getByRole('button', { name: 'Add target' }).click();
    await page.getByLabel('Target 2: model').fill('gpt-4o-mini');
    await page.getByRole('combobox', { name: 'Fallbacks' }).fill('openai/gpt-4o');
    await page.getByRole('combobox', { name: 'Fallbacks' }).press('Enter');
    await page.getByLabel('Priority').fill('5');
    await choose(page, 'Scope', 'A team’s keys');
    await choose(page, 'Scope: team', 'research');
    await shot(page, 'routing-rule-new');
    await page.getByRole('button', { name: 'Create routing rule' }).click();

    const table = page.getByRole('table', { name: 'Routing rules' });
    await table.getByText('long-context').waitFor();
    const [rule] = await rules();
    expect(rule).toMatchObject({
      name: 'long-context',
      enabled: true,
      cel_expression: VALID,
      targets: [
        { provider: 'openai', model: 'gpt-4.1', weight: 3 },
        { model: 'gpt-4o-mini', weight: 1 },
      ],
      fallbacks: ['openai/gpt-4o'],
      scope: 'team',
      scope_id: teamId,
      priority: 5,
    });
    expect(rule?.targets[1]?.provider).toBeUndefined();
    await table.getByText('team research').waitFor();
    await shot(page, 'routing-rules');

    // Disabled from the list.
    await page.getByRole('switch', { name: 'Enabled: long-context' }).click({ force: true });
    await expect.poll(async () => (await rules())[0]?.enabled, { timeout: 10_000 }).toBe(false);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('follows a change made elsewhere, but keeps what is being typed and offers the new version', async () => {
    const [rule] = await rules();
    const { context, page, problems } = await open();
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}routing-rules/${rule?.id}`);
    await page.getByRole('heading', { name: 'Routing rule long-context' }).waitFor();
    const description = page.getByRole('textbox', { name: 'Description' });
    const elsewhere = async (text: string) => {
      const res = await gw.admin(`/api/governance/routing-rules/${rule?.id}`, {
        method: 'PUT',
        body: { ...rule, description: text },
      });
      expect(res.status).toBe(200);
    };

    // Untouched: the form shows the other change (the live socket's store_update refetches the rule).
    await elsewhere('changed by a script');
    await expect.poll(() => description.inputValue(), { timeout: 15_000 }).toBe('changed by a script');

    // Being edited: the typing stays, and the page says the rule changed.
    await description.fill('my own words');
    await elsewhere('changed again');
    const notice = page.getByRole('status').filter({ hasText: 'This routing rule was changed elsewhere' });
    await notice.waitFor({ timeout: 15_000 });
    expect(await description.inputValue()).toBe('my own words');
    await shot(page, 'routing-rule-changed-elsewhere');

    // Loading the new version drops the typing.
    await notice.getByRole('button', { name: 'Load the new version' }).click();
    await expect.poll(() => description.inputValue()).toBe('changed again');
    expect(await notice.isVisible()).toBe(false);

    // This tab's own save is not a change made elsewhere.
    await description.fill('saved here');
    await page.getByRole('button', { name: 'Save routing rule' }).click();
    await expect
      .poll(async () => (await rules())[0]?.['description' as keyof Rule], { timeout: 10_000 })
      .toBe('saved here');
    await page.waitForTimeout(2_000);
    expect(await notice.isVisible()).toBe(false);
    expect(await description.inputValue()).toBe('saved here');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('refuses a save with a bad expression in the gateway’s words, changing nothing, and deletes the rule', async () => {
    const [rule] = await rules();
    const { context, page, problems } = await open();
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}routing-rules/${rule?.id}`);
    await page.getByRole('heading', { name: 'Routing rule long-context' }).waitFor();
    expect(await page.getByRole('textbox', { name: 'CEL expression' }).inputValue()).toBe(VALID);

    await typeCel(page, 'request.message_count');
    await page.getByText(/bool/).first().waitFor();
    await page.getByRole('button', { name: 'Save routing rule' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'cel_expression' });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/bool/);
    expect(await alert.textContent()).not.toContain('{');
    expect((await rules())[0]?.cel_expression).toBe(VALID);
    await shot(page, 'routing-rule-error');

    await confirmAction(page, 'Delete routing rule');
    await page.getByText('No routing rule yet').waitFor();
    expect(await rules()).toEqual([]);
    expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
    await context.close();
  }, 90_000);
});
