// The gateway's connections to upstream MCP servers, on real Postgres + Redis, against MCP SDK tool servers:
// both transports, static headers, reconnect with backoff after a crash (state and row follow), tools re-listed
// on list_changed, disabled and removed clients dropped, the SSRF guard, and tool names models cannot call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpClientRecord } from '../../gateway/src/mcp/types.ts';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';

let gw: TestGateway;
const servers: McpToolServer[] = [];

async function server(opts: Parameters<typeof startMcpToolServer>[0]) {
  const s = await startMcpToolServer(opts);
  servers.push(s);
  return s;
}

async function addClient(body: Record<string, unknown>): Promise<string> {
  const res = await gw.admin('/api/mcp/client', { method: 'POST', body });
  const json = (await res.json()) as { client?: { client_id: string } };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.client?.client_id as string;
}

const record = (id: string): McpClientRecord => {
  const r = gw.rt.state.snapshot.mcpClients.get(id);
  if (!r) throw new Error(`no client ${id}`);
  return r;
};
const toolNames = (id: string) =>
  gw.rt.mcp.connections
    .tools()
    .filter((t) => t.clientId === id)
    .map((t) => t.qualifiedName)
    .sort();
const rowState = async (id: string) =>
  (
    await gw.rt.state.db.query<{ state: string; state_message: string | null }>(
      'SELECT state, state_message FROM mcp_clients WHERE id = $1',
      [id],
    )
  ).rows[0];
const server_ = { kind: 'server' } as const;

beforeAll(async () => {
  gw = await startTestGateway({ config: { mcp: { allowed_private_networks: ['127.0.0.1/32'] } } });
});
afterAll(async () => {
  await gw?.close();
  await Promise.allSettled(servers.map((s) => s.close()));
});

describe('connections to upstream MCP servers', () => {
  it('connects over streamable HTTP, lists every page of tools, calls one', async () => {
    const s = await server({
      transport: 'http',
      tools: [echoTool('one'), echoTool('two'), echoTool('three')],
      pageSize: 2,
    });
    const id = await addClient({ name: 'streamy', connection_type: 'http', connection_string: s.url });
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'connected');
    expect(toolNames(id)).toEqual(['streamy-one', 'streamy-three', 'streamy-two']);
    const result = await gw.rt.mcp.connections.call(record(id), 'two', { text: 'hi' }, { binding: server_ });
    expect(result.content).toEqual([{ type: 'text', text: 'two:{"text":"hi"}' }]);
    expect(s.calls.map((c) => c.tool)).toEqual(['two']);
    await waitFor(async () => (await rowState(id))?.state === 'connected', 5_000, 'row state');
  });

  it('connects over SSE and calls a tool', async () => {
    const s = await server({ transport: 'sse', tools: [echoTool('ping_me')] });
    const id = await addClient({ name: 'ssey', connection_type: 'sse', connection_string: s.url });
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'connected');
    expect(toolNames(id)).toEqual(['ssey-ping_me']);
    const result = await gw.rt.mcp.connections.call(record(id), 'ping_me', { text: 'x' }, { binding: server_ });
    expect(result.content[0]).toMatchObject({ text: 'ping_me:{"text":"x"}' });
  });

  it('sends the static headers of the client on every request; without them the server refuses (error state)', async () => {
    const s = await server({
      transport: 'http',
      tools: [echoTool('secret')],
      requiredHeaders: { 'X-Api-Key': 'k-123' },
    });
    const good = await addClient({
      name: 'hdr_ok',
      connection_type: 'http',
      connection_string: s.url,
      auth_type: 'headers',
      headers: { 'X-Api-Key': 'k-123' },
    });
    const bad = await addClient({ name: 'hdr_missing', connection_type: 'http', connection_string: s.url });
    await waitFor(() => gw.rt.mcp.connections.state(good).state === 'connected', 10_000, 'connected');
    await gw.rt.mcp.connections.call(record(good), 'secret', {}, { binding: server_ });
    expect(s.calls.at(-1)?.headers['x-api-key']).toBe('k-123');
    expect(s.requests.filter((r) => r.headers['x-api-key'] === 'k-123').length).toBeGreaterThan(2);

    await waitFor(() => gw.rt.mcp.connections.state(bad).state === 'error', 10_000, 'error');
    expect(gw.rt.mcp.connections.state(bad).message).toMatch(/401/);
    expect(toolNames(bad)).toEqual([]);
    await waitFor(async () => (await rowState(bad))?.state === 'error', 5_000, 'row error');
    await expect(gw.rt.mcp.connections.call(record(bad), 'secret', {}, { binding: server_ })).rejects.toThrow(
      /hdr_missing is not connected: .*401/,
    );
  });

  it('sends the static headers over SSE too (the event stream and the messages)', async () => {
    const s = await server({
      transport: 'sse',
      tools: [echoTool('guarded')],
      requiredHeaders: { 'X-Api-Key': 'k-sse' },
    });
    const id = await addClient({
      name: 'hdr_sse',
      connection_type: 'sse',
      connection_string: s.url,
      auth_type: 'headers',
      headers: { 'X-Api-Key': 'k-sse' },
    });
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'connected');
    await gw.rt.mcp.connections.call(record(id), 'guarded', {}, { binding: server_ });
    expect(new Set(s.requests.map((r) => `${r.method} ${r.path}`))).toEqual(new Set(['GET /sse', 'POST /messages']));
    expect(s.requests.every((r) => r.headers['x-api-key'] === 'k-sse')).toBe(true);
  });

  it('reconnects after the server is killed and restarted: error, then connected again; the row follows', async () => {
    const s = await server({ transport: 'http', tools: [echoTool('alive')] });
    const id = await addClient({ name: 'phoenix', connection_type: 'http', connection_string: s.url });
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'connected');

    await s.kill();
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'error', 10_000, 'error after kill');
    expect(toolNames(id)).toEqual([]);
    await waitFor(async () => (await rowState(id))?.state === 'error', 5_000, 'row error');
    expect((await rowState(id))?.state_message).toMatch(/ECONNREFUSED|closed|fetch failed|disconnected/i);
    await expect(gw.rt.mcp.connections.call(record(id), 'alive', {}, { binding: server_ })).rejects.toThrow(
      /phoenix is not connected/,
    );

    await s.restart();
    // Backoff starts at 0.5 s and doubles; a few attempts in, the restarted server is found.
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 15_000, 'reconnected');
    expect(toolNames(id)).toEqual(['phoenix-alive']);
    await waitFor(async () => (await rowState(id))?.state === 'connected', 5_000, 'row connected');
    const result = await gw.rt.mcp.connections.call(record(id), 'alive', {}, { binding: server_ });
    expect(result.isError).toBeUndefined();
  });

  it('the SSE transport reconnects too', async () => {
    const s = await server({ transport: 'sse', tools: [echoTool('sse_alive')] });
    const id = await addClient({ name: 'sse_phoenix', connection_type: 'sse', connection_string: s.url });
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'connected');
    await s.kill();
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'error', 10_000, 'error after kill');
    await s.restart();
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 15_000, 'reconnected');
    await gw.rt.mcp.connections.call(record(id), 'sse_alive', {}, { binding: server_ });
  });

  it('re-lists the tools on notifications/tools/list_changed', async () => {
    const s = await server({ transport: 'http', tools: [echoTool('first')] });
    const id = await addClient({ name: 'changer', connection_type: 'http', connection_string: s.url });
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'connected');
    expect(toolNames(id)).toEqual(['changer-first']);
    s.setTools([echoTool('second'), echoTool('third')]);
    // The standalone event stream is opened right after initialization; give it a moment before announcing.
    await waitFor(
      async () => {
        await s.notifyToolsChanged();
        return toolNames(id).length === 2;
      },
      5_000,
      'new tools',
    );
    expect(toolNames(id)).toEqual(['changer-second', 'changer-third']);
  });

  it('does not connect a disabled client; enabling connects it, disabling and deleting drop it', async () => {
    const s = await server({ transport: 'http', tools: [echoTool('dormant')] });
    const id = await addClient({ name: 'sleeper', connection_type: 'http', connection_string: s.url, disabled: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(s.sessions()).toBe(0);
    expect(gw.rt.mcp.connections.state(id)).toEqual({ state: 'disconnected', message: 'disabled' });
    expect(toolNames(id)).toEqual([]);

    expect((await gw.admin(`/api/mcp/client/${id}`, { method: 'PUT', body: { disabled: false } })).status).toBe(200);
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'connected');
    expect(toolNames(id)).toEqual(['sleeper-dormant']);

    expect((await gw.admin(`/api/mcp/client/${id}`, { method: 'PUT', body: { disabled: true } })).status).toBe(200);
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'disconnected', 5_000, 'disconnected');
    expect(toolNames(id)).toEqual([]);

    expect((await gw.admin(`/api/mcp/client/${id}`, { method: 'PUT', body: { disabled: false } })).status).toBe(200);
    await waitFor(() => toolNames(id).length === 1, 10_000, 'connected again');
    expect((await gw.admin(`/api/mcp/client/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect(toolNames(id)).toEqual([]);
    // The session is ended on the server too (DELETE).
    await waitFor(() => s.sessions() === 0, 5_000, 'session ended upstream');
  });

  it('reconnect(id) reopens the session at once', async () => {
    const s = await server({ transport: 'http', tools: [echoTool('again')] });
    const id = await addClient({ name: 'redial', connection_type: 'http', connection_string: s.url });
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'connected');
    const before = s.requests.filter((r) => r.method === 'POST').length;
    const res = await gw.admin(`/api/mcp/client/${id}/reconnect`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(gw.rt.mcp.connections.state(id).state).toBe('connected');
    // A new initialize went out.
    expect(s.requests.filter((r) => r.method === 'POST').length).toBeGreaterThan(before);
  });

  it('leaves out tools whose qualified name models cannot call', async () => {
    const long = `t${'x'.repeat(70)}`;
    const s = await server({ transport: 'http', tools: [echoTool('fine'), echoTool('has space'), echoTool(long)] });
    const id = await addClient({ name: 'picky', connection_type: 'http', connection_string: s.url });
    await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'connected');
    expect(toolNames(id)).toEqual(['picky-fine']);
  });

  it('refuses a connection string in a private range the allow-list does not admit', async () => {
    const res = await gw.admin('/api/mcp/client', {
      method: 'POST',
      body: { name: 'metadata', connection_type: 'http', connection_string: 'http://169.254.169.254/latest' },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/link-local/);
    expect([...gw.rt.state.snapshot.mcpClients.values()].some((c) => c.name === 'metadata')).toBe(false);
  });
});

describe('a gateway without MCP clients', () => {
  it('holds no connection and lists no tools', async () => {
    const bare = await startTestGateway({ backend: 'embedded' });
    try {
      expect(bare.rt.mcp.connections.tools()).toEqual([]);
      expect(bare.rt.mcp.connections.state('nope')).toEqual({ state: 'disconnected' });
    } finally {
      await bare.close();
    }
  });
});
