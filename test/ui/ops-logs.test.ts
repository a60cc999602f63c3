// The logs explorer in a real browser: a request sent through the official openai SDK with a virtual key is found
// with the explorer's filters (kept in the address across a reload), its detail shows tokens, cost and the attempt
// trail, the charts and totals follow the same filters, and the list pages with next_cursor without repeats.
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, createVk, logOf, pc } from '../e2e/governance-helpers.ts';
import { type GovernanceUi, startGovernanceUi } from './governance-helpers.ts';
import { logIn, newPage, screenshot, type UiGateway } from './harness.ts';

/** Polls see the page within a loaded machine's time, not expect.poll's default second. */
const WAIT = { timeout: 15_000 };

let env: GovernanceUi;
let gw: UiGateway;
let browser: Browser;
let vk: { id: string; value: string };
let other: { id: string; value: string };

beforeAll(async () => {
  env = await startGovernanceUi();
  ({ gw, browser } = env);
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0.001,
    output_cost_per_token: 0.002,
  });
  vk = await createVk(gw, { name: 'explorer-key', provider_configs: [pc('openai')] });
  other = await createVk(gw, { name: 'paging-key', provider_configs: [pc('openai')] });
}, 120_000);
afterAll(async () => {
  await env?.close();
});

const sdk = (key: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

async function ask(key: string, content: string): Promise<string> {
  const { response } = await sdk(key)
    .chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] })
    .withResponse();
  const id = response.headers.get('x-gateway-request-id');
  expect(id).toBeTruthy();
  return String(id);
}

describe('logs explorer', () => {
  it('finds a request sent through the openai SDK with the filters, and opens its detail', async () => {
    const id = await ask(vk.value, 'where is the needle in the haystack');
    await ask(vk.value, 'an unrelated question');
    const row = await logOf(gw, id);
    expect(row['total_tokens']).toBeGreaterThan(0);

    const { context, page, problems } = await newPage(browser);
    page.setDefaultTimeout(15_000);
    await logIn(page, gw);
    await page.getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('heading', { name: 'Logs', level: 2 }).waitFor();
    const table = page.getByRole('table', { name: 'Request logs' });
    await table.getByRole('link', { name: `Request ${id}` }).waitFor();

    // Filter by the virtual key and by text: only the one request is left, and the address holds the filters.
    const filters = page.getByRole('form', { name: 'Log filters' });
    await filters.getByLabel('Virtual key').click();
    await page.getByRole('option', { name: 'explorer-key' }).click();
    await filters.getByLabel('Text').fill('needle');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((u) => u.searchParams.get('content_search') === 'needle');
    expect(new URL(page.url()).searchParams.get('virtual_key_ids')).toBe(vk.id);
    await expect.poll(() => table.getByRole('row').count(), WAIT).toBe(2); // header + the one request
    await table.getByRole('link', { name: `Request ${id}` }).waitFor();
    await page.getByLabel('Requests: 1', { exact: true }).waitFor();
    // The four charts drew over the same filters.
    for (const chart of ['Requests over time', 'Tokens over time', 'Cost over time', 'Latency over time']) {
      await page.getByRole('region', { name: chart }).locator('svg.recharts-surface').first().waitFor();
    }
    await screenshot(page, 'logs');

    // A reload keeps the filters: they live in the address.
    await page.reload();
    await expect
      .poll(() => page.getByRole('form', { name: 'Log filters' }).getByLabel('Text').inputValue(), WAIT)
      .toBe('needle');
    await page
      .getByRole('table', { name: 'Request logs' })
      .getByRole('link', { name: `Request ${id}` })
      .click();

    await page.getByRole('heading', { name: `Request ${id}` }).waitFor();
    const summary = page.getByRole('region', { name: 'Summary' });
    await summary.getByText(String(row['total_tokens']), { exact: true }).waitFor();
    await summary.getByText('main', { exact: true }).waitFor();
    await summary.getByText('explorer-key').waitFor();
    expect(Number(row['cost'])).toBeGreaterThan(0);
    const trail = page.getByRole('table', { name: 'Attempt trail' });
    await expect.poll(() => trail.getByRole('row').count(), WAIT).toBe(2);
    const attempt = trail.getByRole('row').nth(1);
    expect(await attempt.textContent()).toContain('openai');
    expect(await attempt.textContent()).toContain('200');
    expect(await page.getByLabel('Request body').textContent()).toContain('where is the needle in the haystack');
    await page.getByRole('region', { name: 'Semantic cache' }).getByText('did not run').waitFor();
    await screenshot(page, 'log-detail');

    // Back to the same filtered list.
    await page.getByRole('link', { name: '← All requests' }).click();
    await page.waitForURL((u) => u.pathname.endsWith('/ui/logs') && u.searchParams.get('content_search') === 'needle');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('pages through the matches with next_cursor, without repeating a row', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 12; i++) ids.add(await ask(other.value, `paging question ${i}`));
    await logOf(gw, [...ids].at(-1));
    const { context, page, problems } = await newPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}logs?virtual_key_ids=${other.id}&limit=10`);
    const table = page.getByRole('table', { name: 'Request logs' });
    await expect.poll(() => table.getByRole('row').count(), WAIT).toBe(11);
    await page.getByText('Showing 10 of 12 matching requests').waitFor();
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => table.getByRole('row').count(), WAIT).toBe(13);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    const shown = await table.getByRole('link').evaluateAll((as) => as.map((a) => a.getAttribute('aria-label')));
    expect(new Set(shown)).toEqual(new Set([...ids].map((x) => `Request ${x}`)));
    await page.getByLabel('Requests: 12', { exact: true }).waitFor();

    // A bound the API refuses is said in words next to the filters, never as JSON.
    await page.goto(`${gw.uiUrl}logs?min_latency=50&max_latency=10`);
    const alert = page.getByRole('alert').filter({ hasText: 'min_latency' }).first();
    await alert.waitFor();
    expect(await alert.textContent()).not.toContain('{');
    expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
    await context.close();
  }, 90_000);

  it('filters by team, customer, custom time range and cost bound from the address', async () => {
    const customer = await adminJson(gw, '/api/governance/customers', 'POST', { name: 'acme' });
    const team = await adminJson(gw, '/api/governance/teams', 'POST', {
      name: 'platform',
      customer_id: customer['id'],
    });
    const member = await createVk(gw, { name: 'team-key', team_id: team['id'], provider_configs: [pc('openai')] });
    const id = await ask(member.value, 'a request of the platform team');
    expect(await logOf(gw, id)).toMatchObject({ team_id: team['id'], customer_id: customer['id'] });

    const { context, page, problems } = await newPage(browser);
    page.setDefaultTimeout(15_000);
    await logIn(page, gw);
    const table = page.getByRole('table', { name: 'Request logs' });
    for (const query of [`team_ids=${team['id']}`, `customer_ids=${customer['id']}`]) {
      await page.goto(`${gw.uiUrl}logs?${query}`);
      await table.getByRole('link', { name: `Request ${id}` }).waitFor();
      await expect.poll(() => table.getByRole('row').count(), WAIT).toBe(2);
      await page.getByLabel('Requests: 1', { exact: true }).waitFor();
    }
    // The filter shows the customer by name.
    await page.getByRole('form', { name: 'Log filters' }).getByText('acme').waitFor();
    await screenshot(page, 'logs-customer');
    for (const query of [
      'range=custom&start_time=2020-01-01T00:00:00.000Z&end_time=2020-01-02T00:00:00.000Z',
      `team_ids=${team['id']}&min_cost=1000`,
    ]) {
      await page.goto(`${gw.uiUrl}logs?${query}`);
      await page.getByText('No request matches these filters.').waitFor();
      await page.getByLabel('Requests: 0', { exact: true }).waitFor();
    }
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);
});
