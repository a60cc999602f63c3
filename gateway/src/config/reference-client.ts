// Reference client settings that configure the MCP loop, MCP tool calls and forwarded caller headers, and the
// deprecated alias `enforce_governance_header`. Kept apart from schema.ts so the client schema stays one list.
import { z } from 'zod';
import { headerNameList } from '../schemas/strings.ts';

/** Most model calls one request's auto-execute loop may make (each is a full, charged inference). */
export const MAX_AGENT_DEPTH = 50;
/** Longest tool call deadline, seconds (a call holds a session request and, in the loop, a caller's request). */
export const MAX_TOOL_TIMEOUT_S = 600;

const HeaderList = headerNameList({ max: 100 });

/**
 * Gateway-wide filter of the caller headers virtual keys forward upstream (`allowed_extra_headers`): a non-empty
 * allowlist lets only its headers through, the denylist blocks its headers; the denylist wins. Credentials and
 * the gateway's own headers are never forwarded, whatever the lists say.
 */
export const HeaderFilterConfig = z.strictObject({ allowlist: HeaderList, denylist: HeaderList });
export type HeaderFilterConfig = z.infer<typeof HeaderFilterConfig>;

export const ReferenceClientFields = {
  /** The auto-execute loop's model calls per request; `x-gateway-mcp-max-steps` may only lower it. */
  mcp_agent_depth: z.number().int().min(1).max(MAX_AGENT_DEPTH).default(10),
  /** Deadline of one MCP tool call, seconds, on every call path (loop, /v1/mcp/tool/execute, /mcp). */
  mcp_tool_execution_timeout: z.number().int().min(1).max(MAX_TOOL_TIMEOUT_S).default(60),
  header_filter_config: HeaderFilterConfig.default({ allowlist: [], denylist: [] }),
};

export const GOVERNANCE_HEADER = 'enforce_governance_header';
export const GOVERNANCE_HEADER_WARNING =
  'client setting enforce_governance_header is deprecated: use enforce_auth_on_inference';

export type AliasResult = { ok: true; raw: Record<string, unknown>; used: boolean } | { ok: false; message: string };

/**
 * Folds the deprecated `enforce_governance_header` into `enforce_auth_on_inference`, as the reference does: alone it
 * sets that setting; sent with it (a GET view sent back shows both), `enforce_auth_on_inference` wins.
 */
export function foldGovernanceHeader(raw: Record<string, unknown>): AliasResult {
  if (!(GOVERNANCE_HEADER in raw)) return { ok: true, raw, used: false };
  const { [GOVERNANCE_HEADER]: value, ...rest } = raw;
  if (typeof value !== 'boolean') return { ok: false, message: `${GOVERNANCE_HEADER}: expected a boolean` };
  if (!('enforce_auth_on_inference' in rest)) rest['enforce_auth_on_inference'] = value;
  return { ok: true, raw: rest, used: true };
}
