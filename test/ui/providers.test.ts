// The dashboard in a real browser: log in with the admin key, add a provider and a key, and see that the key's
// value is never shown again (only its redacted hint); screenshots of the pages go to test/artifacts/ui/.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, logIn, newPage, screenshot, startUiGateway, type UiGateway } from './harness.ts';

let gw: UiGateway;
let browser: Browser;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startUiGateway(), launchBrowser()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

const SECRET = 'sk-test-ui-0123456789abcdefWXYZ';

describe('providers and keys page', () => {
  it('logs in, adds a provider and a key, and shows only the key’s redacted hint', async () => {
    const { context, page, problems } = await newPage(browser);
    await logIn(page, gw);
    await page.getByRole('link', { name: 'Providers & keys' }).click();
    await page.getByRole('heading', { name: 'Providers' }).waitFor();
    await screenshot(page, 'providers-empty');

    await page.getByRole('button', { name: 'Add provider' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a provider' });
    await dialog.getByLabel('Provider', { exact: false }).first().fill('openai');
    await dialog.getByLabel('Base URL').fill('http://127.0.0.1:9/v1');
    await dialog.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('heading', { name: 'Provider openai' }).waitFor();

    await page.getByRole('button', { name: 'Add key' }).click();
    const keyDialog = page.getByRole('dialog', { name: 'Add a key to openai' });
    await keyDialog.getByLabel('Name', { exact: false }).first().fill('main');
    await keyDialog.getByLabel('API key').fill(SECRET);
    await keyDialog.getByLabel('Models').fill('gpt-4o-mini');
    await keyDialog.getByLabel('Models').press('Enter');
    await keyDialog.getByRole('button', { name: 'Add key' }).click();
    await keyDialog.waitFor({ state: 'detached' });
    const table = page.getByRole('table', { name: 'Keys of openai' });
    await table.getByText('main', { exact: true }).waitFor();
    await screenshot(page, 'provider-detail');

    // Stored through the API as typed; the page never shows the value again.
    const keys = (await (await gw.admin('/api/providers/openai/keys')).json()) as {
      keys: { name: string; value: string; models: string[] }[];
    };
    expect(keys.keys).toMatchObject([{ name: 'main', models: ['gpt-4o-mini'] }]);
    const hint = keys.keys[0]?.value ?? '';
    expect(hint).not.toBe(SECRET);
    await expect(table.getByText(hint)).toBeDefined();
    expect(await page.content()).not.toContain(SECRET);
    expect(await page.content()).toContain(hint);
    expect(problems).toEqual([]);
    await context.close();
  });
});
