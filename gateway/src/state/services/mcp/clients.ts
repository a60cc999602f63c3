// MCP clients (upstream tool servers): validate -> write in one transaction -> publish {kind: 'mcp'} (and
// {kind: 'governance'} when virtual keys' grants change). The one write path for the REST API, config.json and
// the operator. Static headers are sealed at rest and never shown; OAuth settings live in `oauth_configs`, created
// through the OAuth part (attached at start: `state/` knows only its contract).
import type { SecretBox } from '../../../crypto/secretbox.ts';
import type { McpOAuth } from '../../../mcp/oauth/types.ts';
import type { McpConnectionState } from '../../../mcp/types.ts';
import { messageOf } from '../../../util/errors.ts';
import { DbError } from '../../db/errors.ts';
import type { Db, Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import type { ChangeEvent } from '../../events.ts';
import { newId, stableId } from '../../ids.ts';
import type { Actor } from '../catalog.ts';
import { checkPathParam, invalidInput } from '../input.ts';
import type { McpClientRow } from './rows.ts';
import {
  crossFieldIssues,
  McpClientCreateInput,
  McpClientUpdateInput,
  OAUTH_AUTH_TYPES,
  type OAuthConfigInput,
  REDACTED,
} from './validate.ts';
import { clientView, type McpClientView, type MergedClient, mergeUpdate } from './views.ts';
import { dropClientGrants, renameClientGrants, replaceClientGrants } from './vk-refs.ts';

export type { McpClientView } from './views.ts';

/** What the service needs of the OAuth part: its configuration rows, written inside the client's transaction. */
export type McpOAuthConfigs = Pick<McpOAuth, 'createConfig' | 'updateConfig'>;
/** The SSRF guard for a connection string (throws with a message saying why the address is refused). */
export type UrlCheck = (url: string) => Promise<void>;

export interface McpClientServiceDeps {
  db: Db;
  box: SecretBox;
  publish: (event: ChangeEvent) => Promise<void>;
}

/** The client's state for the operator's status: this row's connection, and its OAuth configuration's. */
export interface McpClientStatus {
  state: McpConnectionState;
  state_message: string | null;
  oauth?: { status: string; message?: string | undefined; authorize_url?: string | undefined } | undefined;
}

export interface McpClientDeleted {
  name: string;
  /** Virtual keys whose mcp_configs entry for the client was removed with it. */
  virtual_keys: string[];
}

const MCP: ChangeEvent = { kind: 'mcp' };
const GOVERNANCE: ChangeEvent = { kind: 'governance' };

export class McpClientService {
  private readonly deps: McpClientServiceDeps;
  private oauth: McpOAuthConfigs | undefined;
  private checkUrl: UrlCheck | undefined;

  constructor(deps: McpClientServiceDeps) {
    this.deps = deps;
  }

  /**
   * Attaches the OAuth part and the SSRF guard (the gateway does at start, before config.json is applied).
   * Without OAuth, OAuth-typed clients cannot be created; without the guard, connection strings are checked only
   * when a gateway pod connects (its dispatcher applies the same guard at connect time).
   */
  attach(parts: { oauth?: McpOAuthConfigs | undefined; checkUrl?: UrlCheck | undefined }): void {
    if (parts.oauth) this.oauth = parts.oauth;
    if (parts.checkUrl) this.checkUrl = parts.checkUrl;
  }

  async list(): Promise<McpClientView[]> {
    const { rows } = await this.deps.db.query<McpClientRow & Record<string, unknown>>(
      'SELECT * FROM mcp_clients ORDER BY name',
    );
    return rows.map((r) => this.view(r));
  }

  async get(id: string): Promise<McpClientView> {
    checkPathParam(id, 'id');
    return this.view(await this.row(this.deps.db, id));
  }

  async create(body: unknown, actor: Actor): Promise<McpClientView> {
    const parsed = McpClientCreateInput.safeParse(body ?? {});
    if (!parsed.success) throw invalidInput(parsed.error);
    const input = parsed.data;
    await this.checkConnection(input.connection_string);
    const oauthKind = OAUTH_AUTH_TYPES.includes(input.auth_type) ? this.oauthKind(input.auth_type) : undefined;
    const id = input.client_id ?? (actor.source === 'config' ? stableId('mcp_client', input.name) : newId());
    await this.deps.db.transaction(async (tx) => {
      try {
        await tx.query(
          `INSERT INTO mcp_clients (id, name, connection_type, connection_string, auth_type, headers,
             tools_to_execute, tools_to_auto_execute, tool_pricing, is_ping_available, disabled, source, owner_ref)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
          [
            id,
            input.name,
            input.connection_type,
            input.connection_string,
            input.auth_type,
            this.sealHeaders(input.auth_type === 'headers' ? input.headers : undefined),
            JSON.stringify(input.tools_to_execute),
            JSON.stringify(input.tools_to_auto_execute),
            JSON.stringify(input.tool_pricing),
            input.is_ping_available,
            input.disabled,
            actor.source,
            actor.source === 'kubernetes' ? actor.ownerRef : null,
          ],
        );
      } catch (err) {
        throw mapWriteError(err, id, input.name);
      }
      if (oauthKind) {
        const configId = await oauthKind.oauth.createConfig(tx, id, oauthKind.kind, oauthInput(input.oauth_config));
        await tx.query('UPDATE mcp_clients SET oauth_config_id = $2 WHERE id = $1', [id, configId]);
      }
    });
    await this.deps.publish(MCP);
    return this.get(id);
  }

  /**
   * A partial update: fields not sent keep their values; connection type, string and auth type cannot change.
   * `vk_configs`, when sent, replaces every virtual key's grant of this client.
   */
  async update(id: string, body: unknown, actor: Actor): Promise<McpClientView> {
    checkPathParam(id, 'id');
    const parsed = McpClientUpdateInput.safeParse(body ?? {});
    if (!parsed.success) throw invalidInput(parsed.error);
    const input = parsed.data;
    if (input.client_id !== undefined && input.client_id !== id) {
      throw new StateError(
        'invalid',
        `client_id: the body names ${input.client_id} but the path names ${id}`,
        'client_id',
      );
    }
    if (input.connection_string !== undefined) await this.checkConnection(input.connection_string);
    // Virtual keys whose grants this update changed (a rename, vk_configs).
    let keys: string[] = [];
    await this.deps.db.transaction(async (tx) => {
      const row = await this.row(tx, id, true);
      checkOwner(row, actor);
      const next = mergeUpdate(row, () => this.openStoredHeaders(row), input);
      // Headers not sent stay sealed as they are (they met the rules when written).
      const headers = next.headers ?? (row.headers ? { stored: REDACTED } : undefined);
      const issues = crossFieldIssues({ auth_type: row.auth_type, ...next, headers });
      const issue = issues[0];
      if (issue) {
        const param = issue.path.join('.');
        throw new StateError('invalid', `${param}: ${issue.message}`, param);
      }
      if (next.oauth_config !== undefined) {
        if (!row.oauth_config_id) throw new StateError('invalid', 'oauth_config: this client has none', 'oauth_config');
        await this.oauthKind(row.auth_type).oauth.updateConfig(tx, row.oauth_config_id, oauthInput(next.oauth_config));
      }
      await this.writeUpdate(tx, row, next);
      if (next.name !== row.name) keys = await renameClientGrants(tx, row.name, next.name);
      if (input.vk_configs !== undefined) {
        keys = [...keys, ...(await replaceClientGrants(tx, next.name, input.vk_configs, actor))];
      }
    });
    await this.deps.publish(MCP);
    if (keys.length > 0) await this.deps.publish(GOVERNANCE);
    return this.get(id);
  }

  /** Deletes the client, its OAuth configuration and tokens, and every virtual key's grant of its tools. */
  async delete(id: string, actor: Actor): Promise<McpClientDeleted> {
    checkPathParam(id, 'id');
    const out = await this.deps.db.transaction(async (tx) => {
      const row = await this.row(tx, id, true);
      checkOwner(row, actor);
      await tx.query('DELETE FROM mcp_clients WHERE id = $1', [id]);
      // A configuration row not tied to the client by its foreign key (e.g. created before the client row).
      if (row.oauth_config_id) await tx.query('DELETE FROM oauth_configs WHERE id = $1', [row.oauth_config_id]);
      return { name: row.name, virtual_keys: await dropClientGrants(tx, row.name) };
    });
    await this.deps.publish(MCP);
    if (out.virtual_keys.length > 0) await this.deps.publish(GOVERNANCE);
    return out;
  }

  /** The connection state last reported by a gateway pod, and the OAuth configuration's state. */
  async status(id: string): Promise<McpClientStatus> {
    checkPathParam(id, 'id');
    const found = (await this.statuses(id)).get(id);
    if (!found) throw notFound(id);
    return found;
  }

  /** status() of every client (or of `id`), by client id, in one query. */
  async statuses(id?: string): Promise<Map<string, McpClientStatus>> {
    const { rows } = await this.deps.db.query<{
      id: string;
      state: McpConnectionState;
      state_message: string | null;
      oauth_status: string | null;
      oauth_message: string | null;
      authorize_request_url: string | null;
      pending_live: boolean | null;
    }>(
      `SELECT c.id, c.state, c.state_message, o.status AS oauth_status, o.status_message AS oauth_message,
              o.authorize_request_url, (o.expires_at IS NULL OR o.expires_at > now()) AS pending_live
       FROM mcp_clients c LEFT JOIN oauth_configs o ON o.id = c.oauth_config_id
       WHERE $1::text IS NULL OR c.id = $1`,
      [id ?? null],
    );
    const out = new Map<string, McpClientStatus>();
    for (const r of rows) {
      const status: McpClientStatus = { state: r.state, state_message: r.state_message };
      if (r.oauth_status !== null) {
        // The authorize URL only while it can still be used.
        const url = r.oauth_status === 'pending' && r.pending_live === true ? r.authorize_request_url : null;
        status.oauth = {
          status: r.oauth_status,
          ...(r.oauth_message ? { message: r.oauth_message } : {}),
          ...(url ? { authorize_url: url } : {}),
        };
      }
      out.set(r.id, status);
    }
    return out;
  }

  private async writeUpdate(tx: Queryable, row: McpClientRow, next: MergedClient): Promise<void> {
    try {
      // applied_hash: an API edit of a config.json row lasts until the next start (config-file.ts re-applies it).
      await tx.query(
        `UPDATE mcp_clients SET name = $2, headers = $3, tools_to_execute = $4, tools_to_auto_execute = $5,
           tool_pricing = $6, is_ping_available = $7, disabled = $8, applied_hash = NULL, updated_at = now()
         WHERE id = $1`,
        [
          row.id,
          next.name,
          next.headers === undefined ? row.headers : this.sealHeaders(next.headers),
          JSON.stringify(next.tools_to_execute),
          JSON.stringify(next.tools_to_auto_execute),
          JSON.stringify(next.tool_pricing),
          next.is_ping_available,
          next.disabled,
        ],
      );
    } catch (err) {
      throw mapWriteError(err, row.id, next.name);
    }
  }

  private oauthKind(authType: string): { oauth: McpOAuthConfigs; kind: 'server' | 'per_user' } {
    // A process without the OAuth part (the operator) cannot run OAuth: a fault of the deployment, not the input.
    if (!this.oauth) throw new Error('OAuth for MCP clients is not available in this process');
    return { oauth: this.oauth, kind: authType === 'per_user_oauth' ? 'per_user' : 'server' };
  }

  private async checkConnection(url: string): Promise<void> {
    if (!this.checkUrl) return;
    try {
      await this.checkUrl(url);
    } catch (err) {
      throw new StateError('invalid', `connection_string: ${messageOf(err)}`, 'connection_string');
    }
  }

  private async row(q: Queryable, id: string, lock = false): Promise<McpClientRow> {
    const { rows } = await q.query<McpClientRow & Record<string, unknown>>(
      `SELECT * FROM mcp_clients WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    const row = rows[0];
    if (!row) throw notFound(id);
    return row;
  }

  private view(row: McpClientRow): McpClientView {
    // Only names are shown. Headers that cannot be opened (GATEWAY_ENCRYPTION_KEY missing or changed) show none,
    // so the client stays listable and deletable; the snapshot reports it as skipped in the log.
    let names: string[] = [];
    try {
      names = Object.keys(this.openHeaders(row));
    } catch {
      names = [];
    }
    return clientView(row, names);
  }

  /** The stored headers for `[redacted]` placeholders; a value that cannot be opened is the request's problem. */
  private openStoredHeaders(row: McpClientRow): Record<string, string> {
    try {
      return this.openHeaders(row);
    } catch (err) {
      throw new StateError(
        'invalid',
        `headers: the stored values cannot be opened (${messageOf(err)}); send every value again`,
        'headers',
      );
    }
  }

  private openHeaders(row: McpClientRow): Record<string, string> {
    // Sealed by this service from a validated string map.
    return row.headers ? (JSON.parse(this.deps.box.open(row.headers)) as Record<string, string>) : {};
  }

  private sealHeaders(headers: Record<string, string> | undefined): string | null {
    return headers && Object.keys(headers).length > 0 ? this.deps.box.seal(JSON.stringify(headers)) : null;
  }
}

/** The OAuth part's input: only the settings that were given. */
function oauthInput(c: OAuthConfigInput | undefined): OAuthConfigInput {
  return Object.fromEntries(Object.entries(c ?? {}).filter(([, v]) => v !== undefined));
}

function checkOwner(row: McpClientRow, actor: Actor): void {
  if (row.owner_ref && actor.source !== 'kubernetes') {
    throw new StateError(
      'owned_by_kubernetes',
      `this MCP client is managed by Kubernetes (MCPClient: ${row.owner_ref}); edit it with kubectl`,
    );
  }
}

function notFound(id: string): StateError {
  return new StateError('not_found', `MCP client ${id} not found`, 'id');
}

function mapWriteError(err: unknown, id: string, name: string): unknown {
  if (!(err instanceof DbError) || err.code !== 'unique_violation') return err;
  if (err.constraint?.includes('name')) {
    return new StateError('conflict', `an MCP client named ${name} already exists`, 'name');
  }
  return new StateError('conflict', `an MCP client with id ${id} already exists`, 'client_id');
}
