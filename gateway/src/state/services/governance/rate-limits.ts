// GET /api/governance/rate-limits: every configured rate limit (virtual keys, their provider configs, teams,
// customers) with its owner, read straight from the tables; current counters come from the injected `counts`.
import type { RateLimit } from '../../../governance/model.ts';
import type { Db } from '../../db/types.ts';

export type RateLimitOwnerKind = 'virtual_key' | 'provider_config' | 'team' | 'customer' | 'model_config' | 'provider';

export interface RateLimitEntry {
  owner_kind: RateLimitOwnerKind;
  owner_id: string;
  /** Provider configs are named `<virtual key name>/<provider>`. */
  owner_name: string;
  /** Set for provider configs: the key they belong to and their provider. */
  virtual_key_id: string | null;
  provider: string | null;
  rate_limit: RateLimit;
}

/** Current window of one limit: what has been counted and when the window ends. */
export interface RateLimitWindow {
  used: number;
  resetAtMs: number;
}
export interface RateLimitCounters {
  requests?: RateLimitWindow;
  tokens?: RateLimitWindow;
}
/** Current counters by `rateLimitKey(entry)`; entries without counters yet are simply absent. */
export type RateLimitCounts = (entries: RateLimitEntry[]) => Promise<Map<string, RateLimitCounters>>;

export function rateLimitKey(e: { owner_kind: RateLimitOwnerKind; owner_id: string }): string {
  return `${e.owner_kind}:${e.owner_id}`;
}

export class RateLimitService {
  private readonly deps: { db: Db; counts: RateLimitCounts };
  constructor(deps: { db: Db; counts: RateLimitCounts }) {
    this.deps = deps;
  }

  async list(): Promise<Record<string, unknown>[]> {
    const { rows } = await this.deps.db.query<RateLimitEntry & Record<string, unknown>>(
      `SELECT 'virtual_key' AS owner_kind, id AS owner_id, name AS owner_name,
              NULL::text AS virtual_key_id, NULL::text AS provider, rate_limit, 1 AS o
         FROM virtual_keys WHERE rate_limit IS NOT NULL
       UNION ALL
       SELECT 'provider_config', pc.id, vk.name || '/' || pc.provider, vk.id, pc.provider, pc.rate_limit, 2
         FROM vk_provider_configs pc JOIN virtual_keys vk ON vk.id = pc.virtual_key_id
        WHERE pc.rate_limit IS NOT NULL
       UNION ALL
       SELECT 'team', id, name, NULL, NULL, rate_limit, 3 FROM teams WHERE rate_limit IS NOT NULL
       UNION ALL
       SELECT 'customer', id, name, NULL, NULL, rate_limit, 4 FROM customers WHERE rate_limit IS NOT NULL
       UNION ALL
       SELECT 'model_config', id, COALESCE(provider, '*') || '/' || model_name, NULL, provider, rate_limit, 5
         FROM model_configs WHERE rate_limit IS NOT NULL
       UNION ALL
       SELECT 'provider', provider, provider, NULL, provider, rate_limit, 6
         FROM provider_governance WHERE rate_limit IS NOT NULL
       ORDER BY o, owner_name`,
    );
    const entries: RateLimitEntry[] = rows
      .filter((r) => r.rate_limit && (r.rate_limit.request_max_limit != null || r.rate_limit.token_max_limit != null))
      .map((r) => ({
        owner_kind: r.owner_kind,
        owner_id: r.owner_id,
        owner_name: r.owner_name,
        virtual_key_id: r.virtual_key_id,
        provider: r.provider,
        rate_limit: r.rate_limit,
      }));
    const counters = entries.length > 0 ? await this.deps.counts(entries) : new Map<string, RateLimitCounters>();
    return entries.map((e) => {
      const c = counters.get(rateLimitKey(e));
      return {
        owner_kind: e.owner_kind,
        owner_id: e.owner_id,
        owner_name: e.owner_name,
        ...(e.owner_kind === 'provider_config' ? { virtual_key_id: e.virtual_key_id, provider: e.provider } : {}),
        ...(e.owner_kind === 'model_config' && e.provider ? { provider: e.provider } : {}),
        ...windowView('request', e.rate_limit.request_max_limit, e.rate_limit.request_reset_duration, c?.requests),
        ...windowView('token', e.rate_limit.token_max_limit, e.rate_limit.token_reset_duration, c?.tokens),
      };
    });
  }
}

export function windowView(
  kind: 'request' | 'token',
  limit: number | null | undefined,
  duration: string | null | undefined,
  w: RateLimitWindow | undefined,
): Record<string, unknown> {
  return {
    [`${kind}_max_limit`]: limit ?? null,
    [`${kind}_reset_duration`]: duration ?? null,
    [`${kind}_current_usage`]: limit == null ? null : (w?.used ?? 0),
    [`${kind}_reset_at`]: limit != null && w ? new Date(w.resetAtMs).toISOString() : null,
  };
}
