// The tools callers and models see: `<client>-<tool>` for every enabled client's listed tools, leaving out any
// whose qualified name does not fit OpenAI's function-name rule (no model could call it). Pure.
import { qualifiedToolName } from '../policy.ts';
import type { McpClientRecord, McpTool } from '../types.ts';
import type { ListedTool } from './session.ts';

/** OpenAI's function-name rule. */
export const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The listed tools of client `name` that models can call; `leftOut` hears of each other one. */
export function callableTools(name: string, tools: ListedTool[], leftOut: (tool: string) => void): ListedTool[] {
  return tools.filter((t) => {
    if (FUNCTION_NAME.test(qualifiedToolName(name, t.name))) return true;
    leftOut(t.name);
    return false;
  });
}

/** Every enabled client's tools under their qualified names (a rename can push a listed name past the rule). */
export function qualifiedTools(clients: Array<{ record: McpClientRecord; tools: ListedTool[] }>): McpTool[] {
  const out: McpTool[] = [];
  for (const { record: r, tools } of clients) {
    if (r.disabled) continue;
    for (const t of tools) {
      const qualifiedName = qualifiedToolName(r.name, t.name);
      if (!FUNCTION_NAME.test(qualifiedName)) continue;
      out.push({
        clientId: r.id,
        clientName: r.name,
        name: t.name,
        qualifiedName,
        description: t.description,
        inputSchema: t.inputSchema,
      });
    }
  }
  return out;
}
