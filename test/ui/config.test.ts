// The config page in a real browser: the stores' state, client settings saved through PUT /api/config, the
// outbound proxy (its password never shown), and a refused value explained in words.
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

interface ConfigView {
  client_config: { log_retention_days: number; allowed_origins: string[]; enforce_auth_on_inference: boolean };
  proxy_config: { enabled: boolean; url: string; password: string };
}

const config = async () => (await (await gw.admin('/api/config')).json()) as ConfigView;

describe('config page', () => {
  it('saves client settings and the proxy; the proxy password is only a redacted hint', async () => {
    const { context, page, problems } = await newPage(browser);
    await logIn(page, gw);
    await page.getByRole('link', { name: 'Config' }).click();
    await page.getByRole('heading', { name: 'Client settings' }).waitFor();
    await page.getByText('connected').first().waitFor();
    await screenshot(page, 'config');

    const client = page.getByRole('form', { name: 'Client settings' });
    await client.getByLabel('Log retention (days)').fill('7');
    await client.getByLabel('Allowed origins (CORS)').fill('https://app.example.com');
    await client.getByLabel('Allowed origins (CORS)').press('Enter');
    await client.getByRole('button', { name: 'Save client settings' }).click();
    await expect.poll(async () => (await config()).client_config.log_retention_days, { timeout: 10_000 }).toBe(7);
    const saved = (await config()).client_config;
    expect(saved.allowed_origins).toEqual(['https://app.example.com']);
    expect(saved.enforce_auth_on_inference).toBe(true);

    const proxy = page.getByRole('form', { name: 'Outbound proxy' });
    await proxy.getByLabel('Proxy URL').fill('http://proxy.internal:3128');
    await proxy.getByLabel('Username').fill('gw');
    await proxy.getByLabel('Password', { exact: true }).fill('proxy-secret-0123456789');
    await proxy.getByRole('button', { name: 'Save proxy settings' }).click();
    await expect
      .poll(async () => (await config()).proxy_config.url, { timeout: 10_000 })
      .toBe('http://proxy.internal:3128');
    const hint = (await config()).proxy_config.password;
    expect(hint).not.toContain('proxy-secret-0123456789');
    await page.reload();
    await page.getByRole('heading', { name: 'Outbound proxy' }).waitFor();
    await page.getByText(`Stored: ${hint}`).waitFor();
    expect(await page.content()).not.toContain('proxy-secret-0123456789');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('explains a refused setting in words and changes nothing', async () => {
    const { context, page } = await newPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}config`);
    const client = page.getByRole('form', { name: 'Client settings' });
    await client.getByLabel('Public base URL for MCP OAuth').fill('ftp://nope');
    await client.getByRole('button', { name: 'Save client settings' }).click();
    const alert = client.getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    expect(text).toContain('mcp_external_client_url');
    expect(text).not.toContain('{');
    await screenshot(page, 'config-error');
    expect((await config()).client_config).not.toHaveProperty('mcp_external_client_url');
    await context.close();
  });
});
