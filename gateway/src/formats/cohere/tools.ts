// Function tools in the Cohere v2 chat format, for MCP tool injection and the auto-execute loop: tools are
// `{type: function, function: {name, description, parameters}}`, calls are `message.tool_calls`, and a turn goes
// on as the assistant message (its `tool_plan`, calls and content) followed by one `role: tool` message per call.
import type { JsonObject } from '../../providers/types.ts';
import { isRecord } from '../../util/records.ts';
import type { ToolCallOut, ToolCodec } from '../types.ts';
import type { ChatRequest, Message } from './schema.ts';

export const cohereChatTools: ToolCodec<ChatRequest, JsonObject> = {
  declared(body) {
    return new Set((body.tools ?? []).map((t) => t.function.name));
  },
  addTools(body, tools) {
    body.tools = [
      ...(body.tools ?? []),
      ...tools.map((t) => ({
        type: 'function' as const,
        function: {
          name: t.name,
          ...(t.description !== undefined ? { description: t.description } : {}),
          parameters: t.parameters,
        },
      })),
    ];
  },
  calls(res) {
    const out: ToolCallOut[] = [];
    for (const c of toolCallsOf(res)) {
      const fn = c['function'];
      if (typeof c['id'] !== 'string' || !isRecord(fn) || typeof fn['name'] !== 'string') continue;
      out.push({
        id: c['id'],
        name: fn['name'],
        arguments: typeof fn['arguments'] === 'string' ? fn['arguments'] : '',
      });
    }
    return out;
  },
  next(body, res, outputs) {
    const message = isRecord(res['message']) ? res['message'] : {};
    // The answer's message as a request message: its plan, its calls and any text it had, as the answer sent them
    // (a Cohere answer's calls and content blocks have the request message's shapes; the casts only name them).
    const turn: Message = {
      role: 'assistant',
      ...(typeof message['tool_plan'] === 'string' ? { tool_plan: message['tool_plan'] } : {}),
      tool_calls: toolCallsOf(res) as NonNullable<Extract<Message, { role: 'assistant' }>['tool_calls']>,
      ...(Array.isArray(message['content']) && message['content'].length > 0
        ? { content: message['content'] as Extract<Message, { role: 'assistant' }>['content'] }
        : {}),
    };
    const results: Message[] = outputs.map((o) => ({ role: 'tool', tool_call_id: o.id, content: o.output }));
    return { ...body, messages: [...body.messages, turn, ...results] };
  },
};

function toolCallsOf(res: JsonObject): JsonObject[] {
  const message = res['message'];
  const calls = isRecord(message) ? message['tool_calls'] : undefined;
  return Array.isArray(calls) ? calls.filter(isRecord) : [];
}
