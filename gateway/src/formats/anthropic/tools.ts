// Function tools in the Anthropic Messages format, for MCP tool injection and the auto-execute loop: client
// tools are `{name, description, input_schema}`, calls are `tool_use` content blocks, and a turn goes on as the
// assistant message with the answer's content blocks (thinking signatures included, as Anthropic requires)
// followed by a user message of `tool_result` blocks.
import type { JsonObject } from '../../providers/types.ts';
import { isRecord } from '../../util/records.ts';
import type { ToolCallOut, ToolCodec } from '../types.ts';
import type { MessagesRequest } from './schema.ts';

export const messagesTools: ToolCodec<MessagesRequest, JsonObject> = {
  declared(body) {
    // Server tools (web_search, ...) have names too: a name the caller uses is never taken over.
    return new Set((body.tools ?? []).map((t) => t.name));
  },
  addTools(body, tools) {
    body.tools = [
      ...(body.tools ?? []),
      ...tools.map((t) => ({
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        input_schema: t.parameters,
      })),
    ];
  },
  calls(res) {
    const out: ToolCallOut[] = [];
    for (const block of contentOf(res)) {
      if (block['type'] !== 'tool_use') continue;
      const { id, name, input } = block;
      if (typeof id === 'string' && typeof name === 'string') {
        out.push({ id, name, arguments: JSON.stringify(input ?? {}) });
      }
    }
    return out;
  },
  next(body, res, outputs) {
    const results = outputs.map((o) => ({ type: 'tool_result', tool_use_id: o.id, content: o.output }));
    return {
      ...body,
      messages: [...body.messages, { role: 'assistant', content: contentOf(res) }, { role: 'user', content: results }],
    };
  },
};

type Block = JsonObject & { type: string };

/** The answer's content blocks (every block has a `type`; anything else is not a block). */
function contentOf(res: JsonObject): Block[] {
  const content = res['content'];
  if (!Array.isArray(content)) return [];
  return content.filter((b): b is Block => isRecord(b) && typeof b['type'] === 'string');
}
