// OAuth configurations of MCP clients (oauth_configs) and their tokens (oauth_tokens): the SQL of MCP OAuth.
// Client secrets and tokens are sealed with the secret box on the way in and opened on the way out; without
// GATEWAY_ENCRYPTION_KEY nothing secret is written (the box would store it `plain:`), the caller gets a clear
// refusal instead. Times are the database's (`now()`), so pods with skewed clocks agree.
import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../../../crypto/secretbox.ts';
import type { TokenBinding } from '../../../mcp/types.ts';
import type { Db, Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';

export type OAuthConfigKind = 'server' | 'per_user';
export type OAuthConfigStatus = 'pending' | 'authorized' | 'failed' | 'revoked';
export type TokenAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** An OAuth configuration with its client secret opened. */
export interface OAuthConfigRecord {
  id: string;
  kind: OAuthConfigKind;
  mcp_client_id: string | null;
  status: OAuthConfigStatus;
  status_message: string | null;
  client_id: string | null;
  client_secret: string | null;
  registered: boolean;
  authorize_url: string | null;
  token_url: string | null;
  registration_url: string | null;
  server_url: string | null;
  revocation_url: string | null;
  scopes: string[];
  flow_mode: 'user' | 'vk' | 'session' | null;
  redirect_uri: string | null;
  authorize_request_url: string | null;
  expires_at: Date | null;
  server_metadata: Record<string, unknown> | null;
  token_auth_method: TokenAuthMethod | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns a write may set; `client_secret` in clear (sealed here). */
export type OAuthConfigPatch = Partial<
  Omit<OAuthConfigRecord, 'id' | 'kind' | 'mcp_client_id' | 'created_at' | 'updated_at' | 'flow_mode'>
>;

export interface OAuthConfigInsert extends OAuthConfigPatch {
  id: string;
  kind: OAuthConfigKind;
  mcp_client_id: string;
  status: OAuthConfigStatus;
  flow_mode?: 'user' | 'vk' | 'session' | null;
}

/** A token as the gateway uses it: opened. */
export interface OAuthTokenRecord {
  id: string;
  oauth_config_id: string;
  binding_kind: TokenBinding['kind'];
  binding_id: string;
  access_token: string;
  refresh_token: string | null;
  token_type: string;
  expires_at: Date | null;
  scopes: string[];
  last_refreshed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface TokenWrite {
  access_token: string;
  refresh_token?: string | null | undefined;
  token_type?: string | undefined;
  expires_at: Date | null;
  scopes: string[];
}

/** The MCP client an OAuth configuration belongs to, as OAuth needs it (discovery falls back to its URL). */
export interface OAuthClientFacts {
  id: string;
  name: string;
  connection_string: string;
  connection_type: 'http' | 'sse';
  disabled: boolean;
  source: 'config' | 'api' | 'kubernetes';
}

const PATCHABLE = new Set<keyof OAuthConfigPatch>([
  'status',
  'status_message',
  'client_id',
  'client_secret',
  'registered',
  'authorize_url',
  'token_url',
  'registration_url',
  'server_url',
  'revocation_url',
  'scopes',
  'redirect_uri',
  'authorize_request_url',
  'expires_at',
  'server_metadata',
  'token_auth_method',
]);
const JSON_COLUMNS = new Set(['scopes', 'server_metadata']);

export function bindingKey(binding: TokenBinding): { kind: TokenBinding['kind']; id: string } {
  return binding.kind === 'server' ? { kind: 'server', id: '' } : { kind: binding.kind, id: binding.id };
}

export const NO_ENCRYPTION_KEY =
  'OAuth for MCP clients needs GATEWAY_ENCRYPTION_KEY: tokens and client secrets are only stored encrypted';

type Row = Record<string, unknown>;

export class OAuthConfigStore {
  private readonly deps: { db: Db; box: SecretBox };
  constructor(deps: { db: Db; box: SecretBox }) {
    this.deps = deps;
  }

  get encrypting(): boolean {
    return this.deps.box.encrypting;
  }

  /** Refuses (400) when secrets cannot be sealed: the gateway never stores OAuth material in clear. */
  requireEncryption(param?: string): void {
    if (!this.deps.box.encrypting) throw new StateError('invalid', NO_ENCRYPTION_KEY, param);
  }

  async insert(q: Queryable, row: OAuthConfigInsert): Promise<void> {
    const cols: string[] = ['id', 'kind', 'mcp_client_id', 'status', 'flow_mode'];
    const vals: unknown[] = [row.id, row.kind, row.mcp_client_id, row.status, row.flow_mode ?? null];
    for (const [k, v] of Object.entries(row)) {
      if (!PATCHABLE.has(k as keyof OAuthConfigPatch) || k === 'status' || v === undefined) continue;
      cols.push(k);
      vals.push(this.encode(k, v));
    }
    const params = vals.map((_, i) => `$${i + 1}`).join(', ');
    await q.query(`INSERT INTO oauth_configs (${cols.join(', ')}) VALUES (${params})`, vals);
  }

  async get(id: string, q: Queryable = this.deps.db, lock = false): Promise<OAuthConfigRecord | undefined> {
    const { rows } = await q.query<Row>(`SELECT * FROM oauth_configs WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
    return rows[0] ? this.decode(rows[0]) : undefined;
  }

  async require(id: string, q: Queryable = this.deps.db, lock = false): Promise<OAuthConfigRecord> {
    const row = await this.get(id, q, lock);
    if (!row) throw new StateError('not_found', `OAuth config ${id} not found`);
    return row;
  }

  async update(id: string, patch: OAuthConfigPatch, q: Queryable = this.deps.db): Promise<void> {
    const sets: string[] = [];
    const vals: unknown[] = [id];
    for (const [k, v] of Object.entries(patch)) {
      if (!PATCHABLE.has(k as keyof OAuthConfigPatch) || v === undefined) continue;
      vals.push(this.encode(k, v));
      sets.push(`${k} = $${vals.length}`);
    }
    if (sets.length === 0) return;
    await q.query(`UPDATE oauth_configs SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, vals);
  }

  async clientOf(configId: string, q: Queryable = this.deps.db): Promise<OAuthClientFacts | undefined> {
    const { rows } = await q.query<OAuthClientFacts & Row>(
      `SELECT c.id, c.name, c.connection_string, c.connection_type, c.disabled, c.source
       FROM oauth_configs o JOIN mcp_clients c ON c.id = o.mcp_client_id WHERE o.id = $1`,
      [configId],
    );
    return rows[0];
  }

  async token(
    configId: string,
    binding: TokenBinding,
    q: Queryable = this.deps.db,
  ): Promise<OAuthTokenRecord | undefined> {
    const b = bindingKey(binding);
    const { rows } = await q.query<Row>(
      'SELECT * FROM oauth_tokens WHERE oauth_config_id = $1 AND binding_kind = $2 AND binding_id = $3',
      [configId, b.kind, b.id],
    );
    return rows[0] ? this.decodeToken(rows[0]) : undefined;
  }

  /** Stores (or replaces) the binding's token; `refreshed` marks a refresh rather than a new authorization. */
  async putToken(
    configId: string,
    binding: TokenBinding,
    t: TokenWrite,
    refreshed: boolean,
    q: Queryable = this.deps.db,
  ): Promise<OAuthTokenRecord> {
    this.requireEncryption();
    const b = bindingKey(binding);
    const { box } = this.deps;
    const id = `oat_${randomBytes(16).toString('base64url')}`;
    const { rows } = await q.query<Row>(
      `INSERT INTO oauth_tokens (id, oauth_config_id, binding_kind, binding_id, access_token, refresh_token,
         token_type, expires_at, scopes, last_refreshed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, CASE WHEN $10::boolean THEN now() END)
       ON CONFLICT (oauth_config_id, binding_kind, binding_id) DO UPDATE SET
         access_token = EXCLUDED.access_token,
         -- A refresh answer without a refresh token keeps the one held (no rotation).
         refresh_token = COALESCE(EXCLUDED.refresh_token, CASE WHEN $10::boolean THEN oauth_tokens.refresh_token END),
         token_type = EXCLUDED.token_type, expires_at = EXCLUDED.expires_at, scopes = EXCLUDED.scopes,
         last_refreshed_at = EXCLUDED.last_refreshed_at, updated_at = now()
       RETURNING *`,
      [
        id,
        configId,
        b.kind,
        b.id,
        box.seal(t.access_token),
        t.refresh_token ? box.seal(t.refresh_token) : null,
        t.token_type ?? 'Bearer',
        t.expires_at,
        JSON.stringify(t.scopes),
        refreshed,
      ],
    );
    return this.decodeToken(rows[0] as Row);
  }

  async deleteTokens(configId: string, q: Queryable = this.deps.db): Promise<number> {
    const { rowCount } = await q.query('DELETE FROM oauth_tokens WHERE oauth_config_id = $1', [configId]);
    return rowCount ?? 0;
  }

  async deleteToken(configId: string, binding: TokenBinding): Promise<void> {
    const b = bindingKey(binding);
    await this.deps.db.query(
      'DELETE FROM oauth_tokens WHERE oauth_config_id = $1 AND binding_kind = $2 AND binding_id = $3',
      [configId, b.kind, b.id],
    );
  }

  /**
   * Revocation (DELETE /api/oauth/config/{id}): every token of the configuration is deleted in one transaction
   * with the status change; a server-level configuration becomes `revoked` (the row stays).
   */
  async revoke(configId: string, markRevoked: boolean): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      if (markRevoked) {
        await this.update(
          configId,
          {
            status: 'revoked',
            status_message: 'revoked through DELETE /api/oauth/config',
            authorize_request_url: null,
            expires_at: null,
          },
          tx,
        );
      }
      await this.deleteTokens(configId, tx);
    });
  }

  /**
   * Tokens with a refresh token that expire before `now + lead` (or within the last half of their lifetime, for
   * short-lived tokens), of clients that are not disabled.
   */
  async dueForRefresh(leadMs: number, limit = 100): Promise<Array<{ id: string; config_id: string } & Row>> {
    const { rows } = await this.deps.db.query<{ id: string; config_id: string } & Row>(
      `SELECT t.id, t.oauth_config_id AS config_id, t.binding_kind, t.binding_id
       FROM oauth_tokens t
       JOIN oauth_configs o ON o.id = t.oauth_config_id
       JOIN mcp_clients c ON c.id = o.mcp_client_id
       WHERE t.refresh_token IS NOT NULL AND t.expires_at IS NOT NULL AND NOT c.disabled
         AND o.status = 'authorized'
         AND t.expires_at - LEAST(make_interval(secs => $1::double precision / 1000),
               (t.expires_at - COALESCE(t.last_refreshed_at, t.updated_at)) / 2) <= now()
       ORDER BY t.expires_at LIMIT $2`,
      [leadMs, limit],
    );
    return rows;
  }

  /**
   * Server-level configs still pending, of clients created without an admin request, whose authorize URL is
   * missing, expired, or built for another redirect_uri than `redirectUri` (the public URL changed).
   */
  async pendingWithoutLiveUrl(redirectUri: string | null, limit = 20): Promise<string[]> {
    const { rows } = await this.deps.db.query<{ id: string }>(
      `SELECT o.id FROM oauth_configs o JOIN mcp_clients c ON c.id = o.mcp_client_id
       WHERE o.kind = 'server' AND o.status = 'pending' AND c.source IN ('config', 'kubernetes') AND NOT c.disabled
         AND (o.authorize_request_url IS NULL OR o.expires_at IS NULL OR o.expires_at <= now()
              OR ($2::text IS NOT NULL AND o.redirect_uri IS DISTINCT FROM $2::text))
       ORDER BY o.created_at LIMIT $1`,
      [limit, redirectUri],
    );
    return rows.map((r) => r.id);
  }

  private encode(column: string, value: unknown): unknown {
    if (column === 'client_secret') {
      if (value === null) return null;
      this.requireEncryption('client_secret');
      return this.deps.box.seal(String(value));
    }
    if (JSON_COLUMNS.has(column)) return value === null ? null : JSON.stringify(value);
    return value;
  }

  private decode(row: Row): OAuthConfigRecord {
    const secret = row.client_secret;
    return {
      ...(row as unknown as OAuthConfigRecord),
      client_secret: typeof secret === 'string' ? this.deps.box.open(secret) : null,
      scopes: Array.isArray(row.scopes) ? (row.scopes as string[]) : [],
      expires_at: toDate(row.expires_at),
      created_at: toDate(row.created_at) ?? new Date(0),
      updated_at: toDate(row.updated_at) ?? new Date(0),
    };
  }

  private decodeToken(row: Row): OAuthTokenRecord {
    const { box } = this.deps;
    return {
      ...(row as unknown as OAuthTokenRecord),
      access_token: box.open(String(row.access_token)),
      refresh_token: typeof row.refresh_token === 'string' ? box.open(row.refresh_token) : null,
      scopes: Array.isArray(row.scopes) ? (row.scopes as string[]) : [],
      expires_at: toDate(row.expires_at),
      last_refreshed_at: toDate(row.last_refreshed_at),
      created_at: toDate(row.created_at) ?? new Date(0),
      updated_at: toDate(row.updated_at) ?? new Date(0),
    };
  }
}

function toDate(v: unknown): Date | null {
  if (v === null || v === undefined) return null;
  return v instanceof Date ? v : new Date(String(v));
}
