// The MCP tool-calls page in a real browser: tools of an MCP SDK tool server executed through the gateway
// (POST /v1/mcp/tool/execute, and auto-executed during a chat completion sent with the openai SDK) show up on the
// page live and after a reload; the filters (kept in the address), the detail drawer with pretty arguments, result
// and error, the content-off case, the link to the model request, the link from the MCP client's page, the empty
// state, and deleting selected calls, checked against what GET /api/mcp-logs holds.
import OpenAI from 'openai';
import type { Browser, Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLiveMessage } from '../../ui/src/api/live-protocol.ts';
import { readMcpFilters, writeMcpFilters } from '../../ui/src/pages/mcp-logs/filters.ts';
import { asMcpLog, mcpLiveVerdict } from '../../ui/src/pages/mcp-logs/live-rows.ts';
import type { McpLogEntry } from '../../ui/src/pages/mcp-logs/types.ts';
import { adminJson, createVk, type Json, pc } from '../e2e/governance-helpers.ts';
import { addMcpClient, LOOPBACK_MCP, openaiProvider } from '../e2e/mcp-helpers.ts';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { confirmAction, openPage } from './governance-helpers.ts';
import { launchBrowser, logIn, screenshot, startUiGateway, type UiGateway } from './harness.ts';

/** Rows are flushed at least every second, then announced: well within this on a loaded machine. */
const WAIT = { timeout: 15_000 };

let gw: UiGateway;
let browser: Browser;
let openai: OpenAIFake;
let tools: McpToolServer;
let clientId: string;
let vk: { id: string; value: string };
let other: { id: string; value: string };

beforeAll(async () => {
  [openai, tools, browser] = await Promise.all([
    createOpenAIFake().start(),
    startMcpToolServer({
      transport: 'http',
      tools: [
        echoTool('lookup'),
        {
          name: 'boom',
          description: 'always fails',
          handler: () => {
            throw new Error('the archive is on fire');
          },
        },
      ],
    }),
    launchBrowser(),
  ]);
  gw = await startUiGateway({ config: { providers: openaiProvider(openai.url), mcp: LOOPBACK_MCP } });
  clientId = await addMcpClient(gw, {
    name: 'docs',
    connection_type: 'http',
    connection_string: tools.url,
    tools_to_execute: ['lookup', 'boom'],
    tools_to_auto_execute: ['lookup'],
  });
  const mcp = { mcp_client_name: 'docs', tools_to_execute: ['*'], tools_to_auto_execute: ['lookup'] };
  vk = await createVk(gw, { name: 'tools-key', provider_configs: [pc('openai')], mcp_configs: [mcp] });
  other = await createVk(gw, { name: 'other-key', provider_configs: [pc('openai')], mcp_configs: [mcp] });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await openai?.stop();
  await tools?.close();
});

/** One tool call through POST /v1/mcp/tool/execute (chat form) with virtual key `key`. */
async function execute(key: string, name: string, args: Json): Promise<void> {
  const res = await fetch(`${gw.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-vk': key },
    body: JSON.stringify({ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  await res.body?.cancel();
}

type Row = Json & { id: string };

/** The stored rows GET /api/mcp-logs lists for `query`. */
async function rows(query = ''): Promise<Row[]> {
  return (await adminJson(gw, `/api/mcp-logs${query}`))['logs'] as Row[]; // the documented listing
}

/** The one stored row whose content holds `text` (waits until it is stored). */
async function rowWith(text: string): Promise<Row> {
  let found: Row[] = [];
  await expect
    .poll(async () => {
      found = await rows(`?content_search=${encodeURIComponent(text)}`);
      return found.length;
    }, WAIT)
    .toBe(1);
  return found[0] as Row; // just counted
}

const table = (page: Page) => page.getByRole('table', { name: 'MCP tool calls' });
const callButton = (page: Page, id: string) => table(page).getByRole('button', { name: `Tool call ${id}` });
const liveCalls = (page: Page, state: string) => page.getByRole('status', { name: `Live tool calls: ${state}` });

/** Requests the page makes for the list of tool calls (not its filter data). */
function countListRequests(page: Page): { count: () => number } {
  let n = 0;
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/mcp-logs') n++;
  });
  return { count: () => n };
}

describe('MCP tool calls page', () => {
  it('explains the empty log, then shows a new call live, and after a reload', async () => {
    const { context, page, problems } = await openPage(browser);
    const lists = countListRequests(page);
    await logIn(page, gw);
    await page.getByRole('link', { name: 'MCP tool calls' }).click();
    await page.getByRole('heading', { name: 'MCP tool calls', level: 2 }).waitFor();
    const empty = page.getByRole('note', { name: 'No tool calls yet' });
    await empty.getByText('POST /v1/mcp/tool/execute').waitFor();
    await page.getByLabel('Executions: 0', { exact: true }).waitFor();
    await screenshot(page, 'mcp-logs-empty');

    await page.getByRole('switch', { name: 'Live' }).click({ force: true });
    await page.waitForURL((u) => u.searchParams.get('live') === '1');
    await liveCalls(page, 'live').waitFor();
    await page.evaluate('window.__sameDocument = true');
    const fetchedBefore = lists.count();

    await execute(vk.value, 'docs-lookup', { query: 'first live call' });
    const row = await rowWith('first live call');
    await callButton(page, row.id).waitFor(WAIT);
    const cells = table(page).getByRole('row').nth(1).getByRole('cell');
    expect(await cells.nth(2).textContent()).toBe('lookup');
    expect(await cells.nth(3).textContent()).toBe('docs');
    expect(await cells.nth(4).textContent()).toBe('tools-key');
    expect(await cells.nth(5).textContent()).toBe('success');
    // Shown from the live message alone: no reload, no refetch of the list.
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    expect(lists.count()).toBe(fetchedBefore);
    expect(await empty.count()).toBe(0);
    await screenshot(page, 'mcp-logs-live');

    // After a reload the row comes from the API, with the stats of the matching calls.
    await page.reload();
    await callButton(page, row.id).waitFor();
    await page.getByLabel('Executions: 1', { exact: true }).waitFor();
    await page.getByLabel('Success rate: 100.0%', { exact: true }).waitFor();
    await page.getByText('Showing 1 of 1 matching tool calls').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('filters by status, text, tool and key, kept in the address', async () => {
    await execute(vk.value, 'docs-boom', { query: 'a failing call' });
    await execute(other.value, 'docs-lookup', { query: 'needle in a haystack' });
    const failed = await rowWith('failing call');
    const needle = await rowWith('needle');
    const { context, page, problems } = await openPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}mcp-logs`);
    await callButton(page, failed.id).waitFor();
    await callButton(page, needle.id).waitFor();

    const filters = page.getByRole('form', { name: 'Tool call filters' });
    // The pills wrapper takes the click for its (empty) text field.
    await filters.getByLabel('Status').click({ force: true });
    await page.getByRole('option', { name: 'Error' }).click();
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((u) => u.searchParams.get('status') === 'error');
    await expect.poll(() => table(page).getByRole('row').count(), WAIT).toBe(2); // header + the failed call
    await callButton(page, failed.id).waitFor();
    await page.getByLabel('Executions: 1', { exact: true }).waitFor();
    await page.getByLabel('Success rate: 0.0%', { exact: true }).waitFor();

    // A text search and a key the address holds, as a bookmark would.
    await page.goto(`${gw.uiUrl}mcp-logs?content_search=NEEDLE&virtual_key_ids=${other.id}`);
    await callButton(page, needle.id).waitFor();
    await expect.poll(() => table(page).getByRole('row').count(), WAIT).toBe(2);
    expect(await filters.getByLabel('Text', { exact: true }).inputValue()).toBe('NEEDLE');
    await page.goto(`${gw.uiUrl}mcp-logs?content_search=needle&virtual_key_ids=${vk.id}`);
    await page.getByText('No tool call matches these filters.').waitFor();

    // The tool as models see it (server-tool) matches too; the MCP client's page links to its calls.
    await page.goto(`${gw.uiUrl}mcp/${encodeURIComponent(clientId)}`);
    await page.getByRole('link', { name: 'Tool calls through docs' }).click();
    await page.waitForURL((u) => u.pathname.endsWith('/mcp-logs') && u.searchParams.get('server_labels') === 'docs');
    await callButton(page, needle.id).waitFor();
    await page.goto(`${gw.uiUrl}mcp-logs?tool_names=docs-boom`);
    await callButton(page, failed.id).waitFor();
    await expect.poll(() => table(page).getByRole('row').count(), WAIT).toBe(2);
    await screenshot(page, 'mcp-logs-filtered');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('shows arguments, result and error in the detail, and links an auto-executed call to its request', async () => {
    const sdk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: vk.value, maxRetries: 0 });
    const { response } = await sdk.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'find the manual' }] })
      .withResponse();
    const [step] = String(response.headers.get('x-gateway-mcp-step-ids')).split(', ');
    expect(step).toBeTruthy();
    const auto = await rowWith('find the manual');
    expect(auto['llm_request_id']).toBe(step);
    await execute(vk.value, 'docs-boom', { query: 'a broken lookup' });
    const failed = await rowWith('broken lookup');

    const { context, page, problems } = await openPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}mcp-logs`);
    await callButton(page, failed.id).click();
    let drawer = page.getByRole('dialog', { name: 'Tool call docs / boom' });
    await drawer.getByRole('alert').getByText('the archive is on fire').waitFor();
    await drawer.getByText('Reported by the tool server', { exact: false }).waitFor();
    const args = await drawer.getByLabel('Arguments JSON').textContent();
    expect(JSON.parse(String(args))).toEqual({ query: 'a broken lookup' });
    // Pretty: one key per line.
    expect(args).toContain('\n  "query": "a broken lookup"\n');
    // The tool server's own error result (isError) is kept as the call's result.
    const failure = JSON.parse(String(await drawer.getByLabel('Result JSON').textContent()));
    expect(failure).toEqual(failed['result']);
    expect(failure).toMatchObject({ isError: true });
    await screenshot(page, 'mcp-logs-detail-error');
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });

    await callButton(page, auto.id).click();
    drawer = page.getByRole('dialog', { name: 'Tool call docs / lookup' });
    const result = JSON.parse(String(await drawer.getByLabel('Result JSON').textContent()));
    expect(result).toEqual(auto['result']);
    expect(JSON.stringify(result)).toContain('find the manual');
    await drawer.getByRole('link', { name: String(step) }).click();
    await page.getByRole('heading', { name: `Request ${step}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/logs/${step}`);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('says so when content logging was off', async () => {
    await adminJson(gw, '/api/plugins/logging', 'PUT', { config: { disable_content_logging: true } });
    try {
      await execute(vk.value, 'docs-lookup', { query: 'private words' });
    } finally {
      await adminJson(gw, '/api/plugins/logging', 'PUT', { config: { disable_content_logging: false } });
    }
    let quiet: Row | undefined;
    await expect
      .poll(async () => {
        quiet = (await rows()).find((r) => r['arguments'] === null);
        return quiet !== undefined;
      }, WAIT)
      .toBe(true);
    const id = String(quiet?.id);
    const { context, page, problems } = await openPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}mcp-logs`);
    await callButton(page, id).click();
    const drawer = page.getByRole('dialog', { name: 'Tool call docs / lookup' });
    await drawer.getByText('Not logged: content logging was off', { exact: false }).waitFor();
    expect(await drawer.getByLabel('Arguments JSON').count()).toBe(0);
    expect(await drawer.textContent()).not.toContain('private words');
    await screenshot(page, 'mcp-logs-content-off');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('deletes the selected calls after a confirmation, and only those', async () => {
    await execute(vk.value, 'docs-lookup', { query: 'delete me one' });
    await execute(vk.value, 'docs-lookup', { query: 'delete me two' });
    const one = await rowWith('delete me one');
    const two = await rowWith('delete me two');
    const before = (await rows('?limit=1000')).length;
    const { context, page, problems } = await openPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}mcp-logs`);
    await callButton(page, one.id).waitFor();
    await table(page)
      .getByRole('checkbox', { name: `Select tool call ${one.id}` })
      .check();
    await table(page)
      .getByRole('checkbox', { name: `Select tool call ${two.id}` })
      .check();
    await page.getByText('2 selected').waitFor();
    // Cancelling deletes nothing.
    await page.getByRole('button', { name: 'Delete the selected tool calls' }).click();
    await page.getByRole('dialog', { name: 'Please confirm' }).getByRole('button', { name: 'Cancel' }).click();
    expect((await rows('?limit=1000')).length).toBe(before);

    await confirmAction(page, 'Delete the selected tool calls');
    await page.getByText('2 MCP tool logs deleted').waitFor();
    await callButton(page, one.id).waitFor({ state: 'detached' });
    await callButton(page, two.id).waitFor({ state: 'detached' });
    const left = await rows('?limit=1000');
    expect(left).toHaveLength(before - 2);
    expect(left.map((r) => r.id)).not.toContain(one.id);
    expect(left.map((r) => r.id)).not.toContain(two.id);
    await page.getByText(`Showing ${before - 2} of ${before - 2} matching tool calls`).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);
});

describe('MCP tool calls page, skipped live updates', () => {
  it('counts skipped tool calls as new calls, leaves skipped request logs out, says an older pod’s apart', async () => {
    const { context, page, problems } = await openPage(browser);
    // The page's socket, passed through to the gateway, with a hand on it to send to the page.
    const routes: WebSocketRoute[] = [];
    await page.routeWebSocket(/\/ws\?/, (ws) => {
      ws.connectToServer();
      routes.push(ws);
    });
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}mcp-logs?live=1`);
    await liveCalls(page, 'live').waitFor();
    const socket = routes.at(-1);
    socket?.send(JSON.stringify({ type: 'logs_skipped', count: 7, log_type: 'log' }));
    socket?.send(JSON.stringify({ type: 'logs_skipped', count: 4, log_type: 'mcp_log' }));
    const notice = page.getByRole('status', { name: 'New tool calls not shown' });
    await notice.getByText(/^4 more new tool calls —/).waitFor();
    // Without log_type (a gateway pod older than it) the count may be of request logs: said apart, as before.
    socket?.send(JSON.stringify({ type: 'logs_skipped', count: 2 }));
    await notice.getByText(/^2 live updates were skipped by the gateway —/).waitFor();
    expect(await notice.getByText(/^4 more new tool calls —/).count()).toBe(1);
    expect(await notice.getByText(/request|11|13/).count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});

describe('MCP tool calls page: its pure core', () => {
  const entry = (over: Partial<McpLogEntry> = {}): McpLogEntry => ({
    id: '019a0000-0000-7000-8000-000000000001',
    llm_request_id: null,
    timestamp: '2026-03-01T12:00:00.000Z',
    tool_name: 'lookup',
    server_label: 'docs',
    virtual_key_id: 'vk-1',
    virtual_key_name: 'tools-key',
    arguments: { query: 'x' },
    result: null,
    error_details: null,
    latency: 40,
    cost: null,
    status: 'success',
    created_at: '2026-03-01T12:00:00.000Z',
    ...over,
  });
  const verdict = (query: string, e = entry()) => mcpLiveVerdict(readMcpFilters(new URLSearchParams(query)), e);

  it('reads mcp_log messages (create only) and takes a payload with the fields the table reads', () => {
    const payload = entry();
    expect(parseLiveMessage(JSON.stringify({ type: 'mcp_log', operation: 'create', payload }))).toEqual({
      type: 'mcp_log',
      payload,
    });
    expect(parseLiveMessage('{"type":"mcp_log","operation":"update","payload":{}}')).toBeUndefined();
    expect(asMcpLog(payload)).toEqual(payload);
    expect(asMcpLog({ ...payload, latency: '40' })).toBeUndefined();
    expect(asMcpLog({ ...payload, status: 'processing' })).toBeUndefined();
    expect(asMcpLog([payload])).toBeUndefined();
  });

  it('places a live row as the API filters: tool as listed or as models see it, any-of lists, inclusive latency', () => {
    expect(verdict('')).toBe('show');
    expect(verdict('tool_names=lookup')).toBe('show');
    expect(verdict('tool_names=docs-lookup')).toBe('show');
    expect(verdict('tool_names=boom')).toBe('hide');
    expect(verdict('server_labels=web,docs&status=success')).toBe('show');
    expect(verdict('status=error')).toBe('hide');
    expect(verdict('virtual_key_ids=vk-2')).toBe('hide');
    expect(verdict('llm_request_ids=req-1')).toBe('hide');
    expect(verdict('llm_request_ids=req-1', entry({ llm_request_id: 'req-1' }))).toBe('show');
    expect(verdict('min_latency=40&max_latency=40')).toBe('show');
    expect(verdict('min_latency=41')).toBe('hide');
    expect(verdict('range=custom&end_time=2026-03-01T11:00:00.000Z')).toBe('hide');
    // Only the gateway can tell: text search, another order.
    expect(verdict('content_search=x')).toBe('unsure');
    expect(verdict('sort_by=latency')).toBe('unsure');
    expect(verdict('content_search=x&status=error')).toBe('hide');
  });

  it('keeps the filters in the address without the defaults', () => {
    const f = readMcpFilters(new URLSearchParams('tool_names=a,b&status=error&min_latency=5&range=7d&sort_by=cost'));
    expect(f).toMatchObject({ tool_names: ['a', 'b'], status: ['error'], min_latency: '5', range: '7d' });
    expect(writeMcpFilters(f).toString()).toBe('tool_names=a%2Cb&status=error&min_latency=5&range=7d&sort_by=cost');
    expect(writeMcpFilters(readMcpFilters(new URLSearchParams())).toString()).toBe('');
  });
});
