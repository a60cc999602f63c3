// What one tool call leaves in the MCP tool log (/api/mcp-logs): a row built from the call's start and its
// outcome, pure, and handed to a sink that batches it. Recording never throws and never waits: a log store that is
// down or slow must not fail or delay the tool call (the sink's writer buffers, spools and counts what it drops).
import type { LogMetadata } from '../config/log-headers.ts';
import type { Principal } from '../http/auth.ts';
import { timeOrderedId } from '../state/ids.ts';
import type { McpToolLog } from '../state/services/mcp-log-rows.ts';
import { resultText } from './injection/calls.ts';
import type { McpAuthError, McpClientRecord, McpToolResult } from './types.ts';

/** Where rows go, and whether they are written at all and with arguments and results (the logging plugin). */
export interface ToolLogSink {
  mode(): 'off' | 'metadata' | 'content';
  push(entry: McpToolLog): void;
}

/** Arguments or a result longer than this (as JSON) are not stored: the row says how long they were. */
export const MAX_LOGGED_TOOL_CONTENT_CHARS = 64 * 1024;
/** Error messages are cut here (a tool's error text can be as long as its result). */
const MAX_ERROR_CHARS = 4096;
const MAX_NAME_CHARS = 256;

export interface ToolCallStart {
  id: string;
  startedAt: number;
  llmRequestId: string | null;
  principal: Principal | null;
  client: McpClientRecord;
  /** The upstream tool name. */
  tool: string;
  /** Undefined when the arguments could not be read (they are then not part of the row). */
  args: Record<string, unknown> | undefined;
  /** The calling request's log metadata (config/log-headers.ts); absent: none. */
  metadata?: LogMetadata | null;
}

export type ToolCallOutcome =
  | { kind: 'result'; result: McpToolResult }
  | { kind: 'failed'; type: string; code: string; message: string };

export function startToolCall(now: number, call: Omit<ToolCallStart, 'id' | 'startedAt'>): ToolCallStart {
  return { id: timeOrderedId(now), startedAt: now, ...call };
}

/** A failure the tool server never answered (unreachable, timed out, refused the connection). */
export function upstreamFailure(message: string): ToolCallOutcome {
  return { kind: 'failed', type: 'upstream_error', code: 'mcp_tool_call_failed', message };
}

/**
 * A missing or expired authorization. A consent link is left out: its flow id is the capability to complete the
 * caller's consent, and the log is read by other people.
 */
export function authFailure(err: McpAuthError): ToolCallOutcome {
  const message = err.consentUrl ? err.message.split(err.consentUrl).join('[consent link]') : err.message;
  return { kind: 'failed', type: 'permission_error', code: err.code, message };
}

/** Whether a call succeeded: only a successful call has a cost, in the log and in budgets alike. */
export function succeeded(outcome: ToolCallOutcome): boolean {
  return outcome.kind === 'result' && outcome.result.isError !== true;
}

/** The client's price of one call of `tool` in nano-USD (tool_pricing is USD per call); undefined without one. */
export function toolPriceNano(client: McpClientRecord, tool: string): number | undefined {
  const price = client.tool_pricing[tool];
  return typeof price === 'number' && Number.isFinite(price) && price >= 0 ? Math.round(price * 1e9) : undefined;
}

/** The row of one finished call; `content` decides whether arguments, results and the tool's own error text go in. */
export function toolLogEntry(
  start: ToolCallStart,
  outcome: ToolCallOutcome,
  endedAt: number,
  content: boolean,
): McpToolLog {
  const { client, principal } = start;
  const vk = principal?.kind === 'virtual_key' ? principal.vk : undefined;
  const toolError = outcome.kind === 'result' && outcome.result.isError === true;
  const success = succeeded(outcome);
  return {
    id: start.id,
    created_at: start.startedAt,
    llm_request_id: start.llmRequestId,
    tool_name: start.tool.slice(0, MAX_NAME_CHARS),
    server_label: client.name,
    virtual_key_id: vk?.id ?? null,
    virtual_key_name: vk?.name ?? null,
    arguments: content && start.args !== undefined ? bounded(start.args) : null,
    result: content && outcome.kind === 'result' ? bounded(outcome.result) : null,
    error:
      outcome.kind === 'failed'
        ? errorDetails(outcome.type, outcome.code, outcome.message)
        : toolError
          ? errorDetails(
              'tool_error',
              'tool_error',
              content ? resultText(outcome.result) : 'the tool reported an error (content logging is off)',
            )
          : null,
    status: success ? 'success' : 'error',
    latency_ms: Math.max(0, endedAt - start.startedAt),
    // The client's own per-call price (USD, tool_pricing), what a virtual key's budgets were charged (tool-charge.ts).
    cost_nano: success ? (toolPriceNano(client, start.tool) ?? null) : null,
    metadata: start.metadata ?? null,
  };
}

/** Stores the row of a finished call; never throws (a log that cannot be written must not fail the call). */
export function recordToolCall(
  sink: ToolLogSink | undefined,
  start: ToolCallStart,
  outcome: ToolCallOutcome,
  endedAt: number,
): void {
  if (!sink) return;
  try {
    const mode = sink.mode();
    if (mode !== 'off') sink.push(toolLogEntry(start, outcome, endedAt, mode === 'content'));
  } catch {
    // The writer reports its own failures; a row it cannot take is lost, the call is not.
  }
}

/** The reference's GatewayError shape (`error_details`); the tool server's failures are not the gateway's. */
function errorDetails(type: string, code: string, message: string) {
  return {
    is_gateway_error: type !== 'tool_error' && type !== 'upstream_error',
    error: {
      type,
      code,
      message: message.length > MAX_ERROR_CHARS ? `${message.slice(0, MAX_ERROR_CHARS)}…` : message,
    },
  };
}

function bounded(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text.length <= MAX_LOGGED_TOOL_CONTENT_CHARS
      ? text
      : JSON.stringify({ omitted: 'too_large', chars: text.length });
  } catch {
    return JSON.stringify({ omitted: 'not_serialisable' });
  }
}
