// /mcp, the gateway as an MCP server, on real Postgres + Redis with the official MCP SDK client: a virtual key
// lists exactly the tools its mcp_configs allow, calls them through to the upstream MCP SDK servers, is refused
// (upstream never reached) outside its list; other credentials are refused; bad bodies get JSON-RPC errors.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';

let gw: TestGateway;
let alpha: McpToolServer;
let beta: McpToolServer;
const clients: Client[] = [];

async function createKey(body: Record<string, unknown>): Promise<string> {
  const res = await gw.admin('/api/governance/virtual-keys', { method: 'POST', body });
  const json = (await res.json()) as { value?: string };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.value as string;
}

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();

let scoped = '';
let none = '';
let inactive = '';

beforeAll(async () => {
  gw = await startTestGateway({
    config: { client: { max_request_body_size_mb: 1 }, mcp: { allowed_private_networks: ['127.0.0.1/32'] } },
  });
  alpha = await startMcpToolServer({
    transport: 'http',
    tools: [
      echoTool('read'),
      echoTool('write'),
      { name: 'boom', handler: () => Promise.reject(new Error('disk on fire')) },
      { name: 'slow', handler: () => new Promise((r) => setTimeout(() => r('done'), 100)) },
    ],
  });
  beta = await startMcpToolServer({ transport: 'sse', tools: [echoTool('search'), echoTool('delete_all')] });
  for (const [name, s, type] of [
    ['alpha', alpha, 'http'],
    ['beta', beta, 'sse'],
  ] as const) {
    const res = await gw.admin('/api/mcp/client', {
      method: 'POST',
      body: { name, connection_type: type, connection_string: s.url },
    });
    expect(res.status).toBe(200);
  }
  await waitFor(() => gw.rt.mcp.connections.tools().length === 6, 10_000, 'both servers connected');
  scoped = await createKey({
    name: 'scoped',
    mcp_configs: [
      { mcp_client_name: 'alpha', tools_to_execute: ['read', 'boom', 'slow'], tools_to_auto_execute: [] },
      { mcp_client_name: 'beta', tools_to_execute: ['search'], tools_to_auto_execute: [] },
    ],
  });
  none = await createKey({ name: 'no-mcp', mcp_configs: [] });
  inactive = await createKey({
    name: 'inactive',
    is_active: false,
    mcp_configs: [{ mcp_client_name: 'alpha', tools_to_execute: ['*'], tools_to_auto_execute: [] }],
  });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await gw?.close();
  await alpha?.close();
  await beta?.close();
});

describe('/mcp with the MCP SDK client', () => {
  it('lists exactly the tools the key allows, qualified, with their schemas (x-gateway-vk)', async () => {
    const c = await connect({ 'x-gateway-vk': scoped });
    expect(c.getServerVersion()?.name).toBe('model-gateway');
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['alpha-boom', 'alpha-read', 'alpha-slow', 'beta-search']);
    expect(tools.find((t) => t.name === 'alpha-read')).toMatchObject({
      description: 'echoes its arguments (read)',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    });
  });

  it('calls an allowed tool on each upstream and returns its answer (Authorization: Bearer)', async () => {
    const c = await connect({ authorization: `Bearer ${scoped}` });
    expect(await names(c)).toEqual(['alpha-boom', 'alpha-read', 'alpha-slow', 'beta-search']);
    const r1 = await c.callTool({ name: 'alpha-read', arguments: { text: 'hello' } });
    expect(r1.content).toEqual([{ type: 'text', text: 'read:{"text":"hello"}' }]);
    expect(r1.isError).toBeFalsy();
    const r2 = await c.callTool({ name: 'beta-search', arguments: { text: 'q' } });
    expect(r2.content).toEqual([{ type: 'text', text: 'search:{"text":"q"}' }]);
    expect(alpha.calls.at(-1)).toMatchObject({ tool: 'read', args: { text: 'hello' } });
    expect(beta.calls.at(-1)).toMatchObject({ tool: 'search', args: { text: 'q' } });
  });

  it('refuses a tool outside the key’s list; the upstream never sees it', async () => {
    const c = await connect({ 'x-gateway-vk': scoped });
    const before = [alpha.calls.length, beta.calls.length];
    for (const name of ['alpha-write', 'beta-delete_all']) {
      await expect(c.callTool({ name, arguments: {} })).rejects.toThrow(/not allowed for this virtual key/);
    }
    await expect(c.callTool({ name: 'gamma-x', arguments: {} })).rejects.toThrow(/unknown tool gamma-x/);
    await expect(c.callTool({ name: 'nodash', arguments: {} })).rejects.toThrow(/unknown tool nodash/);
    expect([alpha.calls.length, beta.calls.length]).toEqual(before);
  });

  it('an upstream failure comes back as a tool error with its message', async () => {
    const c = await connect({ 'x-gateway-vk': scoped });
    const r = await c.callTool({ name: 'alpha-boom', arguments: {} });
    expect(r.isError).toBe(true);
    expect(r.content).toEqual([{ type: 'text', text: 'disk on fire' }]);
    expect((await c.callTool({ name: 'alpha-slow', arguments: {} })).content).toEqual([{ type: 'text', text: 'done' }]);
  });

  it('a key without mcp_configs lists nothing and its calls are blocked', async () => {
    const c = await connect({ 'x-gateway-vk': none });
    expect(await names(c)).toEqual([]);
    const before = alpha.calls.length;
    await expect(c.callTool({ name: 'alpha-read', arguments: {} })).rejects.toThrow(/not allowed for this virtual key/);
    expect(alpha.calls.length).toBe(before);
  });

  it('a disconnected upstream: the tool is listed no more and a call says why', async () => {
    const c = await connect({ 'x-gateway-vk': scoped });
    await beta.kill();
    try {
      await waitFor(async () => !(await names(c)).includes('beta-search'), 10_000, 'beta gone');
      await expect(c.callTool({ name: 'beta-search', arguments: {} })).rejects.toThrow(
        /beta-search is not available: MCP client beta is error/,
      );
    } finally {
      await beta.restart();
    }
    await waitFor(async () => (await names(c)).includes('beta-search'), 15_000, 'beta back');
  });
});

describe('/mcp refuses credentials that are not an active virtual key', () => {
  const post = (headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) =>
    fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('no credentials: 401 in the envelope', async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ is_gateway_error: true, error: { code: 'authentication_failed' } });
  });

  it('a gateway token: 403 saying /mcp needs a virtual key', async () => {
    const res = await post({ authorization: `Bearer ${INFERENCE_TOKEN}` });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/\/mcp needs a virtual key in x-gateway-vk or Authorization: Bearer/);
  });

  it('the admin key: 403', async () => {
    const res = await post({ authorization: 'Bearer test-admin-key-0123456789' });
    expect(res.status).toBe(403);
  });

  it('an unknown key and an inactive key: 403', async () => {
    expect((await post({ 'x-gateway-vk': `sk-vk-${'u'.repeat(43)}` })).status).toBe(403);
    const res = await post({ 'x-gateway-vk': inactive });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ is_gateway_error: true });
  });

  it('the SDK client with a gateway token cannot even initialize', async () => {
    await expect(connect({ authorization: `Bearer ${INFERENCE_TOKEN}` })).rejects.toThrow(/403|virtual key/);
  });
});

describe('/mcp bad input', () => {
  const raw = (init: RequestInit) =>
    fetch(`${gw.url}/mcp`, {
      ...init,
      headers: {
        'x-gateway-vk': scoped,
        accept: 'application/json, text/event-stream',
        ...(init.headers as Record<string, string>),
      },
    });

  it('malformed JSON: 400 JSON-RPC parse error', async () => {
    const res = await raw({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
  });

  it('JSON that is not a JSON-RPC message: a JSON-RPC error', async () => {
    const res = await raw({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"hello":1}' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { jsonrpc: string; error: { code: number } };
    expect(body.jsonrpc).toBe('2.0');
    expect([-32700, -32600]).toContain(body.error.code);
  });

  it('another content type: 415 JSON-RPC error', async () => {
    const res = await raw({ method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it('a body over the size limit: 413 before it is read (the gateway envelope, as for every route), nothing called', async () => {
    const before = alpha.calls.length;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'alpha-read', arguments: { text: 'x'.repeat(1_100_000) } },
    });
    const res = await raw({ method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ is_gateway_error: true, error: { code: 'payload_too_large' } });
    expect(alpha.calls.length).toBe(before);
  });

  it('an unknown method: JSON-RPC method not found', async () => {
    const res = await raw({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'resources/list' }),
    });
    const body = (await res.json()) as { id: number; error: { code: number } };
    expect(body).toMatchObject({ id: 7, error: { code: -32601 } });
  });

  it('tools/call without a name: invalid params', async () => {
    const res = await raw({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: {} }),
    });
    expect(await res.json()).toMatchObject({ id: 8, error: { code: -32602 } });
  });

  it('GET and DELETE: 405 with allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await raw({ method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
  });
});
