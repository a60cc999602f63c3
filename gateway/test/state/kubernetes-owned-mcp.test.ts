// OwnedResources for MCPClient resources, on Postgres and on PGlite: the MCP client row is created through the MCP
// client service, re-applying the same content writes nothing, a client of the same name from the API or another
// resource is never taken over, deletes touch only the owner's row, and virtual keys owned by resources that name
// a deleted or renamed client are written again (and refused) instead of looking unchanged.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { createSecretBox } from '../../src/crypto/secretbox.ts';
import { providerCatalog } from '../../src/providers/registry.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import { StateError } from '../../src/state/errors.ts';
import type { ChangeEvent } from '../../src/state/events.ts';
import { VirtualKeyService } from '../../src/state/services/governance/virtual-keys.ts';
import { OwnedResources } from '../../src/state/services/kubernetes.ts';
import { McpClientService } from '../../src/state/services/mcp/clients.ts';
import { ProviderService } from '../../src/state/services/providers.ts';

const DRIVERS = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: () => openDb({}) },
];
const OWNER = 'team-a/github-tools';
const ID = 'mcp-owned-1';
const VK_OWNER = 'team-a/tenant';
const VALUE = 'sk-vk-owned-mcp-0123456789abcdefgh';

const clientBody = (extra: Record<string, unknown> = {}) => ({
  name: 'github_tools',
  connection_type: 'http',
  connection_string: 'https://tools.example.com/mcp',
  auth_type: 'headers',
  headers: { 'x-api-key': 'k-1' },
  tools_to_execute: ['*'],
  tools_to_auto_execute: ['*'],
  tool_pricing: {},
  is_ping_available: true,
  disabled: false,
  ...extra,
});

const vkBody = (client: string) => ({
  name: VK_OWNER,
  provider_configs: [],
  mcp_configs: [{ mcp_client_name: client, tools_to_execute: ['*'], tools_to_auto_execute: [] }],
  value: VALUE,
});

describe.each(DRIVERS)('OwnedResources (MCP clients) on $name', ({ open }) => {
  let db: Db;
  let mcpClients: McpClientService;
  let owned: OwnedResources;
  const events: ChangeEvent[] = [];

  beforeAll(async () => {
    db = await open();
    await migrate(db);
    const publish = async (e: ChangeEvent) => {
      events.push(e);
    };
    const box = createSecretBox('k');
    const providers = new ProviderService({ db, box, catalog: providerCatalog, publish });
    const virtualKeys = new VirtualKeyService({ db, catalog: providerCatalog, publish, usage: async () => new Map() });
    mcpClients = new McpClientService({ db, box, publish });
    owned = new OwnedResources({ db, providers, virtualKeys, mcpClients });
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    await db.query('DELETE FROM virtual_keys');
    await db.query('DELETE FROM mcp_clients');
    events.length = 0;
  });

  async function refused(fn: () => Promise<unknown>, code: StateError['code']): Promise<string> {
    const err = await fn().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StateError);
    expect((err as StateError).code).toBe(code); // checked above
    return (err as StateError).message;
  }

  it('creates with the resource id and owner; the same content writes and publishes nothing; a new header updates', async () => {
    expect(await owned.applyMcpClient(OWNER, ID, clientBody())).toBe('created');
    const row = await db.query<{ id: string; source: string; owner_ref: string; headers: string }>(
      'SELECT id, source, owner_ref, headers FROM mcp_clients',
    );
    expect(row.rows).toMatchObject([{ id: ID, source: 'kubernetes', owner_ref: OWNER }]);
    expect(row.rows[0]?.headers).not.toContain('k-1');
    events.length = 0;
    expect(await owned.applyMcpClient(OWNER, ID, clientBody())).toBe('unchanged');
    expect(events).toEqual([]);
    expect(await owned.applyMcpClient(OWNER, ID, clientBody({ headers: { 'x-api-key': 'k-2' } }))).toBe('updated');
    expect(events).toContainEqual({ kind: 'mcp' });
    const { rows } = await db.query<{ applied_hash: string }>('SELECT applied_hash FROM mcp_clients');
    expect(rows[0]?.applied_hash).toMatch(/^[0-9a-f]{32}:[0-9a-f]{64}$/);
    expect(await owned.mcpClientStatus(ID)).toEqual({ state: 'disconnected', state_message: null });
  });

  it('never takes over a client of the same name from the API or another resource; deletes by the owner only', async () => {
    await mcpClients.create({ ...clientBody(), name: 'api_tools' }, { source: 'api' });
    const msg = await refused(() => owned.applyMcpClient(OWNER, ID, clientBody({ name: 'api_tools' })), 'conflict');
    expect(msg).toBe('MCP client api_tools already exists and is managed by the management API');
    await owned.applyMcpClient(OWNER, ID, clientBody());
    const other = await refused(() => owned.applyMcpClient('team-b/tools', 'mcp-owned-2', clientBody()), 'conflict');
    expect(other).toBe('MCP client github_tools already exists and is managed by the MCPClient team-a/github-tools');
    // The REST API may not edit it either.
    await refused(() => mcpClients.update(ID, { disabled: true }, { source: 'api' }), 'owned_by_kubernetes');
    await owned.deleteMcpClient('team-b/tools', ID);
    expect(await owned.listOwned()).toEqual([{ kind: 'MCPClient', key: ID, owner: OWNER }]);
    await owned.deleteOwned({ kind: 'MCPClient', key: ID, owner: OWNER });
    expect(await owned.listOwned()).toEqual([]);
    const { rows } = await db.query<{ name: string }>('SELECT name FROM mcp_clients');
    expect(rows).toEqual([{ name: 'api_tools' }]);
  });

  it('a deleted client: the owned virtual key naming it is refused on its next apply, and regains the grant after', async () => {
    await owned.applyMcpClient(OWNER, ID, clientBody());
    expect(await owned.applyVirtualKey(VK_OWNER, 'vk-1', vkBody('github_tools'))).toBe('created');
    await owned.deleteMcpClient(OWNER, ID);
    const grants = async () =>
      (await db.query<{ mcp_configs: unknown[] }>('SELECT mcp_configs FROM virtual_keys')).rows[0]?.mcp_configs;
    expect(await grants()).toEqual([]);
    const msg = await refused(() => owned.applyVirtualKey(VK_OWNER, 'vk-1', vkBody('github_tools')), 'invalid');
    expect(msg).toContain('github_tools');
    await owned.applyMcpClient(OWNER, ID, clientBody());
    expect(await owned.applyVirtualKey(VK_OWNER, 'vk-1', vkBody('github_tools'))).toBe('updated');
    expect(await grants()).toMatchObject([{ mcp_client_name: 'github_tools' }]);
  });

  it('a client the API deletes: the owned virtual key naming it is written again on its next apply (refused)', async () => {
    await mcpClients.create(clientBody({ name: 'api_tools' }), { source: 'api' });
    expect(await owned.applyVirtualKey(VK_OWNER, 'vk-1', vkBody('api_tools'))).toBe('created');
    await mcpClients.delete((await mcpClients.list())[0]?.client_id ?? '', { source: 'api' });
    // Without the cleared digest this apply would be 'unchanged' and the key would look synced without its grant.
    const msg = await refused(() => owned.applyVirtualKey(VK_OWNER, 'vk-1', vkBody('api_tools')), 'invalid');
    expect(msg).toContain('api_tools');
  });

  it('a renamed client: the owned virtual key still naming the old name is refused on its next apply', async () => {
    await owned.applyMcpClient(OWNER, ID, clientBody());
    await owned.applyVirtualKey(VK_OWNER, 'vk-1', vkBody('github_tools'));
    expect(await owned.applyMcpClient(OWNER, ID, clientBody({ name: 'gh' }))).toBe('updated');
    await refused(() => owned.applyVirtualKey(VK_OWNER, 'vk-1', vkBody('github_tools')), 'invalid');
    expect(await owned.applyVirtualKey(VK_OWNER, 'vk-1', vkBody('gh'))).toBe('updated');
  });

  it('an id no row can carry is refused before any query', async () => {
    const bad = 'x'.repeat(300);
    await refused(() => owned.applyMcpClient(OWNER, bad, clientBody()), 'invalid');
    await refused(() => owned.mcpClientStatus(bad), 'invalid');
  });
});
