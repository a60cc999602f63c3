// MCP clients in a real browser: adding a server-level OAuth client with scopes typed comma-separated, authorizing
// it through the popup against the test OAuth server (oidc-provider) while the page polls the OAuth state until it
// is connected (and says so when the server refuses), a header client whose values are never shown again and are
// kept by an edit, and per-user flows linking to the gateway's own consent page.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVk } from '../e2e/governance-helpers.ts';
import {
  addPerUserClient,
  LOOPBACK_MCP,
  type OAuthUpstream,
  send,
  startOAuthUpstream,
  whoamiTool,
} from '../e2e/mcp-helpers.ts';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { launchBrowser, logIn, newPage, screenshot, startUiGateway, type UiGateway } from './harness.ts';

let gw: UiGateway;
let browser: Browser;
let up: OAuthUpstream;
let plain: McpToolServer;

const WAIT = { timeout: 15_000 };
const HEADER_SECRET = 'hdr-secret-0123456789abcdef';

beforeAll(async () => {
  [gw, browser, up, plain] = await Promise.all([
    startUiGateway({ encryptionKey: 'ui-ops-mcp-test-key', config: { mcp: LOOPBACK_MCP } }),
    launchBrowser(),
    startOAuthUpstream({}, [echoTool('echo'), whoamiTool]),
    startMcpToolServer({
      transport: 'http',
      tools: [echoTool('lookup')],
      requiredHeaders: { 'X-Api-Key': HEADER_SECRET },
    }),
  ]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await up?.close();
  await plain?.close();
});

/** Adds an OAuth client through the dialog (dynamic registration, scopes comma-separated); lands on its detail. */
async function addOAuthClient(page: Page, name: string): Promise<void> {
  await page.goto(`${gw.uiUrl}mcp`);
  await page.getByRole('button', { name: 'Add MCP client' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add an MCP client' });
  await dialog.getByLabel('Name', { exact: false }).first().fill(name);
  await dialog.getByLabel('URL', { exact: false }).first().fill(up.upstream.url);
  await dialog.getByLabel('Authentication').click();
  await page.getByRole('option', { name: /^OAuth \(one authorization/ }).click();
  await dialog.getByLabel('Authorization server URL').fill(up.oauth.url);
  await dialog.getByLabel('Scopes').fill('tools:read, tools:write');
  await dialog.getByRole('button', { name: 'Add client' }).click();
  await page.getByRole('heading', { name: `MCP client ${name}` }).waitFor();
}

async function clientByName(name: string): Promise<Record<string, unknown>> {
  const list = await send(gw, 'GET', '/api/mcp/clients');
  const all = list.body as unknown as { config: { name: string } }[]; // the list answer is an array of clients
  const found = all.find((c) => c.config.name === name);
  expect(found, `MCP client ${name}`).toBeDefined();
  return found as unknown as Record<string, unknown>; // just checked
}

describe('MCP clients page', () => {
  it('authorizes a server-level OAuth client through the popup and shows it connected with its tools', async () => {
    const { context, page, problems } = await newPage(browser);
    page.setDefaultTimeout(15_000);
    await logIn(page, gw);
    await page.getByRole('link', { name: 'MCP clients' }).click();
    await page.getByRole('heading', { name: 'MCP clients' }).waitFor();
    await addOAuthClient(page, 'docs');
    const panel = page.getByRole('region', { name: 'OAuth authorization' });
    await panel.getByLabel('OAuth status: pending').waitFor();
    await screenshot(page, 'mcp-oauth-pending');

    const popupOpened = page.waitForEvent('popup');
    await panel.getByRole('button', { name: 'Authorize' }).click();
    const popup = await popupOpened;
    // The popup runs the authorization server's redirects, lands on the gateway's callback, and closes itself.
    await popup.waitForEvent('close', WAIT);
    await panel.getByRole('status').filter({ hasText: 'connected with OAuth' }).waitFor();
    await panel.getByLabel('OAuth status: authorized').waitFor();
    await expect.poll(() => panel.textContent(), WAIT).toContain('Scopes: tools:read, tools:write');
    const tools = page.getByRole('table', { name: 'Tools of docs' });
    await tools.getByText('docs-whoami').waitFor(WAIT);
    await tools.getByText('docs-echo').waitFor();
    await screenshot(page, 'mcp-oauth-authorized');

    // What the page said is what the gateway holds: the token with both scopes, and a live connection.
    const client = await clientByName('docs');
    const config = client['config'] as { oauth_config_id: string; client_id: string };
    const status = await send(gw, 'GET', `/api/oauth/config/${config.oauth_config_id}/status`);
    expect(status.body).toMatchObject({ status: 'authorized', token_scopes: ['tools:read', 'tools:write'] });
    expect(client['state']).toBe('connected');

    await page.getByRole('link', { name: '← All MCP clients' }).click();
    const row = page.getByRole('table', { name: 'MCP clients' }).getByRole('row', { name: /docs/ });
    await row.getByText('connected').waitFor();
    await row.getByText('2 tools').waitFor();
    await screenshot(page, 'mcp-clients');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('says so when the authorization server refuses', async () => {
    const { context, page, problems } = await newPage(browser);
    page.setDefaultTimeout(15_000);
    await logIn(page, gw);
    await addOAuthClient(page, 'denied');
    up.oauth.setDeny(true);
    try {
      const popupOpened = page.waitForEvent('popup');
      await page.getByRole('button', { name: 'Authorize' }).click();
      const popup = await popupOpened;
      const panel = page.getByRole('region', { name: 'OAuth authorization' });
      const alert = panel.getByRole('alert').filter({ hasText: 'The authorization failed' });
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/access_denied|denied/);
      await panel.getByLabel('OAuth status: failed').waitFor();
      await screenshot(page, 'mcp-oauth-failed');
      await popup.close();
    } finally {
      up.oauth.setDeny(false);
    }
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('shows header names only, and an edit that leaves a value empty keeps the stored one', async () => {
    const { context, page, problems } = await newPage(browser);
    page.setDefaultTimeout(15_000);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}mcp`);
    await page.getByRole('button', { name: 'Add MCP client' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add an MCP client' });
    await dialog.getByLabel('Name', { exact: false }).first().fill('search');
    await dialog.getByLabel('URL', { exact: false }).first().fill(plain.url);
    await dialog.getByLabel('Authentication').click();
    await page.getByRole('option', { name: 'Static headers' }).click();
    await dialog.getByRole('button', { name: 'Add header' }).click();
    await dialog.getByLabel('Header 1 name').fill('X-Api-Key');
    await dialog.getByLabel('Header 1 value').fill(HEADER_SECRET);
    await dialog.getByRole('button', { name: 'Add client' }).click();
    await page.getByRole('heading', { name: 'MCP client search' }).waitFor();
    await page.getByRole('table', { name: 'Tools of search' }).getByText('search-lookup').waitFor(WAIT);
    const settings = page.getByRole('region', { name: 'Settings' });
    await settings.getByText('X-Api-Key').waitFor();
    expect(await page.content()).not.toContain(HEADER_SECRET);

    await settings.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit MCP client search' });
    expect(await edit.getByLabel('Header 1 name').inputValue()).toBe('X-Api-Key');
    expect(await edit.getByLabel('Header 1 value').inputValue()).toBe('');
    await edit.getByLabel('Tools to execute').click();
    await edit.getByLabel('Tools to execute').press('Backspace');
    await edit.getByLabel('Tools to execute').fill('lookup');
    await edit.getByLabel('Tools to execute').press('Enter');
    await edit.getByRole('button', { name: 'Save client' }).click();
    await edit.waitFor({ state: 'detached' });
    await settings.getByText('lookup', { exact: true }).waitFor();
    const client = await clientByName('search');
    expect((client['config'] as { tools_to_execute: string[] }).tools_to_execute).toEqual(['lookup']);
    // The stored value was kept: a reconnect still passes the server's header check.
    await settings.getByRole('button', { name: 'Reconnect' }).click();
    await page.getByText('MCP client search reconnected').waitFor();
    await expect.poll(async () => (await clientByName('search'))['state'], WAIT).toBe('connected');
    expect(await page.content()).not.toContain(HEADER_SECRET);
    await screenshot(page, 'mcp-client-headers');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('lists per-user flows and links each pending one to the gateway’s consent page', async () => {
    const id = await addPerUserClient(gw, up, 'notes', { flow_mode: 'user' });
    const vk = await createVk(gw, { name: 'notes-user-key' });
    const { context, page, problems } = await newPage(browser);
    page.setDefaultTimeout(15_000);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}mcp/${id}`);
    const section = page.getByRole('region', { name: 'Per-user authorizations' });
    await section.getByText('No caller has started an authorization yet.').waitFor();
    await section.getByLabel('Virtual key').click();
    await page.getByRole('option', { name: 'notes-user-key' }).click();
    await section.getByLabel('User id').fill('bob');
    await section.getByRole('button', { name: 'Start authorization' }).click();
    const link = section.getByRole('link', { name: /\/api\/oauth\/consent\/puf_/ });
    await link.waitFor();
    const consent = String(await link.getAttribute('href'));
    expect(consent.startsWith(`${gw.url}/api/oauth/consent/puf_`)).toBe(true);
    const flows = page.getByRole('table', { name: 'Per-user OAuth flows' });
    await flows.getByText('user bob (virtual key notes-user-key)').waitFor();
    expect(await flows.getByRole('link', { name: 'Open consent page' }).getAttribute('href')).toBe(consent);
    await screenshot(page, 'mcp-per-user');

    // The link is the gateway's own consent page (not rebuilt by the dashboard).
    const res = await fetch(consent);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('notes');
    const listed = await send(gw, 'GET', `/api/oauth/per-user/flows?mcp_client_id=${id}`);
    expect(listed.body['flows']).toMatchObject([
      { status: 'pending', user: { name: 'bob' }, virtual_key: { id: vk.id } },
    ]);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);
});
