// Function tools in the OpenAI formats, for MCP tool injection and the auto-execute loop: where chat and
// Responses requests declare tools, where answers call them, and how a turn and its tool outputs are appended
// to the conversation (chat: the assistant message with `tool_calls` and `role: tool` messages; Responses: the
// answer's output items and `function_call_output` items, as OpenAI's own function-calling guide does).
import type { AssistantMessage, ChatMessage, ChatRequest, ChatResponse, FunctionTool } from '../../schemas/chat.ts';
import type { ResponsesRequest, ResponsesResponse } from '../../schemas/responses.ts';
import type { ToolCallOut, ToolCodec, ToolDefinition } from '../types.ts';

export const chatTools: ToolCodec<ChatRequest, ChatResponse> = {
  declared(body) {
    return new Set((body.tools ?? []).map((t) => t.function.name));
  },
  addTools(body, tools) {
    body.tools = [...(body.tools ?? []), ...tools.map(chatTool)];
  },
  calls(res) {
    // Several choices (n > 1) are several conversations: the caller decides which one goes on.
    if (res.choices.length !== 1) return [];
    const calls = res.choices[0]?.message.tool_calls ?? [];
    return calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  },
  next(body, res, outputs) {
    const message = res.choices[0]?.message;
    const turn: ChatMessage[] = message ? [assistantTurn(message)] : [];
    const results: ChatMessage[] = outputs.map((o) => ({ role: 'tool', tool_call_id: o.id, content: o.output }));
    return { ...body, messages: [...body.messages, ...turn, ...results] };
  },
};

function chatTool(t: ToolDefinition): FunctionTool {
  const fn: FunctionTool['function'] = { name: t.name, parameters: t.parameters };
  if (t.description !== undefined) fn.description = t.description;
  return { type: 'function', function: fn };
}

/** The answer's message as a request message: only the fields a chat request takes (no `annotations`). */
function assistantTurn(m: AssistantMessage): ChatMessage {
  const turn: ChatMessage = { role: 'assistant', content: m.content ?? null };
  // The calls go back as the provider sent them (provider data such as Gemini's signatures rides along).
  if (m.tool_calls && m.tool_calls.length > 0) turn.tool_calls = m.tool_calls;
  if (m.refusal != null) turn.refusal = m.refusal;
  if (m.reasoning_content !== undefined) turn.reasoning_content = m.reasoning_content;
  return turn;
}

export const responsesTools: ToolCodec<ResponsesRequest, ResponsesResponse> = {
  declared(body) {
    const names = new Set<string>();
    for (const t of body.tools ?? []) {
      if (t['type'] === 'function' && typeof t['name'] === 'string') names.add(t['name']);
    }
    return names;
  },
  addTools(body, tools) {
    body.tools = [...(body.tools ?? []), ...tools.map(responsesTool)];
  },
  calls(res) {
    const out: ToolCallOut[] = [];
    for (const item of res.output ?? []) {
      if (item.type !== 'function_call') continue;
      const { call_id: id, name, arguments: args } = item;
      if (typeof id === 'string' && typeof name === 'string') {
        out.push({ id, name, arguments: typeof args === 'string' ? args : '' });
      }
    }
    return out;
  },
  next(body, res, outputs) {
    const earlier = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
    const results = outputs.map((o) => ({ type: 'function_call_output', call_id: o.id, output: o.output }));
    return { ...body, input: [...earlier, ...(res.output ?? []), ...results] };
  },
};

function responsesTool(t: ToolDefinition): Record<string, unknown> {
  // strict: OpenAI's Responses default is strict schemas, which most MCP tool schemas do not satisfy.
  const tool: Record<string, unknown> = { type: 'function', name: t.name, parameters: t.parameters, strict: false };
  if (t.description !== undefined) tool['description'] = t.description;
  return tool;
}
