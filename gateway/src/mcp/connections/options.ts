// The bounds and timings of the connections to upstream MCP servers (spec: numeric limits are not shown; these
// are the gateway's choices, see docs/mcp/connections.md). Tests pass smaller ones.
import { type BackoffPolicy, DEFAULT_BACKOFF } from './backoff.ts';
import type { SessionLimits } from './session.ts';

export interface ConnectionOptions extends SessionLimits {
  backoff: BackoffPolicy;
  /** Health probe period of a connected session. */
  healthIntervalMs: number;
  /** per_user_oauth: most open sessions per client (the least recently used is closed beyond it). */
  perUserMaxSessions: number;
  /** per_user_oauth: a session unused this long is closed. */
  perUserIdleMs: number;
  /** A fixed tool call deadline (tests); by default the client setting mcp_tool_execution_timeout, read per call. */
  callTimeoutMs?: number | undefined;
}

export const DEFAULT_CONNECTION_OPTIONS: ConnectionOptions = {
  connectTimeoutMs: 15_000,
  requestTimeoutMs: 15_000,
  maxResponseBytes: 16 * 1024 * 1024,
  maxResultBytes: 8 * 1024 * 1024,
  maxTools: 1000,
  backoff: DEFAULT_BACKOFF,
  healthIntervalMs: 30_000,
  perUserMaxSessions: 100,
  perUserIdleMs: 5 * 60_000,
};
