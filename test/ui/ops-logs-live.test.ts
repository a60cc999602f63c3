// Live updates in a real browser, over the gateway's GET /ws (a ticket per connection from the session): with Live
// on, a request sent through the openai SDK appears on the logs page without a reload or a refetch of the list,
// only when it matches the page's filters (a text search, which only the gateway can check, shows a "refresh"
// notice instead); skipped rows are counted (not the tool calls') and a dropped connection comes back with a new ticket; a virtual key
// created with the admin key appears on the virtual-keys page without a reload.
import OpenAI from 'openai';
import type { Browser, Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, createVk, pc } from '../e2e/governance-helpers.ts';
import { type GovernanceUi, openPage, startGovernanceUi } from './governance-helpers.ts';
import { logIn, screenshot, type UiGateway } from './harness.ts';

/** Rows are flushed at least every second, then announced: well within this on a loaded machine. */
const WAIT = { timeout: 15_000 };

let env: GovernanceUi;
let gw: UiGateway;
let browser: Browser;
let vk: { id: string; value: string };
let other: { id: string; value: string };

beforeAll(async () => {
  env = await startGovernanceUi();
  ({ gw, browser } = env);
  vk = await createVk(gw, { name: 'live-key', provider_configs: [pc('openai')] });
  other = await createVk(gw, { name: 'quiet-key', provider_configs: [pc('openai')] });
}, 120_000);
afterAll(async () => {
  await env?.close();
});

async function ask(key: string, content: string): Promise<string> {
  const sdk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  const { response } = await sdk.chat.completions
    .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] })
    .withResponse();
  const id = response.headers.get('x-gateway-request-id');
  expect(id).toBeTruthy();
  return String(id);
}

/** Requests the page makes for the list of logs (not its totals, charts or a detail). */
function countListRequests(page: Page): { count: () => number } {
  let n = 0;
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/logs') n++;
  });
  return { count: () => n };
}

/** Ticket requests the page makes (one per connection attempt). */
function countTickets(page: Page): { count: () => number } {
  let n = 0;
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/session/ws-ticket' && r.method() === 'POST') n++;
  });
  return { count: () => n };
}

const liveLogs = (page: Page, state: string) => page.getByRole('status', { name: `Live logs: ${state}` });
const requestLink = (page: Page, id: string) =>
  page.getByRole('table', { name: 'Request logs' }).getByRole('link', { name: `Request ${id}` });

describe('logs page, Live', () => {
  it('adds a new request on top without a reload or a refetch of the list', async () => {
    const earlier = await ask(vk.value, 'a request from before the page opened');
    const { context, page, problems } = await openPage(browser);
    const lists = countListRequests(page);
    const tickets = countTickets(page);
    await logIn(page, gw);
    await page.getByRole('link', { name: 'Logs' }).click();
    await requestLink(page, earlier).waitFor();
    // Off by default; switching it on goes into the address and shows the connection's state.
    expect(new URL(page.url()).searchParams.get('live')).toBeNull();
    expect(await page.getByRole('switch', { name: 'Live' }).isChecked()).toBe(false);
    await page.getByRole('switch', { name: 'Live' }).click({ force: true });
    await page.waitForURL((u) => u.searchParams.get('live') === '1');
    await liveLogs(page, 'live').waitFor();
    await page.getByRole('status', { name: 'Live updates: live' }).waitFor();
    expect(tickets.count()).toBe(1); // one shared socket for the page
    await page.evaluate('window.__sameDocument = true');
    const fetchedBefore = lists.count();

    const id = await ask(vk.value, 'a request sent while the page watches');
    await requestLink(page, id).waitFor(WAIT);
    const links = page.getByRole('table', { name: 'Request logs' }).getByRole('link');
    expect(await links.first().getAttribute('aria-label')).toBe(`Request ${id}`);
    expect(await links.nth(1).getAttribute('aria-label')).toBe(`Request ${earlier}`);
    // Shown from the live message alone: the document was not reloaded, and the list was not fetched again.
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    expect(lists.count()).toBe(fetchedBefore);
    await page.getByText('Showing 2 of 2 matching requests').waitFor();
    await screenshot(page, 'logs-live');

    // The address keeps Live on across a reload, and Live off stops adding rows.
    await page.reload();
    await liveLogs(page, 'live').waitFor();
    expect(await page.getByRole('switch', { name: 'Live' }).isChecked()).toBe(true);
    await page.getByRole('switch', { name: 'Live' }).click({ force: true });
    await page.waitForURL((u) => u.searchParams.get('live') === null);
    await expect.poll(() => liveLogs(page, 'live').count(), WAIT).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('inserts only rows that match the filters; a text search asks for a refresh instead', async () => {
    const { context, page, problems } = await openPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}logs?virtual_key_ids=${vk.id}&live=1`);
    await liveLogs(page, 'live').waitFor();
    await page.getByText(/Showing \d+ of \d+ matching requests/).waitFor();
    // Announced in the order they were stored: once the second is shown, the first was seen and left out.
    const elsewhere = await ask(other.value, 'another key');
    const mine = await ask(vk.value, 'this key');
    await requestLink(page, mine).waitFor(WAIT);
    expect(await requestLink(page, elsewhere).count()).toBe(0);

    await page.goto(`${gw.uiUrl}logs?content_search=needle&live=1`);
    await liveLogs(page, 'live').waitFor();
    await page.getByText('No request matches these filters.').waitFor();
    const needle = await ask(vk.value, 'a needle in the live haystack');
    const notice = page.getByRole('status', { name: 'New requests not shown' });
    await notice.getByText('1 new request that may match these filters', { exact: false }).waitFor(WAIT);
    expect(await requestLink(page, needle).count()).toBe(0);
    await notice.getByRole('button', { name: 'Refresh the list' }).click();
    await requestLink(page, needle).waitFor();
    await expect.poll(() => notice.count(), WAIT).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('counts the rows the gateway skipped, and comes back with a new ticket after the connection drops', async () => {
    const { context, page, problems } = await openPage(browser);
    const tickets = countTickets(page);
    // The page's socket, passed through to the gateway, with a hand on it to send and to cut.
    const routes: { page: WebSocketRoute; server: WebSocketRoute }[] = [];
    await page.routeWebSocket(/\/ws\?/, (ws) => {
      routes.push({ page: ws, server: ws.connectToServer() });
    });
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}logs?live=1`);
    await liveLogs(page, 'live').waitFor();
    // The login page's document had a socket of its own; this document has one.
    const current = routes.at(-1);
    const [opened, ticketsBefore] = [routes.length, tickets.count()];
    // Tool calls skipped are not this page's; a notice without log_type (an older pod) is counted as requests.
    current?.page.send(JSON.stringify({ type: 'logs_skipped', count: 40, log_type: 'mcp_log' }));
    current?.page.send(JSON.stringify({ type: 'logs_skipped', count: 3 }));
    const notice = page.getByRole('status', { name: 'New requests not shown' });
    await notice.getByText(/^3 more new requests —/).waitFor();
    current?.page.send(JSON.stringify({ type: 'logs_skipped', count: 2, log_type: 'log' }));
    await notice.getByText(/^5 more new requests —/).waitFor();

    await current?.page.close({ code: 1012, reason: 'restarting' });
    await current?.server.close({ code: 1000, reason: 'the test cut the page off' });
    await page.getByRole('status', { name: 'Live logs: reconnecting' }).waitFor();
    await expect.poll(() => routes.length, WAIT).toBe(opened + 1);
    await liveLogs(page, 'live').waitFor(WAIT);
    expect(tickets.count()).toBe(ticketsBefore + 1);
    await notice.getByText('The live connection was interrupted', { exact: false }).waitFor();
    // Still receiving after the reconnect: a real row arrives over the new socket.
    const id = await ask(vk.value, 'after the reconnect');
    await requestLink(page, id).waitFor(WAIT);
    expect(problems.filter((p) => !p.includes('WebSocket'))).toEqual([]);
    await context.close();
  }, 90_000);
});

describe('other pages follow configuration changes', () => {
  it('shows a virtual key created with the admin key on the virtual-keys page without a reload', async () => {
    const { context, page, problems } = await openPage(browser);
    await logIn(page, gw);
    await page.getByRole('link', { name: 'Virtual keys' }).click();
    const table = page.getByRole('table', { name: 'Virtual keys' });
    await table.getByRole('link', { name: 'live-key' }).waitFor();
    await page.getByRole('status', { name: 'Live updates: live' }).waitFor();
    await page.evaluate('window.__sameDocument = true');

    await adminJson(gw, '/api/governance/virtual-keys', 'POST', { name: 'made-by-a-script' });
    await table.getByRole('link', { name: 'made-by-a-script' }).waitFor(WAIT);
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
