// The 1.4.x client settings with a behaviour here since 1.5.0 (config/reference-client.ts): the MCP loop's depth,
// the MCP tool call timeout and the forwarded-header filter. Each is checked on its own, so one value out of
// today's range stays behind (named) without taking the other client settings with it.
import type { z } from 'zod';
import { formatIssues } from '../../../config/issues.ts';
import { HeaderFilterConfig, ReferenceClientFields } from '../../../config/reference-client.ts';
import { json, num, type Raw } from '../store14.ts';
import type { Notes } from './notes.ts';

const OBJECT = 'client settings';

export interface ReferenceClientSettings {
  mcp_agent_depth?: number;
  mcp_tool_execution_timeout?: number;
  header_filter_config?: HeaderFilterConfig;
}

export function planReferenceClientSettings(c: Raw, notes: Notes): ReferenceClientSettings {
  const out: ReferenceClientSettings = {};
  const depth = checked('mcp_agent_depth', ReferenceClientFields.mcp_agent_depth, num(c['mcp_agent_depth']), notes);
  if (depth !== undefined) out.mcp_agent_depth = depth;
  const timeout = checked(
    'mcp_tool_execution_timeout',
    ReferenceClientFields.mcp_tool_execution_timeout,
    num(c['mcp_tool_execution_timeout']),
    notes,
  );
  if (timeout !== undefined) out.mcp_tool_execution_timeout = timeout;
  const filter = checked('header_filter_config', HeaderFilterConfig, json(c['header_filter_config_json']), notes);
  if (filter !== undefined) out.header_filter_config = filter;
  return out;
}

function checked<T>(field: string, schema: z.ZodType<T>, value: unknown, notes: Notes): T | undefined {
  if (value === null || value === undefined) return undefined;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  notes.warn(OBJECT, `${field} left at its default: ${formatIssues(r.error)}`);
  return undefined;
}
