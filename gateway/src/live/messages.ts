// The live-update protocol of `GET /ws` (the reference gateway's message shapes) and the notice that tells every
// pod which request-log rows were just stored. Every message is a JSON text frame; each is serialised once and
// the same string goes to every client.
import { z } from 'zod';
import type { ChangeEvent } from '../state/events.ts';

/** Coordinator channel: a pod stored a chunk of request-log rows (`StoredLogs`). */
export const LIVE_LOGS_CHANNEL = 'live:logs';

/** Rows of one stored chunk pushed to the clients; older rows of the chunk are counted in `logs_skipped`. */
export const MAX_LIVE_LOGS_PER_BATCH = 100;

/** Content (request and response bodies) larger than this is left out of a live log message. */
export const MAX_LIVE_CONTENT_CHARS = 32 * 1024;

/** Which log a chunk's rows are in: request logs (`log` events) or MCP tool logs (`mcp_log` events). */
export const LOG_KINDS = ['request', 'mcp'] as const;
export type LogKind = (typeof LOG_KINDS)[number];

/**
 * What a pod publishes after storing a chunk: its newest row ids, and how many rows the chunk held. `kind` is
 * absent for request logs (what pods without MCP tool logs publish and read).
 */
const StoredLogs = z.object({
  ids: z.array(z.string().min(1).max(128)).max(MAX_LIVE_LOGS_PER_BATCH),
  rows: z.int().min(0),
  kind: z.enum(LOG_KINDS).default('request'),
});
export type StoredLogs = z.infer<typeof StoredLogs>;

/** The notice for a stored chunk (its ids in the order they were written; at most the newest 100 are named). */
export function storedLogsNotice(ids: readonly string[], kind: LogKind = 'request'): string {
  const newest = ids.slice(-MAX_LIVE_LOGS_PER_BATCH);
  return JSON.stringify(
    kind === 'request' ? { ids: newest, rows: ids.length } : { ids: newest, rows: ids.length, kind },
  );
}

export function parseStoredLogs(message: string): StoredLogs | undefined {
  try {
    const r = StoredLogs.safeParse(JSON.parse(message));
    return r.success && r.data.rows >= r.data.ids.length ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** A request-log row, as GET /api/logs/{id} shows it. Rows are written once, so the operation is always create. */
export function logMessage(payload: Record<string, unknown>): string {
  return JSON.stringify({ type: 'log', operation: 'create', payload });
}

/** An MCP tool-log row, as GET /api/mcp-logs lists it (the reference's `mcp_log` event); written once: create. */
export function mcpLogMessage(payload: Record<string, unknown>): string {
  return JSON.stringify({ type: 'mcp_log', operation: 'create', payload });
}

/** The message of a stored row of `kind`. */
export function liveLogMessage(kind: LogKind, payload: Record<string, unknown>): string {
  return kind === 'mcp' ? mcpLogMessage(payload) : logMessage(payload);
}

/** The event type of a row of `kind`: what `logs_skipped` names in `log_type`. */
export function logEventType(kind: LogKind): 'log' | 'mcp_log' {
  return kind === 'mcp' ? 'mcp_log' : 'log';
}

/**
 * `count` events of `kind` were not sent (a slow reader, or more rows than a batch sends): refetch that list.
 * `log_type` is the type of the events left out, so a page counts only its own; a client that predates it ignores it.
 */
export function logsSkippedMessage(count: number, kind: LogKind): string {
  return JSON.stringify({ type: 'logs_skipped', count, log_type: logEventType(kind) });
}

/** A change to configuration (providers, governance, MCP clients, plugins, ...), once this pod serves it. */
export function storeUpdateMessage(event: ChangeEvent): string {
  return JSON.stringify({ type: 'store_update', ...event });
}

/** The protocol in words, for the API document. */
export const PROTOCOL_DESCRIPTION =
  'Server-to-client JSON text frames: ' +
  '`{"type":"log","operation":"create","payload":<log entry as GET /api/logs/{id}>}` for each request-log row ' +
  `stored by any gateway pod (at most the newest ${MAX_LIVE_LOGS_PER_BATCH} of each stored batch; \`content\` larger ` +
  `than ${MAX_LIVE_CONTENT_CHARS / 1024} KiB is replaced by \`{"omitted":"too_large_for_live","chars":N}\`, fetch the ` +
  'row for it); `{"type":"mcp_log","operation":"create","payload":<entry as GET /api/mcp-logs lists it>}` for ' +
  'each MCP tool-log row, on the same terms (`arguments` and `result` each bounded like `content`); ' +
  '`{"type":"logs_skipped","count":N,"log_type":"log"|"mcp_log"}` when N events of that type were not sent (a ' +
  'batch held more rows, or the client read too slowly): refetch that list (a message without `log_type`, from an ' +
  'older gateway, may be of either); `{"type":"store_update","kind":"provider"|"governance"|' +
  '"client_config"|"admin_keys"|"mcp"|"plugins", ...}` after a configuration change took effect on this pod ' +
  '(`name` for a provider, `virtual_key_ids` when only those virtual keys changed). A ping frame is sent every ' +
  '30 s; a client that has not answered the previous ping with a pong is disconnected. Messages from the client ' +
  'are not part of the protocol: they are discarded, and one over 4 KiB closes the connection (1008). A client ' +
  'that falls far behind is closed with 1013; on shutdown clients are closed with 1001.';
