// Per-user OAuth flows (oauth_user_flows) and whether a binding already holds a token (oauth_tokens): the SQL of
// per-user OAuth. A flow is `pending` until its callback succeeds (`authorized`) or fails (`failed`, message kept),
// or until `expires_at` passes (`expired`, applied whenever flows are read: no timer needed, every pod agrees).
// Times are the database's (`now()`), so pods with skewed clocks agree on expiry.
import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import { checkPathParam } from '../input.ts';

export type FlowMode = 'user' | 'vk' | 'session';
export type FlowStatus = 'pending' | 'authorized' | 'failed' | 'expired';
export const FLOW_STATUSES: readonly FlowStatus[] = ['pending', 'authorized', 'failed', 'expired'];

/** `puf_` + 32 base64url characters: 192 random bits. The consent page is public: the id is the capability. */
export const FLOW_ID = /^puf_[A-Za-z0-9_-]{32}$/;

export function newFlowId(): string {
  return `puf_${randomBytes(24).toString('base64url')}`;
}

/** What a flow authorizes: the token binding (`flow_mode` + `binding_id`) and the identity facts shown. */
export interface FlowIdentity {
  flow_mode: FlowMode;
  /** oauth_tokens.binding_id of the token the flow stores. */
  binding_id: string;
  user_id?: string | undefined;
  user_name?: string | undefined;
  virtual_key_id?: string | undefined;
  virtual_key_name?: string | undefined;
  session_id?: string | undefined;
}

export interface FlowRecord extends FlowIdentity {
  id: string;
  oauth_config_id: string;
  mcp_client_id: string;
  mcp_client_name: string;
  status: FlowStatus;
  status_message: string | undefined;
  expires_at: string;
  created_at: string;
  has_active_token: boolean;
}

/** The spec's per-user OAuth flow detail: only the identity fields that apply to the flow. */
export interface FlowDetail {
  id: string;
  flow_mode: FlowMode;
  status: FlowStatus;
  status_message?: string;
  mcp_client: { client_id: string; name: string };
  oauth_config_id: string;
  expires_at: string;
  created_at: string;
  has_active_token: boolean;
  user_id?: string;
  user?: { id: string; name: string };
  virtual_key?: { id: string; name: string };
  session_id?: string;
}

export interface FlowFilter {
  mcp_client_id?: string | undefined;
  status?: FlowStatus | undefined;
  limit?: number | undefined;
}

interface FlowRow extends Record<string, unknown> {
  id: string;
  oauth_config_id: string;
  mcp_client_id: string;
  mcp_client_name: string;
  flow_mode: FlowMode;
  binding_id: string;
  status: FlowStatus;
  status_message: string | null;
  user_id: string | null;
  user_name: string | null;
  virtual_key_id: string | null;
  virtual_key_name: string | null;
  session_id: string | null;
  expires_at: Date | string;
  created_at: Date | string;
  has_active_token: boolean;
}

/**
 * A token is active when it is still valid or can be refreshed; one that expired without a refresh token is
 * not (its binding has to consent again).
 */
const ACTIVE_TOKEN = `EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.oauth_config_id = f.oauth_config_id
  AND t.binding_kind = f.flow_mode AND t.binding_id = f.binding_id
  AND (t.expires_at IS NULL OR t.expires_at > now() OR t.refresh_token IS NOT NULL))`;

const SELECT = `SELECT f.*, c.name AS mcp_client_name, COALESCE(v.name, f.virtual_key_name) AS virtual_key_name,
  ${ACTIVE_TOKEN} AS has_active_token
  FROM oauth_user_flows f JOIN mcp_clients c ON c.id = f.mcp_client_id
  LEFT JOIN virtual_keys v ON v.id = f.virtual_key_id`;

/** Pending flows past their expiry become `expired` (the "on read" half of the lifecycle). */
const EXPIRE_DUE = `UPDATE oauth_user_flows SET status = 'expired', status_message = 'the consent was not completed in time',
  updated_at = now() WHERE status = 'pending' AND expires_at <= now()`;

function iso(t: Date | string): string {
  return (t instanceof Date ? t : new Date(t)).toISOString();
}

function toRecord(r: FlowRow): FlowRecord {
  return {
    id: r.id,
    oauth_config_id: r.oauth_config_id,
    mcp_client_id: r.mcp_client_id,
    mcp_client_name: r.mcp_client_name,
    flow_mode: r.flow_mode,
    binding_id: r.binding_id,
    status: r.status,
    status_message: r.status_message ?? undefined,
    user_id: r.user_id ?? undefined,
    user_name: r.user_name ?? undefined,
    virtual_key_id: r.virtual_key_id ?? undefined,
    virtual_key_name: r.virtual_key_name ?? undefined,
    session_id: r.session_id ?? undefined,
    expires_at: iso(r.expires_at),
    created_at: iso(r.created_at),
    has_active_token: r.has_active_token,
  };
}

/** The API view of a flow. */
export function flowDetail(f: FlowRecord): FlowDetail {
  const d: FlowDetail = {
    id: f.id,
    flow_mode: f.flow_mode,
    status: f.status,
    ...(f.status_message !== undefined && f.status !== 'pending' ? { status_message: f.status_message } : {}),
    mcp_client: { client_id: f.mcp_client_id, name: f.mcp_client_name },
    oauth_config_id: f.oauth_config_id,
    expires_at: f.expires_at,
    created_at: f.created_at,
    has_active_token: f.has_active_token,
  };
  if (f.flow_mode === 'user' && f.user_id !== undefined) {
    d.user_id = f.user_id;
    d.user = { id: f.user_id, name: f.user_name ?? f.user_id };
  }
  // vk flows are bound to the key; user and session flows of a virtual-key caller are scoped to it.
  if (f.virtual_key_id !== undefined) {
    d.virtual_key = { id: f.virtual_key_id, name: f.virtual_key_name ?? '' };
  }
  if (f.flow_mode === 'session' && f.session_id !== undefined) d.session_id = f.session_id;
  return d;
}

export interface OpenFlowInput {
  oauthConfigId: string;
  mcpClientId: string;
  identity: FlowIdentity;
  ttlMs: number;
}

export class PerUserFlowService {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /**
   * The live pending flow of this binding, or a new one: retried tool calls and several pods asking at once
   * all get one flow (the partial unique index decides a race).
   */
  async open(input: OpenFlowInput): Promise<{ flow: FlowRecord; created: boolean }> {
    const { identity: i } = input;
    return this.db.transaction(async (tx) => {
      await tx.query(`${EXPIRE_DUE} AND oauth_config_id = $1 AND flow_mode = $2 AND binding_id = $3`, [
        input.oauthConfigId,
        i.flow_mode,
        i.binding_id,
      ]);
      const id = newFlowId();
      const inserted = await tx.query<{ id: string }>(
        `INSERT INTO oauth_user_flows (id, oauth_config_id, mcp_client_id, flow_mode, binding_id, status, user_id,
           user_name, virtual_key_id, virtual_key_name, session_id, expires_at)
         VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10, now() + $11 * interval '1 millisecond')
         ON CONFLICT (oauth_config_id, flow_mode, binding_id) WHERE status = 'pending' DO NOTHING
         RETURNING id`,
        [
          id,
          input.oauthConfigId,
          input.mcpClientId,
          i.flow_mode,
          i.binding_id,
          i.user_id ?? null,
          i.user_name ?? null,
          i.virtual_key_id ?? null,
          i.virtual_key_name ?? null,
          i.session_id ?? null,
          Math.max(1, Math.round(input.ttlMs)),
        ],
      );
      const created = inserted.rows.length === 1;
      const { rows } = await tx.query<FlowRow>(
        `${SELECT} WHERE f.oauth_config_id = $1 AND f.flow_mode = $2 AND f.binding_id = $3 AND f.status = 'pending'`,
        [input.oauthConfigId, i.flow_mode, i.binding_id],
      );
      const row = rows[0];
      if (!row) throw new Error('per-user OAuth flow vanished while it was being opened');
      return { flow: toRecord(row), created };
    });
  }

  /** A flow by id (expiry applied), or undefined; a malformed id is a 400. */
  async find(id: string): Promise<FlowRecord | undefined> {
    checkFlowId(id);
    await this.db.query(`${EXPIRE_DUE} AND id = $1`, [id]);
    const { rows } = await this.db.query<FlowRow>(`${SELECT} WHERE f.id = $1`, [id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** GET /api/oauth/per-user/flows/{id}. */
  async get(id: string): Promise<FlowDetail> {
    const flow = await this.find(id);
    if (!flow) throw new StateError('not_found', `per-user OAuth flow ${id} not found`, 'id');
    return flowDetail(flow);
  }

  /** Newest first. */
  async list(filter: FlowFilter = {}): Promise<FlowDetail[]> {
    await this.db.query(EXPIRE_DUE);
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.mcp_client_id !== undefined) {
      params.push(filter.mcp_client_id);
      where.push(`f.mcp_client_id = $${params.length}`);
    }
    if (filter.status !== undefined) {
      params.push(filter.status);
      where.push(`f.status = $${params.length}`);
    }
    params.push(filter.limit ?? 100);
    const { rows } = await this.db.query<FlowRow>(
      `${SELECT} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY f.created_at DESC, f.id LIMIT $${params.length}`,
      params,
    );
    return rows.map((r) => flowDetail(toRecord(r)));
  }

  /**
   * pending → authorized; false when the flow is no longer pending (read as expired, or completed by another pod).
   * The callback's single-use state lives exactly as long as the flow, so a token that arrives was asked in time.
   */
  async markAuthorized(id: string, q: Queryable = this.db): Promise<boolean> {
    const r = await q.query(
      `UPDATE oauth_user_flows SET status = 'authorized', status_message = NULL, updated_at = now()
       WHERE id = $1 AND status = 'pending'`,
      [id],
    );
    return r.rowCount === 1;
  }

  /** pending → failed, keeping why (an upstream error, access denied). */
  async markFailed(id: string, message: string): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE oauth_user_flows SET status = 'failed', status_message = $2, updated_at = now()
       WHERE id = $1 AND status = 'pending'`,
      [id, message.slice(0, 1000)],
    );
    return r.rowCount === 1;
  }

  /** Does this binding hold an active token of the configuration? */
  async hasActiveToken(oauthConfigId: string, mode: FlowMode, bindingId: string): Promise<boolean> {
    const { rows } = await this.db.query<{ active: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.oauth_config_id = $1 AND t.binding_kind = $2
         AND t.binding_id = $3 AND (t.expires_at IS NULL OR t.expires_at > now() OR t.refresh_token IS NOT NULL))
       AS active`,
      [oauthConfigId, mode, bindingId],
    );
    return rows[0]?.active === true;
  }

  /** Forgets a binding's token (it can no longer be used or refreshed: the binding consents again). */
  async dropToken(oauthConfigId: string, mode: FlowMode, bindingId: string): Promise<void> {
    await this.db.query(
      'DELETE FROM oauth_tokens WHERE oauth_config_id = $1 AND binding_kind = $2 AND binding_id = $3',
      [oauthConfigId, mode, bindingId],
    );
  }
}

/** A flow id from a path: not even shaped like one → 400 (a well-formed unknown id is a 404). */
export function checkFlowId(id: string): void {
  checkPathParam(id, 'id');
  if (!FLOW_ID.test(id)) {
    throw new StateError('invalid', 'id: not a per-user OAuth flow id (puf_ followed by 32 characters)', 'id');
  }
}
