// MCP tool logs end to end (Postgres + Redis): MCP SDK tool servers called through POST /v1/mcp/tool/execute, the
// auto-execute loop of a chat completion (the official openai SDK, a fake OpenAI upstream) and the gateway's /mcp
// server (the MCP SDK client), then read back through /api/mcp-logs: virtual key attribution, the request a tool
// call belongs to, the content switch, failing tools, filters, stats, filter data, deletion, bad input, the /ws
// event, and tool calls that still succeed while the log store is down.
import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ADMIN_KEY } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';
import { adminJson, type Json } from './governance-helpers.ts';
import { callTool } from './mcp-helpers.ts';
import { MODEL, useInjectionEnv } from './mcp-injection-helpers.ts';

const env = useInjectionEnv();

beforeEach(async () => {
  await adminJson(env.gw, '/api/mcp-logs', 'DELETE', { filters: { end_time: '2100-01-01T00:00:00Z' } });
});

/** One chat-form call through POST /v1/mcp/tool/execute; status and body. */
async function execute(auth: Record<string, string>, name: string, args: Json = {}) {
  const res = await fetch(`${env.gw.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

const vkA = () => ({ 'x-gateway-vk': env.keyA.value });
const logs = async (query = '') => adminJson(env.gw, `/api/mcp-logs${query}`);
const rows = async (query = '') => (await logs(query))['logs'] as Json[];

async function status(path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await env.gw.admin(path, init);
  return { status: res.status, body: (await res.json()) as Json };
}

describe('MCP tool logs: where tool calls come from', () => {
  it('POST /v1/mcp/tool/execute: one row with the virtual key, arguments and result, no LLM request', async () => {
    const r = await execute(vkA(), 'files-read', { text: 'hello' });
    expect(r.status).toBe(200);
    const [row, ...rest] = await rows();
    expect(rest).toEqual([]);
    expect(row).toMatchObject({
      tool_name: 'read',
      server_label: 'files',
      virtual_key_id: env.keyA.id,
      virtual_key_name: env.keyA.view['name'],
      llm_request_id: null,
      arguments: { text: 'hello' },
      result: { content: [{ type: 'text', text: 'read:{"text":"hello"}' }] },
      status: 'success',
      error_details: null,
      cost: null,
    });
    expect(row?.['latency']).toEqual(expect.any(Number));
    expect(Date.parse(String(row?.['timestamp']))).toBeGreaterThan(Date.now() - 60_000);
    // The admin key runs tools too: no virtual key on the row.
    expect((await execute({ authorization: `Bearer ${ADMIN_KEY}` }, 'files-write', { text: 'x' })).status).toBe(200);
    expect(await rows('?tool_names=write')).toEqual([expect.objectContaining({ virtual_key_id: null })]);
  });

  it('auto-execution: the row names the model call (a request log) that asked for the tool', async () => {
    const sdk = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: env.keyA.value, maxRetries: 0 });
    const { response } = await sdk.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'look it up' }] })
      .withResponse();
    const [first] = String(response.headers.get('x-gateway-mcp-step-ids')).split(', ');
    const listed = await rows(`?llm_request_ids=${first}`);
    expect(listed).toEqual([
      expect.objectContaining({
        llm_request_id: first,
        tool_name: 'read',
        virtual_key_id: env.keyA.id,
        arguments: { query: 'look it up' },
        status: 'success',
      }),
    ]);
    expect((await env.gw.admin(`/api/logs/${first}`)).status).toBe(200);
  });

  it('/mcp: a tools/call through the gateway’s MCP server is logged with the caller’s key', async () => {
    expect(await callTool(env.gw, env.keyA.value, 'files-read')).toEqual({ isError: false, text: 'read:{}' });
    expect(await rows()).toEqual([
      expect.objectContaining({
        tool_name: 'read',
        server_label: 'files',
        virtual_key_id: env.keyA.id,
        llm_request_id: null,
        arguments: {},
        status: 'success',
      }),
    ]);
  });

  it('a tool that fails is an error row with its error; stats count it', async () => {
    const r = await execute(vkA(), 'files-fail');
    expect(r.body).toMatchObject({ is_error: true, content: 'disk on fire' });
    await execute(vkA(), 'files-read', { text: 'ok' });
    expect(await rows('?status=error')).toEqual([
      expect.objectContaining({
        tool_name: 'fail',
        status: 'error',
        error_details: {
          is_gateway_error: false,
          error: { type: 'tool_error', code: 'tool_error', message: 'disk on fire' },
        },
      }),
    ]);
    const stats = await adminJson(env.gw, '/api/mcp-logs/stats?server_labels=files');
    expect(stats).toMatchObject({ total_executions: 2, success_rate: 50, total_cost: 0 });
    expect((await logs())['stats']).toEqual(stats);
  });
});

describe('MCP tool logs: the logging plugin’s switches', () => {
  it('stores no arguments or result while content logging is off, and nothing while logging is off', async () => {
    const plugin = (body: Json) => adminJson(env.gw, '/api/plugins/logging', 'PUT', body);
    await plugin({ config: { disable_content_logging: true } });
    try {
      expect((await execute(vkA(), 'files-read', { text: 'secret words' })).status).toBe(200);
      const [row] = await rows();
      expect(row).toMatchObject({ arguments: null, result: null, status: 'success', virtual_key_id: env.keyA.id });
      expect(await rows('?content_search=secret')).toEqual([]);
      await plugin({ enabled: false });
      expect((await execute(vkA(), 'files-read', { text: 'unlogged' })).status).toBe(200);
      expect(await rows()).toHaveLength(1);
    } finally {
      await plugin({ enabled: true, config: { disable_content_logging: false } });
    }
  });
});

describe('MCP tool logs: the management routes', () => {
  it('filters, pages, answers filter data without key values, and deletes by ids', async () => {
    await execute(vkA(), 'files-read', { text: 'apples' });
    await execute(vkA(), 'files-write', { text: 'pears' });
    const page = await logs('?tool_names=files-write,files-read&sort_by=latency&order=asc&limit=1');
    expect(page['pagination']).toEqual({ limit: 1, offset: 0, sort_by: 'latency', order: 'asc', total_count: 2 });
    expect(page['has_logs']).toBe(true);
    expect(await rows('?content_search=PEARS')).toEqual([expect.objectContaining({ tool_name: 'write' })]);
    expect(await rows(`?virtual_key_ids=${env.keyB.id}`)).toEqual([]);

    const data = await adminJson(env.gw, '/api/mcp-logs/filterdata');
    expect(data).toEqual({
      tool_names: expect.arrayContaining(['read', 'write']),
      server_labels: ['files'],
      virtual_keys: [{ id: env.keyA.id, name: env.keyA.view['name'] }],
    });
    expect(JSON.stringify(data)).not.toContain(env.keyA.value);

    const [row] = await rows('?tool_names=read');
    const del = await adminJson(env.gw, '/api/mcp-logs', 'DELETE', { ids: [row?.['id']] });
    expect(del).toEqual({ message: '1 MCP tool log deleted', deleted: 1 });
    expect((await rows()).map((r) => r['tool_name'])).toEqual(['write']);
  });

  it('refuses bad input with 400 in the management error shape, deleting nothing', async () => {
    await execute(vkA(), 'files-read');
    for (const q of ['limit=5000', 'status=done', 'sort_by=tokens', 'bogus=1', 'min_latency=-1', 'start_time=soon']) {
      const r = await status(`/api/mcp-logs?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body, q).toMatchObject({ is_gateway_error: true, error: { code: 'invalid_request' } });
    }
    expect((await status('/api/mcp-logs/stats?order=asc')).status).toBe(400);
    expect((await status('/api/mcp-logs/filterdata?start_time=2000-01-01T00:00:00Z')).status).toBe(400);
    for (const body of [{}, { ids: [] }, { filters: {} }, { ids: 'x' }]) {
      expect((await status('/api/mcp-logs', { method: 'DELETE', body })).status, JSON.stringify(body)).toBe(400);
    }
    expect(await rows()).toHaveLength(1);
    const anonymous = await fetch(`${env.gw.url}/api/mcp-logs`);
    expect(anonymous.status).toBe(401);
  });
});

describe('MCP tool logs: live and resilient', () => {
  it('pushes an mcp_log event over /ws with the row as the listing shows it', async () => {
    const ws = new WebSocket(`${env.gw.url.replace(/^http/, 'ws')}/ws`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const messages: Json[] = [];
    ws.on('message', (data) => messages.push(JSON.parse(String(data)) as Json));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    try {
      await execute(vkA(), 'files-read', { text: 'live' });
      await env.gw.rt.mcpToolLog.writer.flush();
      await waitFor(() => messages.some((m) => m['type'] === 'mcp_log'), 10_000, 'an mcp_log event');
      const event = messages.find((m) => m['type'] === 'mcp_log');
      const [row] = await rows();
      expect(event).toEqual({ type: 'mcp_log', operation: 'create', payload: row });
    } finally {
      ws.close();
    }
  });

  it('a tool call succeeds while the log store is down; its row is written once the store is back', async () => {
    const store = env.gw.rt.mcpLogStore;
    const original = store.insertLines;
    store.insertLines = async () => {
      throw new Error('connection refused');
    };
    try {
      const r = await execute(vkA(), 'files-read', { text: 'during outage' });
      expect(r).toEqual({ status: 200, body: expect.objectContaining({ content: 'read:{"text":"during outage"}' }) });
      await env.gw.rt.mcpToolLog.writer.flush();
    } finally {
      store.insertLines = original;
    }
    await waitFor(
      async () => (await rows('?content_search=during%20outage')).length === 1,
      20_000,
      'the row written after the outage',
    );
  });
});
