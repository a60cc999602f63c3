// Rows owned by Kubernetes resources: the operator's one write path. Every apply goes through the same services
// (validation, change events) as the REST API, after two checks of its own:
// - ownership: a row created through the API, config.json or another resource is never taken over (conflict);
// - content: the row remembers a salted digest of the input it was last written from, so re-applying the same
//   manifest, or the operator's periodic resync, writes nothing and publishes no change.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/types.ts';
import { StateError } from '../errors.ts';
import type { Actor } from './catalog.ts';
import type { VirtualKeyService } from './governance/virtual-keys.ts';
import { isValueShaped, VALUE_RULE } from './governance/virtual-keys-value.ts';
import { checkPathParam } from './input.ts';
import type { McpClientService, McpClientStatus } from './mcp/clients.ts';
import type { ProviderService } from './providers.ts';

export type ApplyOutcome = 'created' | 'updated' | 'unchanged';

interface OwnedRow {
  source: string;
  owner_ref: string | null;
  applied_hash: string | null;
}

type McpRow = OwnedRow & { id: string; name: string };

/** A row owned by a resource: its kind, its key (provider name or row id) and the owner `namespace/name`. */
export interface OwnedRowRef {
  kind: 'Provider' | 'ProviderKey' | 'VirtualKey' | 'MCPClient';
  key: string;
  owner: string;
}

const PROVIDER_ROW = 'SELECT source, owner_ref, applied_hash FROM providers WHERE name = $1';
const PROVIDER_KEY_ROW = 'SELECT provider, source, owner_ref, applied_hash FROM provider_keys WHERE id = $1';
const VIRTUAL_KEY_ROW = 'SELECT source, owner_ref, applied_hash FROM virtual_keys WHERE id = $1';
const MCP_CLIENT_ROW = 'SELECT id, name, source, owner_ref, applied_hash FROM mcp_clients WHERE id = $1';
const MCP_CLIENT_NAMED = 'SELECT id, name, source, owner_ref, applied_hash FROM mcp_clients WHERE name = $1';

/** The part of the MCP client service the operator's write path uses (the REST API's create/update/delete). */
export type OwnedMcpClientService = Pick<McpClientService, 'create' | 'update' | 'delete' | 'status'>;

export interface OwnedResourcesDeps {
  db: Db;
  providers: ProviderService;
  virtualKeys: VirtualKeyService;
  mcpClients?: OwnedMcpClientService | undefined;
}

export class OwnedResources {
  private readonly deps: OwnedResourcesDeps;
  constructor(deps: OwnedResourcesDeps) {
    this.deps = deps;
  }

  /** Creates or updates provider `name` from a Provider resource (`owner` is `namespace/name`). */
  async applyProvider(owner: string, name: string, body: Record<string, unknown>): Promise<ApplyOutcome> {
    const actor = kubernetes(owner);
    const row = await this.row(PROVIDER_ROW, name, 'provider');
    if (row) {
      claim(row, owner, `provider ${name}`, 'Provider');
      if (matches(row.applied_hash, body)) return 'unchanged';
      await this.deps.providers.update(name, body, actor);
    } else {
      await this.deps.providers.create(body, actor, name);
    }
    await this.stamp('providers', 'name', name, owner, body);
    return row ? 'updated' : 'created';
  }

  /** Removes provider `name` (and its keys) when `owner` owns it; anything else is left alone. */
  async deleteProvider(owner: string, name: string): Promise<void> {
    const row = await this.row(PROVIDER_ROW, name, 'provider');
    if (row?.owner_ref !== owner) return;
    await this.deps.providers.delete(name, kubernetes(owner)).catch(ignoreNotFound);
  }

  /**
   * Creates or updates key `id` of `provider` from a ProviderKey resource; `body` is a full key input (value
   * included). A key that moved to another provider is removed from the old one.
   */
  async applyProviderKey(
    owner: string,
    provider: string,
    id: string,
    body: Record<string, unknown>,
  ): Promise<ApplyOutcome> {
    const actor = kubernetes(owner);
    const digestOf = { provider, ...body };
    const row = await this.row<OwnedRow & { provider: string }>(PROVIDER_KEY_ROW, id, 'key_id');
    if (row) claim(row, owner, `provider key ${id}`, 'ProviderKey');
    if (row && row.provider === provider) {
      if (matches(row.applied_hash, digestOf)) return 'unchanged';
      await this.deps.providers.updateKey(provider, id, body, actor);
    } else {
      if (row) await this.deps.providers.deleteKey(row.provider, id, actor).catch(ignoreNotFound);
      await this.deps.providers.addKey(provider, { ...body, id }, actor);
    }
    await this.stamp('provider_keys', 'id', id, owner, digestOf);
    return row ? 'updated' : 'created';
  }

  async deleteProviderKey(owner: string, id: string): Promise<void> {
    const row = await this.row<OwnedRow & { provider: string }>(PROVIDER_KEY_ROW, id, 'key_id');
    if (row?.owner_ref !== owner) return;
    await this.deps.providers.deleteKey(row.provider, id, kubernetes(owner)).catch(ignoreNotFound);
  }

  /** Creates or updates virtual key `id`; `body` carries the value (from a Secret), which may rotate. */
  async applyVirtualKey(
    owner: string,
    id: string,
    body: Record<string, unknown> & { value: string },
  ): Promise<ApplyOutcome> {
    const actor = kubernetes(owner);
    // Checked before any write, so a bad value never leaves the key half-updated.
    if (!isValueShaped(body.value)) throw new StateError('invalid', `value: ${VALUE_RULE}`, 'value');
    const row = await this.row(VIRTUAL_KEY_ROW, id, 'id');
    if (!row) {
      // The digest goes in with the row: one statement fewer per key of a bulk apply.
      await this.deps.virtualKeys.insert({ ...body, id }, actor, digest(body));
      return 'created';
    }
    claim(row, owner, `virtual key ${id}`, 'VirtualKey');
    if (matches(row.applied_hash, body)) return 'unchanged';
    const { value, ...rest } = body;
    await this.deps.virtualKeys.replace(id, rest, actor);
    await this.deps.virtualKeys.setValue(id, value, actor);
    await this.stamp('virtual_keys', 'id', id, owner, body);
    return 'updated';
  }

  async deleteVirtualKey(owner: string, id: string): Promise<void> {
    const row = await this.row(VIRTUAL_KEY_ROW, id, 'id');
    if (row?.owner_ref !== owner) return;
    await this.deps.virtualKeys.delete(id, kubernetes(owner)).catch(ignoreNotFound);
  }

  /**
   * Creates or updates MCP client `id` from an MCPClient resource; `body` is the full create input (static
   * headers and the OAuth client secret included, from Secrets). A client of the same name that the API,
   * config.json or another resource created is never taken over.
   */
  async applyMcpClient(owner: string, id: string, body: Record<string, unknown>): Promise<ApplyOutcome> {
    const service = this.mcpClients();
    const actor = kubernetes(owner);
    const row = await this.row<McpRow>(MCP_CLIENT_ROW, id, 'client_id');
    if (row) claim(row, owner, `MCP client ${row.name}`, 'MCPClient');
    const name = typeof body.name === 'string' ? body.name : undefined;
    if (name !== undefined && name !== row?.name) {
      const { rows } = await this.deps.db.query<McpRow & Record<string, unknown>>(MCP_CLIENT_NAMED, [name]);
      const holder = rows[0];
      if (holder && holder.id !== id) claim(holder, owner, `MCP client ${name}`, 'MCPClient');
    }
    if (row) {
      if (matches(row.applied_hash, body)) return 'unchanged';
      // A rename moves the virtual keys' grants to the new name while their resources still name the old one:
      // they must be written again (and be refused) rather than look unchanged.
      // Cleared before, under the old name (the keys whose grants move), and again after, under the new one (a key
      // written in between; a key that names the new name itself is merely written once more).
      if (name !== undefined && name !== row.name) {
        await this.forgetVirtualKeysNaming(row.name);
        await service.update(id, body, actor);
        await this.forgetVirtualKeysNaming(name);
      } else {
        await service.update(id, body, actor);
      }
    } else {
      await service.create({ ...body, client_id: id }, actor);
    }
    await this.stamp('mcp_clients', 'id', id, owner, body);
    return row ? 'updated' : 'created';
  }

  /** Removes MCP client `id` when `owner` owns it; anything else is left alone. */
  async deleteMcpClient(owner: string, id: string): Promise<void> {
    const row = await this.row<McpRow>(MCP_CLIENT_ROW, id, 'client_id');
    if (row?.owner_ref !== owner) return;
    // Deleting a client drops the grants of the keys that name it; a VirtualKey resource naming it must be
    // written again (and be refused) instead of looking unchanged, and regain the grant once the client is back.
    // Cleared before (a retry after a failed delete still finds the row) and after (a key written in between).
    await this.forgetVirtualKeysNaming(row.name);
    await this.mcpClients().delete(id, kubernetes(owner)).catch(ignoreNotFound);
    await this.forgetVirtualKeysNaming(row.name);
  }

  /** What the gateway reports about MCP client `id` (for the MCPClient status). */
  async mcpClientStatus(id: string): Promise<McpClientStatus> {
    checkPathParam(id, 'client_id');
    return this.mcpClients().status(id);
  }

  /** Every row a Kubernetes resource owns, for the operator's sweep of rows whose resource is gone. */
  async listOwned(): Promise<OwnedRowRef[]> {
    const { rows } = await this.deps.db.query<OwnedRowRef & Record<string, unknown>>(
      `SELECT 'Provider' AS kind, name AS key, owner_ref AS owner FROM providers WHERE owner_ref IS NOT NULL
       UNION ALL SELECT 'ProviderKey', id, owner_ref FROM provider_keys WHERE owner_ref IS NOT NULL
       UNION ALL SELECT 'VirtualKey', id, owner_ref FROM virtual_keys WHERE owner_ref IS NOT NULL
       UNION ALL SELECT 'MCPClient', id, owner_ref FROM mcp_clients WHERE owner_ref IS NOT NULL`,
    );
    return rows.map((r) => ({ kind: r.kind, key: r.key, owner: r.owner }));
  }

  /** Deletes a row found by listOwned (its resource is gone). */
  async deleteOwned(ref: OwnedRowRef): Promise<void> {
    if (ref.kind === 'Provider') await this.deleteProvider(ref.owner, ref.key);
    else if (ref.kind === 'ProviderKey') await this.deleteProviderKey(ref.owner, ref.key);
    else if (ref.kind === 'MCPClient') await this.deleteMcpClient(ref.owner, ref.key);
    else await this.deleteVirtualKey(ref.owner, ref.key);
  }

  private mcpClients(): OwnedMcpClientService {
    const service = this.deps.mcpClients;
    if (!service) throw new Error('the MCP client service is not wired into OwnedResources');
    return service;
  }

  /** Clears the content digest of Kubernetes-owned virtual keys whose mcp_configs name client `name`. */
  private async forgetVirtualKeysNaming(name: string): Promise<void> {
    await this.deps.db.query(
      `UPDATE virtual_keys SET applied_hash = NULL WHERE owner_ref IS NOT NULL
         AND mcp_configs @> jsonb_build_array(jsonb_build_object('mcp_client_name', $1::text))`,
      [name],
    );
  }

  /** The owned row by name or id; a key no row can carry is refused as `param` before the query. */
  private async row<R extends OwnedRow = OwnedRow>(sql: string, key: string, param: string): Promise<R | undefined> {
    checkPathParam(key, param);
    const { rows } = await this.deps.db.query<R & Record<string, unknown>>(sql, [key]);
    return rows[0];
  }

  private async stamp(
    table: 'providers' | 'provider_keys' | 'virtual_keys' | 'mcp_clients',
    keyColumn: 'name' | 'id',
    key: string,
    owner: string,
    content: unknown,
  ): Promise<void> {
    // Table and column names come from the literal unions above, never from input.
    await this.deps.db.query(`UPDATE ${table} SET applied_hash = $2 WHERE ${keyColumn} = $1 AND owner_ref = $3`, [
      key,
      digest(content),
      owner,
    ]);
  }
}

function kubernetes(ownerRef: string): Actor {
  return { source: 'kubernetes', ownerRef };
}

/** Refuses to take over a row that another resource, the API or config.json created. */
function claim(row: OwnedRow, owner: string, what: string, kind: string): void {
  if (row.owner_ref === owner) return;
  const holder =
    row.owner_ref !== null
      ? `the ${kind} ${row.owner_ref}`
      : row.source === 'config'
        ? 'config.json'
        : 'the management API';
  throw new StateError('conflict', `${what} already exists and is managed by ${holder}`);
}

/** `salt:sha256(salt + JSON)`; salted because the content may carry key values. */
function digest(content: unknown, salt = randomBytes(16).toString('hex')): string {
  const hash = createHash('sha256').update(salt).update(JSON.stringify(content)).digest('hex');
  return `${salt}:${hash}`;
}

function matches(stored: string | null, content: unknown): boolean {
  if (!stored) return false;
  const salt = stored.slice(0, stored.indexOf(':'));
  const expected = Buffer.from(stored);
  const actual = Buffer.from(digest(content, salt));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

function ignoreNotFound(err: unknown): void {
  if (err instanceof StateError && err.code === 'not_found') return;
  throw err;
}
