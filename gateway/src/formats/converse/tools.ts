// Function tools in the Bedrock Converse format, for MCP tool injection and the auto-execute loop: tools are
// `toolConfig.tools[].toolSpec` (`inputSchema.json` takes the MCP tool's JSON Schema), calls are `toolUse`
// blocks of `output.message`, and a turn goes on as that message (reasoning signatures included) followed by a
// user message of `toolResult` blocks.
import type { JsonObject } from '../../providers/types.ts';
import { isRecord } from '../../util/records.ts';
import type { ToolCallOut, ToolCodec } from '../types.ts';
import type { ContentBlock, ConverseRequest, Message } from './schema.ts';

export const converseTools: ToolCodec<ConverseRequest, JsonObject> = {
  declared(body) {
    const names = new Set<string>();
    for (const t of body.toolConfig?.tools ?? []) if (t.toolSpec) names.add(t.toolSpec.name);
    return names;
  },
  addTools(body, tools) {
    const specs = tools.map((t) => ({
      toolSpec: {
        name: t.name,
        // Bedrock refuses an empty description.
        ...(t.description ? { description: t.description } : {}),
        inputSchema: { json: t.parameters },
      },
    }));
    body.toolConfig = { ...body.toolConfig, tools: [...(body.toolConfig?.tools ?? []), ...specs] };
  },
  calls(res) {
    const out: ToolCallOut[] = [];
    for (const block of messageOf(res)?.content ?? []) {
      const use = block.toolUse;
      if (use) out.push({ id: use.toolUseId, name: use.name, arguments: JSON.stringify(use.input ?? {}) });
    }
    return out;
  },
  next(body, res, outputs) {
    const message = messageOf(res);
    const results: ContentBlock[] = outputs.map((o) => ({
      toolResult: { toolUseId: o.id, content: [{ text: o.output }] },
    }));
    return {
      ...body,
      messages: [...(body.messages ?? []), ...(message ? [message] : []), { role: 'user', content: results }],
    };
  },
};

/** The answer's `output.message`, its content blocks as they came. */
function messageOf(res: JsonObject): Message | undefined {
  const output = res['output'];
  const message = isRecord(output) ? output['message'] : undefined;
  if (!isRecord(message) || !Array.isArray(message['content'])) return undefined;
  // A Converse answer's message: role and content blocks in the request's own shape (toolUse blocks read above).
  return { role: 'assistant', content: message['content'].filter(isRecord) as ContentBlock[] };
}
