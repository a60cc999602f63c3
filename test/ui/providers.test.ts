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

  it('edits a key without retyping its value, deletes it, and shows the API’s refusal in words', async () => {
    const { context, page, problems } = await newPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}providers/openai`);
    await page.getByRole('button', { name: 'Edit key main' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit key main' });
    await expect(dialog.getByText(/Stored: sk-t\*+WXYZ/)).toBeDefined();
    await dialog.getByLabel('Weight', { exact: false }).fill('2.5');
    await dialog.getByRole('button', { name: 'Save key' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('table', { name: 'Keys of openai' }).getByText('2.5').waitFor();
    const [key] = (
      (await (await gw.admin('/api/providers/openai/keys')).json()) as { keys: { id: string; weight: number }[] }
    ).keys;
    expect(key?.weight).toBe(2.5);
    // The stored secret is kept (the form sent no value): the gateway still holds the one typed at creation.
    await expect.poll(() => gw.rt.state.snapshot.providers.get('openai')?.keysByName.get('main')?.weight).toBe(2.5);
    expect(gw.rt.state.snapshot.providers.get('openai')?.keysByName.get('main')?.value).toBe(SECRET);

    // A base URL the API refuses: the words of the envelope, not JSON.
    await page.getByLabel('Base URL').fill('not a url');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'base_url' });
    await alert.waitFor();
    expect(await alert.textContent()).not.toContain('{');
    await screenshot(page, 'provider-error');

    await page.getByRole('button', { name: 'Delete key main' }).click();
    await page.getByRole('dialog', { name: 'Please confirm' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No key yet').waitFor();
    expect(((await (await gw.admin('/api/providers/openai/keys')).json()) as { total: number }).total).toBe(0);
    expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
    await context.close();
  });

  it('shows rows the operator wrote as read-only, naming the Kubernetes object', async () => {
    await gw.rt.state.providers.create({ provider: 'anthropic' }, { source: 'kubernetes', ownerRef: 'ml/anthropic' });
    await gw.rt.state.providers.addKey(
      'anthropic',
      { name: 'crd-key', value: 'sk-ant-0123456789abcdef' },
      { source: 'kubernetes', ownerRef: 'ml/anthropic-key' },
    );
    const { context, page, problems } = await newPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}providers/anthropic`);
    const notice = page.getByRole('note').filter({ hasText: 'Managed by Kubernetes' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('ml/anthropic');
    expect(await page.getByLabel('Base URL').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete provider' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add key' }).count()).toBe(0);
    await page.getByRole('table', { name: 'Keys of anthropic' }).getByText('crd-key').waitFor();
    expect(await page.getByRole('button', { name: 'Edit key crd-key' }).count()).toBe(0);
    await screenshot(page, 'provider-kubernetes');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('says why a login failed, and logs out', async () => {
    const { context, page } = await newPage(browser);
    await page.goto(gw.uiUrl);
    await page.getByLabel('Password or admin API key').fill('wrong-key-0123456789');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'invalid username or password' }).waitFor();
    await screenshot(page, 'login-failed');
    await logIn(page, gw);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    // The session is gone server-side too: the page's cookie no longer opens /api.
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === 'gateway_session')).toBeUndefined();
    await context.close();
  });
});
