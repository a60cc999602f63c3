// config.json `mcp.client_configs` at every start, through the MCP client service (actor `config`): the file's
// clients connect, a file virtual key may name a file client, a restart is idempotent and brings the file's rows
// back to the file, rows the API made are left alone, and a bad entry stops the start naming its JSON path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { createTestDatabase } from '../harness/db.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';

type Json = Record<string, unknown>;
const VK_VALUE = 'sk-vk-file-mcp-0123456789abcdefghijk';
let server: McpToolServer;

beforeAll(async () => {
  server = await startMcpToolServer({
    transport: 'http',
    tools: [echoTool('lookup')],
    requiredHeaders: { authorization: 'Bearer file-secret' },
  });
});
afterAll(async () => {
  await server?.close();
});

function config(client: Json = {}, extra: Json[] = []): Json {
  return {
    mcp: {
      allowed_private_networks: ['127.0.0.0/8'],
      client_configs: [
        {
          name: 'docs',
          connection_type: 'http',
          connection_string: server.url,
          auth_type: 'headers',
          headers: { Authorization: 'Bearer file-secret' },
          tools_to_execute: ['lookup'],
          ...client,
        },
        ...extra,
      ],
    },
    governance: {
      virtual_keys: [
        {
          name: 'docs-reader',
          value: VK_VALUE,
          mcp_configs: [{ mcp_client_name: 'docs', tools_to_execute: ['lookup'], tools_to_auto_execute: [] }],
        },
      ],
    },
  };
}

async function json(gw: TestGateway, path: string, init?: { method?: string; body?: unknown }): Promise<Json> {
  return (await (await gw.admin(path, init)).json()) as Json;
}

async function clients(gw: TestGateway): Promise<Json[]> {
  return (await (await gw.admin('/api/mcp/clients')).json()) as Json[];
}

/** The `config` of the first listed client. */
async function firstConfig(gw: TestGateway): Promise<Json> {
  const [first] = await clients(gw);
  return (first?.['config'] ?? {}) as Json;
}

describe('mcp.client_configs', () => {
  let databaseUrl: string;
  let gw: TestGateway | undefined;
  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('creates the file clients (connected, headers sealed) before the file virtual keys that name them', async () => {
    gw = await startTestGateway({ databaseUrl, config: config(), encryptionKey: 'file-key' });
    const [entry] = await clients(gw);
    const c = entry?.['config'] as Json;
    expect(c).toMatchObject({
      name: 'docs',
      source: 'config',
      auth_type: 'headers',
      headers: { Authorization: '[redacted]' },
      tools_to_execute: ['lookup'],
      tools_to_auto_execute: ['*'],
    });
    const id = String(c['client_id']);
    const g = gw;
    await waitFor(async () => (await json(g, `/api/mcp/client/${id}`))['state'] === 'connected', 10_000);
    expect(((await json(gw, `/api/mcp/client/${id}`))['tools'] as Json[]).map((t) => t['name'])).toEqual(['lookup']);
    expect((await json(gw, `/api/mcp/client/${id}`))['vk_configs']).toMatchObject([
      { virtual_key_name: 'docs-reader', tools_to_execute: ['lookup'] },
    ]);
    const { rows } = await gw.rt.state.db.query<{ headers: string }>('SELECT headers FROM mcp_clients');
    expect(rows[0]?.headers).toMatch(/^enc:v1:/);
  });

  it('a restart keeps the id and writes nothing; a changed entry is brought to the file, omitted fields to defaults', async () => {
    const before = (await clients(gw as TestGateway))[0]?.['config'] as Json;
    // An API edit of a file row lasts until the next start.
    await (gw as TestGateway).admin(`/api/mcp/client/${String(before['client_id'])}`, {
      method: 'PUT',
      body: { tool_pricing: { lookup: 0.5 } },
    });
    await gw?.close();
    gw = await startTestGateway({ databaseUrl, config: config(), encryptionKey: 'file-key' });
    const same = (await clients(gw))[0]?.['config'] as Json;
    expect(same['client_id']).toBe(before['client_id']);
    expect(same['tool_pricing']).toEqual({});
    const unchanged = same['updated_at'];
    await gw.close();
    gw = await startTestGateway({ databaseUrl, config: config(), encryptionKey: 'file-key' });
    expect((await firstConfig(gw))['updated_at']).toBe(unchanged);
    await gw.close();
    gw = await startTestGateway({
      databaseUrl,
      config: config({ tools_to_execute: undefined, disabled: true }),
      encryptionKey: 'file-key',
    });
    expect((await clients(gw))[0]?.['config']).toMatchObject({
      client_id: before['client_id'],
      tools_to_execute: ['*'],
      disabled: true,
    });
  });

  it('leaves a client the API created alone, and keeps a client that left the file', async () => {
    const g = gw as TestGateway;
    const made = await json(g, '/api/mcp/client', {
      method: 'POST',
      body: { name: 'api_made', connection_type: 'http', connection_string: server.url, disabled: true },
    });
    expect(made['status']).toBe('success');
    await g.close();
    const shadow = { name: 'api_made', connection_type: 'sse', connection_string: server.url };
    gw = await startTestGateway({ databaseUrl, config: config({}, [shadow]), encryptionKey: 'file-key' });
    const byName = new Map((await clients(gw)).map((c) => [(c['config'] as Json)['name'], c['config'] as Json]));
    expect(byName.get('api_made')).toMatchObject({ source: 'api', connection_type: 'http', disabled: true });
    await gw.close();
    const { mcp: _mcp, governance: _gov, ...rest } = config();
    gw = await startTestGateway({
      databaseUrl,
      config: { ...rest, mcp: { allowed_private_networks: ['127.0.0.0/8'] } },
      encryptionKey: 'file-key',
    });
    expect((await clients(gw)).map((c) => (c['config'] as Json)['name']).sort()).toEqual(['api_made', 'docs']);
  });

  const BAD: [string, Json, string][] = [
    ['stdio', { connection_type: 'stdio' }, 'mcp.client_configs[0].connection_type: stdio is not supported'],
    ['bad name', { name: 'docs-v2' }, 'mcp.client_configs[0].name'],
    ['headers without headers auth', { auth_type: 'none' }, 'mcp.client_configs[0].headers'],
    [
      'allow_on_all_virtual_keys',
      { allow_on_all_virtual_keys: true },
      'mcp.client_configs[0].allow_on_all_virtual_keys',
    ],
    ['loopback not allowed', { connection_string: 'http://[::1]:9/mcp' }, 'mcp.client_configs[0].connection_string'],
  ];
  for (const [label, change, message] of BAD) {
    it(`a bad entry stops the start naming its path: ${label}`, async () => {
      const fresh = await createTestDatabase();
      await expect(startTestGateway({ databaseUrl: fresh, config: config(change) })).rejects.toThrow(message);
    });
  }

  it('a file virtual key naming a client that is in no file and no row stops the start', async () => {
    const fresh = await createTestDatabase();
    const file = config();
    (file['mcp'] as Json)['client_configs'] = [];
    await expect(startTestGateway({ databaseUrl: fresh, config: file })).rejects.toThrow(
      'governance.virtual_keys[0].mcp_configs[0].mcp_client_name: there is no MCP client named "docs"',
    );
  });

  it('compatibility mode (version 1): a file key without mcp_configs gets every enabled client, nothing auto-executed', async () => {
    const fresh = await createTestDatabase();
    const file = config({}, [
      { name: 'off', connection_type: 'http', connection_string: 'http://127.0.0.1:9/mcp', disabled: true },
    ]);
    const gov = file['governance'] as { virtual_keys: Json[] };
    gov.virtual_keys = [
      { name: 'legacy', value: VK_VALUE },
      { name: 'narrow', value: 'sk-vk-file-narrow-0123456789abcdefghi', mcp_configs: [{ mcp_client_name: 'docs' }] },
    ];
    const v1 = await startTestGateway({ databaseUrl: fresh, config: { version: 1, ...file } });
    try {
      const keys = (await json(v1, '/api/governance/virtual-keys'))['virtual_keys'] as Json[];
      const byName = new Map(keys.map((k) => [k['name'], k['mcp_configs']]));
      expect(byName.get('legacy')).toEqual([
        { mcp_client_name: 'docs', tools_to_execute: ['*'], tools_to_auto_execute: [] },
      ]);
      // An entry with an empty (1.4.x: all) tools_to_execute is widened, as the other allow-lists of the file.
      expect(byName.get('narrow')).toEqual([
        { mcp_client_name: 'docs', tools_to_execute: ['*'], tools_to_auto_execute: [] },
      ]);
      // The API follows the 1.5 rules: a key made there without mcp_configs gets no client.
      const made = await json(v1, '/api/governance/virtual-keys', { method: 'POST', body: { name: 'api_key' } });
      expect(made['mcp_configs']).toEqual([]);
    } finally {
      await v1.close();
    }
  });

  it('an immutable field changed in the file stops the start naming it', async () => {
    await gw?.close();
    const attempt = startTestGateway({
      databaseUrl,
      config: config({ connection_type: 'sse' }),
      encryptionKey: 'file-key',
    });
    gw = undefined;
    await expect(attempt).rejects.toThrow('mcp.client_configs[0].connection_type: cannot change after creation');
  });
});
