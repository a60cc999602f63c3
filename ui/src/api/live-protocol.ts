// The pure half of the dashboard's live updates (GET /ws): reading the gateway's messages, which query caches a
// configuration change makes stale, and when to try again after the connection was lost. No DOM, no timers.

/** A request-log row was stored (its payload is the row as GET /api/logs lists it; read by the logs page). */
export interface LiveLog {
  type: 'log';
  payload: unknown;
}
/** An MCP tool-log row was stored (its payload is the row as GET /api/mcp-logs lists it; read by the MCP logs page). */
export interface LiveMcpLog {
  type: 'mcp_log';
  payload: unknown;
}
/** The message type of a log's rows: request logs (`log`) or MCP tool logs (`mcp_log`). */
export type LiveLogType = 'log' | 'mcp_log';
/**
 * `count` log messages were not sent to this page: only a refetch shows them. `log_type` says which log they were
 * of; a gateway pod older than it leaves it out, and then they may be of either.
 */
export interface LiveLogsSkipped {
  type: 'logs_skipped';
  count: number;
  log_type?: LiveLogType;
}
/** A configuration change took effect (`provider`, `governance`, `client_config`, `mcp`, `plugins`, ...). */
export interface LiveStoreUpdate {
  type: 'store_update';
  kind: string;
}
export type LiveMessage = LiveLog | LiveMcpLog | LiveLogsSkipped | LiveStoreUpdate;

/** Far above any real count; a larger one is a broken message, not a number to show. */
const MAX_COUNT = 1e9;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One text frame of /ws as a message; undefined for anything else (other types, broken JSON), which is ignored. */
export function parseLiveMessage(text: unknown): LiveMessage | undefined {
  if (typeof text !== 'string') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(v)) return undefined;
  switch (v['type']) {
    case 'log':
      // Rows are written once: `create` is the only operation the gateway sends.
      return v['operation'] === 'create' && isRecord(v['payload']) ? { type: 'log', payload: v['payload'] } : undefined;
    case 'mcp_log':
      return v['operation'] === 'create' && isRecord(v['payload'])
        ? { type: 'mcp_log', payload: v['payload'] }
        : undefined;
    case 'logs_skipped': {
      const count = v['count'];
      if (!(Number.isInteger(count) && typeof count === 'number' && count > 0 && count <= MAX_COUNT)) return undefined;
      const logType = v['log_type'];
      if (logType === undefined) return { type: 'logs_skipped', count };
      // Another value is of a log no page here lists (a newer gateway), or a broken message: nothing to count.
      return logType === 'log' || logType === 'mcp_log'
        ? { type: 'logs_skipped', count, log_type: logType }
        : undefined;
    }
    case 'store_update':
      return typeof v['kind'] === 'string' ? { type: 'store_update', kind: v['kind'] } : undefined;
    default:
      return undefined;
  }
}

/**
 * The query-key prefixes a change of `kind` makes stale. Every page names its queries under its area's first key
 * (`['governance', 'virtual-keys']`, `['providers', name, 'keys']`, `['mcp', 'clients']`, ...), so a prefix reaches
 * all of them. `admin_keys` changes nothing the dashboard shows.
 */
export function staleAreas(kind: string): readonly string[] {
  switch (kind) {
    // Virtual keys, teams, customers, budgets, rate limits, routing rules, pricing overrides, model configs.
    case 'governance':
      return ['governance'];
    case 'provider':
      return ['providers'];
    case 'plugins':
      return ['plugins'];
    case 'mcp':
      return ['mcp'];
    case 'client_config':
      return ['config'];
    default:
      return [];
  }
}

/** Every area a missed change could have touched: after a reconnect, events sent while away are gone. */
export const ALL_AREAS: readonly string[] = ['governance', 'providers', 'plugins', 'mcp', 'config'];

export interface RetryPolicy {
  /** Delay before the first retry; doubled for each failure in a row. */
  baseMs: number;
  /** Largest delay between two attempts. */
  maxMs: number;
  /** Attempts (ticket and socket) allowed in any 60 s. */
  perMinute: number;
  /** A connection that stayed open this long resets the doubling. */
  stableMs: number;
}

export const RETRY_POLICY: RetryPolicy = { baseMs: 1_000, maxMs: 30_000, perMinute: 6, stableMs: 10_000 };

const MINUTE_MS = 60_000;

/**
 * How long to wait before the next attempt, after `failures` failures in a row (1 or more), given when the earlier
 * attempts started (`attempts`, oldest first) and a random number in [0, 1). The doubling delay is jittered to
 * between half and all of it, so pages dropped together by a restart do not come back in step; past `perMinute`
 * attempts in the last minute, the wait lasts until the oldest of them is a minute old.
 */
export function retryDelay(
  policy: RetryPolicy,
  failures: number,
  attempts: readonly number[],
  nowMs: number,
  random: number,
): number {
  const doubled = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  let at = nowMs + doubled / 2 + (random * doubled) / 2;
  const recent = attempts.filter((t) => nowMs - t < MINUTE_MS);
  if (recent.length >= policy.perMinute) {
    const oldest = recent[recent.length - policy.perMinute] ?? nowMs;
    at = Math.max(at, oldest + MINUTE_MS);
  }
  return Math.max(0, Math.ceil(at - nowMs));
}

/** The attempt times worth keeping (the last minute's). */
export function recentAttempts(attempts: readonly number[], nowMs: number): number[] {
  return attempts.filter((t) => nowMs - t < MINUTE_MS);
}
