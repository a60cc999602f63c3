// /api/mcp/* on a real gateway (Postgres + Redis) against MCP SDK tool servers: the reference shapes, secrets
// never shown, every bad input a 400 in the envelope naming the field with nothing stored, virtual keys' grants
// following their client, and a created client connecting with its tools listed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';

type Json = Record<string, unknown>;
const ENCRYPTION_KEY = 'mcp-clients-api-test-key';
let gw: TestGateway;
let plain: McpToolServer;
let guarded: McpToolServer;

beforeAll(async () => {
  [plain, guarded] = await Promise.all([
    startMcpToolServer({ transport: 'http', tools: [echoTool('read'), echoTool('write')] }),
    startMcpToolServer({ transport: 'sse', tools: [echoTool('search')], requiredHeaders: { 'x-api-key': 'k3y' } }),
  ]);
  gw = await startTestGateway({
    config: { mcp: { allowed_private_networks: ['127.0.0.0/8'] } },
    encryptionKey: ENCRYPTION_KEY,
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([plain?.close(), guarded?.close()]);
});

async function send(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await gw.admin(path, body === undefined ? { method } : { method, body });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

async function storedClients(): Promise<number> {
  const { rows } = await gw.rt.state.db.query<{ n: number }>('SELECT count(*)::int AS n FROM mcp_clients');
  return rows[0]?.n ?? -1;
}

function expect400(r: { status: number; body: Json }, param: string, text: string, label = param): void {
  expect(r.status, label).toBe(400);
  expect(r.body['is_gateway_error']).toBe(true);
  const err = r.body['error'] as Json; // the envelope on /api
  expect(err['code'], label).toBe('invalid_request');
  expect(err['param'], label).toBe(param);
  expect(String(err['message']), label).toContain(text);
}

describe('/api/mcp/client', () => {
  it('creates a client that connects and lists its tools; GET shows the reference MCPClient shape', async () => {
    const created = await send('POST', '/api/mcp/client', {
      name: 'files',
      connection_type: 'http',
      connection_string: plain.url,
      tools_to_auto_execute: ['read'],
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: 'success', message: 'MCP client files added' });
    const client = created.body['client'] as Json;
    expect(client).toMatchObject({
      name: 'files',
      connection_type: 'http',
      connection_string: plain.url,
      auth_type: 'none',
      tools_to_execute: ['*'],
      tools_to_auto_execute: ['read'],
      allow_on_all_virtual_keys: false,
      source: 'api',
    });
    const id = String(client['client_id']);
    await waitFor(async () => (await send('GET', `/api/mcp/client/${id}`)).body['state'] === 'connected', 10_000);
    const one = await send('GET', `/api/mcp/client/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ config: client, state: 'connected', vk_configs: [] });
    const tools = one.body['tools'] as Json[];
    expect(tools.map((t) => [t['name'], t['qualified_name']])).toEqual([
      ['read', 'files-read'],
      ['write', 'files-write'],
    ]);
    expect(tools[0]?.['parameters']).toMatchObject({ type: 'object' });
    const listed = await send('GET', `/api/mcp/client/${id}/tools`);
    expect(listed.body).toEqual(tools);
    const all = await send('GET', '/api/mcp/clients');
    expect((all.body as unknown as Json[]).find((c) => (c['config'] as Json)['client_id'] === id)).toEqual(one.body);
    expect((await send('POST', `/api/mcp/client/${id}/reconnect`)).body).toEqual({
      status: 'success',
      message: 'MCP client files reconnected',
    });
    await send('DELETE', `/api/mcp/client/${id}`);
  });

  it('static headers: sealed at rest, redacted in answers, kept by [redacted], sent upstream', async () => {
    const created = await send('POST', '/api/mcp/client', {
      client_id: 'search-1',
      name: 'search',
      connection_type: 'sse',
      connection_string: guarded.url,
      auth_type: 'headers',
      headers: { 'X-Api-Key': 'k3y' },
    });
    expect(created.status).toBe(200);
    expect(JSON.stringify(created.body)).not.toContain('k3y');
    expect((created.body['client'] as Json)['headers']).toEqual({ 'X-Api-Key': '[redacted]' });
    const { rows } = await gw.rt.state.db.query<{ headers: string }>(
      `SELECT headers FROM mcp_clients WHERE id = 'search-1'`,
    );
    expect(rows[0]?.headers).toMatch(/^enc:v1:/);
    await waitFor(async () => (await send('GET', '/api/mcp/client/search-1')).body['state'] === 'connected', 10_000);
    // GET -> edit -> PUT with the placeholder: the secret stays and the client stays connected.
    const view = (await send('GET', '/api/mcp/client/search-1')).body['config'] as Json;
    expect(JSON.stringify(await send('GET', '/api/mcp/clients'))).not.toContain('k3y');
    const put = await send('PUT', '/api/mcp/client/search-1', { ...view, tools_to_execute: ['search'] });
    expect(put.body).toEqual({ status: 'success', message: 'MCP client search updated' });
    expect(gw.rt.state.snapshot.mcpClients.get('search-1')?.headers).toEqual({ 'X-Api-Key': 'k3y' });
    await send('POST', '/api/mcp/client/search-1/reconnect');
    await waitFor(async () => (await send('GET', '/api/mcp/client/search-1')).body['state'] === 'connected', 10_000);
    expect(guarded.requests.some((r) => r.headers['x-api-key'] === 'k3y')).toBe(true);
    await send('DELETE', '/api/mcp/client/search-1');
  });

  const base = { name: 'bad', connection_type: 'http', connection_string: 'http://127.0.0.1:9/mcp' };
  const BAD: [string, Json, string, string][] = [
    ['stdio', { connection_type: 'stdio' }, 'connection_type', 'does not spawn processes'],
    ['inprocess', { connection_type: 'inprocess' }, 'connection_type', 'no in-process servers'],
    ['name rule', { name: 'my-tools' }, 'name', 'letters, digits and _'],
    ['missing connection_string', { connection_string: undefined }, 'connection_string', ''],
    ['headers without headers auth', { headers: { 'x-a': 'b' } }, 'headers', 'only for auth_type headers'],
    ['headers auth without headers', { auth_type: 'headers' }, 'headers', 'required'],
    ['reserved header', { auth_type: 'headers', headers: { 'Content-Length': '1' } }, 'headers.Content-Length', ''],
    ['allow_on_all_virtual_keys', { allow_on_all_virtual_keys: true }, 'allow_on_all_virtual_keys', 'mcp_configs'],
    ['oauth_config on none', { oauth_config: {} }, 'oauth_config', 'only for auth_type oauth'],
    ['flow_mode on oauth', { auth_type: 'oauth', oauth_config: { flow_mode: 'vk' } }, 'oauth_config.flow_mode', ''],
    ['bad OAuth URL', { auth_type: 'oauth', oauth_config: { authorize_url: 'x' } }, 'oauth_config.authorize_url', ''],
    ['wildcard mixed', { tools_to_execute: ['*', 'a'] }, 'tools_to_execute', 'must stand alone'],
    ['duplicate tools', { tools_to_execute: ['a', 'a'] }, 'tools_to_execute', 'duplicate'],
    ['vk_configs on create', { vk_configs: [] }, 'vk_configs', 'only when editing'],
    ['metadata address', { connection_string: 'http://169.254.169.254/latest' }, 'connection_string', 'refused'],
  ];
  for (const [label, change, param, text] of BAD) {
    it(`refuses ${label}: 400 naming ${param}, nothing stored`, async () => {
      const before = await storedClients();
      expect400(await send('POST', '/api/mcp/client', { ...base, ...change }), param, text, label);
      expect(await storedClients()).toBe(before);
    });
  }

  it('refuses a changed connection type, string or auth type (400 naming it); a duplicate name is 409', async () => {
    const c = await send('POST', '/api/mcp/client', { ...base, name: 'fixed', client_id: 'fixed-1', disabled: true });
    expect(c.status).toBe(200);
    expect400(await send('PUT', '/api/mcp/client/fixed-1', { connection_type: 'sse' }), 'connection_type', 'cannot');
    expect400(
      await send('PUT', '/api/mcp/client/fixed-1', { connection_string: 'http://127.0.0.1:10/mcp' }),
      'connection_string',
      'cannot change after creation',
    );
    expect400(await send('PUT', '/api/mcp/client/fixed-1', { auth_type: 'oauth' }), 'auth_type', 'cannot');
    const dup = await send('POST', '/api/mcp/client', { ...base, name: 'fixed' });
    expect(dup.status).toBe(409);
    expect((dup.body['error'] as Json)['param']).toBe('name');
    expect((await send('GET', '/api/mcp/client/nope')).status).toBe(404);
    expect((await send('PUT', '/api/mcp/client/nope', {})).status).toBe(404);
    expect((await send('DELETE', '/api/mcp/client/nope')).status).toBe(404);
    expect((await send('POST', '/api/mcp/client/nope/reconnect')).status).toBe(404);
    expect400(await send('POST', '/api/mcp/client/fixed-1/reconnect'), 'id', 'disabled');
    expect400(await send('POST', '/api/mcp/client/fixed-1/complete-oauth'), 'id', 'does not use OAuth');
    await send('DELETE', '/api/mcp/client/fixed-1');
  });

  it('virtual keys: an unknown client is refused; deleting a client removes its grants (and says so)', async () => {
    const vk = (name: string) => ({
      name,
      mcp_configs: [{ mcp_client_name: 'granted', tools_to_execute: ['*'], tools_to_auto_execute: [] }],
    });
    const unknown = await send('POST', '/api/governance/virtual-keys', vk('early'));
    expect400(unknown, 'mcp_configs[0].mcp_client_name', 'no MCP client named "granted"');
    const c = await send('POST', '/api/mcp/client', { ...base, name: 'granted', disabled: true });
    const id = String((c.body['client'] as Json)['client_id']);
    const key = await send('POST', '/api/governance/virtual-keys', vk('holder'));
    expect(key.status).toBe(200);
    const listed = (await send('GET', `/api/mcp/client/${id}`)).body['vk_configs'];
    expect(listed).toEqual([
      {
        virtual_key_id: key.body['id'],
        virtual_key_name: 'holder',
        tools_to_execute: ['*'],
        tools_to_auto_execute: [],
      },
    ]);
    // The reference edit flow's vk_configs replace the grants; the key's own view follows.
    const keyPath = `/api/governance/virtual-keys/${String(key.body['id'])}`;
    expect((await send('PUT', `/api/mcp/client/${id}`, { vk_configs: [] })).status).toBe(200);
    expect((await send('GET', keyPath)).body['mcp_configs']).toEqual([]);
    const regrant = { virtual_key_id: key.body['id'], tools_to_execute: ['*'], tools_to_auto_execute: [] };
    expect((await send('PUT', `/api/mcp/client/${id}`, { vk_configs: [regrant] })).status).toBe(200);
    expect((await send('GET', keyPath)).body['mcp_configs']).toEqual([
      { mcp_client_name: 'granted', tools_to_execute: ['*'], tools_to_auto_execute: [] },
    ]);
    expect400(
      await send('PUT', `/api/mcp/client/${id}`, { vk_configs: [{ virtual_key_id: 'nope', tools_to_execute: [] }] }),
      'vk_configs[0].virtual_key_id',
      'no virtual key with id nope',
    );
    const del = await send('DELETE', `/api/mcp/client/${id}`);
    expect(del.body).toEqual({
      status: 'success',
      message: 'MCP client granted removed; removed from the mcp_configs of 1 virtual key(s): holder',
    });
    expect((await send('GET', `/api/governance/virtual-keys/${String(key.body['id'])}`)).body['mcp_configs']).toEqual(
      [],
    );
    // A new client of the same name inherits nothing.
    await send('POST', '/api/mcp/client', { ...base, name: 'granted', disabled: true });
    const again = await send('GET', `/api/governance/virtual-keys/${String(key.body['id'])}`);
    expect(again.body['mcp_configs']).toEqual([]);
  });

  it('OAuth-typed clients are validated before anything is stored', async () => {
    const before = await storedClients();
    expect400(
      await send('POST', '/api/mcp/client', { ...base, auth_type: 'per_user_oauth', headers: { 'x-a': 'b' } }),
      'headers',
      'only for auth_type headers',
    );
    expect(await storedClients()).toBe(before);
  });

  it('documents every route in /openapi.json', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Json> };
    for (const [path, method] of [
      ['/api/mcp/clients', 'get'],
      ['/api/mcp/client', 'post'],
      ['/api/mcp/client/{id}', 'get'],
      ['/api/mcp/client/{id}', 'put'],
      ['/api/mcp/client/{id}', 'delete'],
      ['/api/mcp/client/{id}/tools', 'get'],
      ['/api/mcp/client/{id}/reconnect', 'post'],
      ['/api/mcp/client/{id}/complete-oauth', 'post'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
  });
});

describe('/api/mcp/client without mcp.allowed_private_networks', () => {
  it('refuses a loopback connection string (400 naming it) and stores nothing', async () => {
    const other = await startTestGateway({ backend: 'embedded' });
    try {
      const res = await other.admin('/api/mcp/client', {
        method: 'POST',
        body: { name: 'local', connection_type: 'http', connection_string: plain.url },
      });
      const body = (await res.json()) as Json;
      expect(res.status).toBe(400);
      expect((body['error'] as Json)['param']).toBe('connection_string');
      expect(String((body['error'] as Json)['message'])).toContain('mcp.allowed_private_networks');
      const { rows } = await other.rt.state.db.query<{ n: number }>('SELECT count(*)::int AS n FROM mcp_clients');
      expect(rows[0]?.n).toBe(0);
    } finally {
      await other.close();
    }
  });
});
