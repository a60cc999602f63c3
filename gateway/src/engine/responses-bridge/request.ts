// Responses API request → chat request, for providers that only speak Chat Completions. Anything that needs
// OpenAI-side state (previous_response_id, item references) or a hosted tool has no chat equivalent and is
// refused with the name of the field, rather than silently answered without it.
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  FunctionTool,
  ResponseFormat,
  ToolCall,
  ToolChoice,
} from '../../schemas/chat.ts';
import type { ResponsesRequest } from '../../schemas/responses.ts';

export type BridgeResult<T> = { ok: true; value: T } | { ok: false; error: string };

type Json = Record<string, unknown>;

// Thrown only inside this module and turned into a result by responsesToChat, so the nested converters stay linear.
class Refusal extends Error {}

function refuse(message: string): never {
  throw new Refusal(message);
}

const VIA_CHAT = 'when the model is served through the chat completions API';

export function responsesToChat(req: ResponsesRequest): BridgeResult<ChatRequest> {
  try {
    return { ok: true, value: translate(req) };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, error: err.message };
    throw err;
  }
}

function translate(req: ResponsesRequest): ChatRequest {
  refuseStatefulFields(req);
  const messages: ChatMessage[] = [];
  if (req.instructions) messages.push({ role: 'system', content: req.instructions });
  messages.push(...inputMessages(req.input));
  if (messages.length === 0) refuse('input: no messages to send');

  const chat: ChatRequest = { model: req.model, messages };
  if (req.stream !== undefined) chat.stream = req.stream;
  if (req.max_output_tokens != null) chat.max_completion_tokens = req.max_output_tokens;
  if (req.temperature != null) chat.temperature = req.temperature;
  if (req.top_p != null) chat.top_p = req.top_p;
  if (req.user !== undefined) chat.user = req.user;
  const tools = (req.tools ?? []).map((t, i) => functionTool(t, `tools[${i}]`));
  // chat rejects tool_choice and parallel_tool_calls without tools, while Responses clients send them always
  if (tools.length > 0) {
    chat.tools = tools;
    const choice = toolChoice(req.tool_choice);
    if (choice !== undefined) chat.tool_choice = choice;
    if (req.parallel_tool_calls !== undefined) chat.parallel_tool_calls = req.parallel_tool_calls;
  } else if (req.tool_choice !== undefined) {
    toolChoice(req.tool_choice);
  }
  const format = responseFormat(req.text?.['format']);
  if (format) chat.response_format = format;
  const verbosity = req.text?.['verbosity'];
  if (typeof verbosity === 'string') chat['verbosity'] = verbosity;
  const effort = req.reasoning?.['effort'];
  if (typeof effort === 'string') chat.reasoning_effort = effort;
  for (const key of ['service_tier', 'prompt_cache_key', 'safety_identifier'] as const) {
    if (typeof req[key] === 'string') chat[key] = req[key];
  }
  return chat;
}

function refuseStatefulFields(req: ResponsesRequest): void {
  if (req.previous_response_id != null) {
    refuse(
      `previous_response_id: stored responses are not available ${VIA_CHAT}; send the whole conversation in input`,
    );
  }
  if (req['conversation'] != null) {
    refuse(`conversation: stored conversations are not available ${VIA_CHAT}; send the whole conversation in input`);
  }
  if (req['prompt'] != null) refuse(`prompt: stored prompt templates are not available ${VIA_CHAT}`);
  if (req['background'] === true) refuse(`background: background responses are not available ${VIA_CHAT}`);
}

function inputMessages(input: ResponsesRequest['input']): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out: ChatMessage[] = [];
  input.forEach((item, i) => {
    addItem(out, item, `input[${i}]`);
  });
  return out;
}

function addItem(out: ChatMessage[], item: Json, at: string): void {
  // the SDK's EasyInputMessage may omit `type`; a role is enough to make it a message
  const type = item['type'] ?? (item['role'] !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message':
      out.push(message(item, at));
      return;
    case 'function_call':
      addToolCall(out, item, at);
      return;
    case 'function_call_output':
      out.push(toolResult(item, at));
      return;
    case 'reasoning':
      // chat has no slot for earlier reasoning (often encrypted anyway); the model reasons afresh
      return;
    case undefined:
      refuse(`${at}: an input item needs a type or a role`);
      break;
    default:
      refuse(`${at}.type: '${String(type)}' items are not supported ${VIA_CHAT}`);
  }
}

function message(item: Json, at: string): ChatMessage {
  const role = item['role'];
  const content = item['content'];
  if (role === 'assistant') return assistantMessage(content, at);
  if (role !== 'user' && role !== 'system' && role !== 'developer') {
    return refuse(`${at}.role: expected user, assistant, system or developer, got '${String(role)}'`);
  }
  return { role, content: typeof content === 'string' ? content : contentParts(content, `${at}.content`) };
}

/** Earlier assistant turns (output messages fed back as input) become one text, with any refusal beside it. */
function assistantMessage(content: unknown, at: string): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  if (!Array.isArray(content)) return refuse(`${at}.content: expected a string or an array of content parts`);
  let text = '';
  let refusal: string | undefined;
  content.forEach((p: unknown, j) => {
    const part = record(p, `${at}.content[${j}]`);
    if ((part['type'] === 'output_text' || part['type'] === 'input_text') && typeof part['text'] === 'string') {
      text += part['text'];
    } else if (part['type'] === 'refusal' && typeof part['refusal'] === 'string') {
      refusal = (refusal ?? '') + part['refusal'];
    } else {
      refuse(`${at}.content[${j}]: assistant content must be output_text or refusal parts`);
    }
  });
  const msg: ChatMessage = { role: 'assistant', content: text === '' && refusal !== undefined ? null : text };
  if (refusal !== undefined) msg.refusal = refusal;
  return msg;
}

function contentParts(content: unknown, at: string): ContentPart[] {
  if (!Array.isArray(content)) return refuse(`${at}: expected a string or an array of content parts`);
  return content.map((p: unknown, j) => contentPart(record(p, `${at}[${j}]`), `${at}[${j}]`));
}

function contentPart(part: Json, at: string): ContentPart {
  switch (part['type']) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: str(part['text'], `${at}.text`) };
    case 'input_image':
      return imagePart(part, at);
    case 'input_file': {
      if (part['file_url'] != null) refuse(`${at}.file_url: file URLs are not supported ${VIA_CHAT}; send file_data`);
      const file: { file_data?: string; file_id?: string; filename?: string } = {};
      if (typeof part['file_data'] === 'string') file.file_data = part['file_data'];
      if (typeof part['file_id'] === 'string') file.file_id = part['file_id'];
      if (typeof part['filename'] === 'string') file.filename = part['filename'];
      if (file.file_data === undefined && file.file_id === undefined)
        refuse(`${at}: input_file needs file_data or file_id`);
      return { type: 'file', file };
    }
    case 'input_audio': {
      const audio = record(part['input_audio'], `${at}.input_audio`);
      const data = str(audio['data'], `${at}.input_audio.data`);
      return { type: 'input_audio', input_audio: { data, format: str(audio['format'], `${at}.input_audio.format`) } };
    }
    default:
      return refuse(`${at}.type: '${String(part['type'])}' content is not supported ${VIA_CHAT}`);
  }
}

function imagePart(part: Json, at: string): ContentPart {
  const url = part['image_url'];
  if (typeof url === 'string') {
    const detail = part['detail'];
    const image: { url: string; detail?: 'auto' | 'low' | 'high' } = { url };
    if (detail === 'auto' || detail === 'low' || detail === 'high') image.detail = detail;
    // 'original' (full resolution) has no chat level; 'high' is the closest
    else if (detail === 'original') image.detail = 'high';
    return { type: 'image_url', image_url: image };
  }
  // chat has no image-by-file-id part; the generic file part carries the id and the provider decides
  if (typeof part['file_id'] === 'string') return { type: 'file', file: { file_id: part['file_id'] } };
  return refuse(`${at}: input_image needs image_url or file_id`);
}

/** A function call joins the assistant message just before it, so one turn's text and calls stay one message. */
function addToolCall(out: ChatMessage[], item: Json, at: string): void {
  const call: ToolCall = {
    id: str(item['call_id'], `${at}.call_id`),
    type: 'function',
    function: { name: str(item['name'], `${at}.name`), arguments: str(item['arguments'], `${at}.arguments`) },
  };
  const last = out.at(-1);
  if (last?.role === 'assistant') {
    last.tool_calls = [...(last.tool_calls ?? []), call];
    return;
  }
  out.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function toolResult(item: Json, at: string): ChatMessage {
  const toolCallId = str(item['call_id'], `${at}.call_id`);
  const output = item['output'];
  if (typeof output === 'string') return { role: 'tool', tool_call_id: toolCallId, content: output };
  const parts = contentParts(output, `${at}.output`);
  // many chat providers take only text in tool results, so all-text output goes as a plain string
  const textOnly = parts.every((p) => p.type === 'text');
  const content = textOnly ? parts.map((p) => (p.type === 'text' ? p.text : '')).join('') : parts;
  return { role: 'tool', tool_call_id: toolCallId, content };
}

function functionTool(tool: Json, at: string): FunctionTool {
  if (tool['type'] !== 'function') {
    return refuse(`${at}.type: '${String(tool['type'])}' is a hosted tool, not available ${VIA_CHAT}`);
  }
  const fn: FunctionTool['function'] = { name: str(tool['name'], `${at}.name`) };
  if (typeof tool['description'] === 'string') fn.description = tool['description'];
  const params = tool['parameters'];
  if (params != null) fn.parameters = record(params, `${at}.parameters`);
  if (typeof tool['strict'] === 'boolean') fn.strict = tool['strict'];
  return { type: 'function', function: fn };
}

function toolChoice(choice: ResponsesRequest['tool_choice']): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (typeof choice === 'string') return refuse(`tool_choice: expected auto, none or required, got '${choice}'`);
  if (choice['type'] === 'function')
    return { type: 'function', function: { name: str(choice['name'], 'tool_choice.name') } };
  return refuse(`tool_choice.type: '${String(choice['type'])}' is not supported ${VIA_CHAT}`);
}

function responseFormat(format: unknown): ResponseFormat | undefined {
  if (format == null) return undefined;
  const f = record(format, 'text.format');
  switch (f['type']) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const js: Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'] = {
        name: str(f['name'], 'text.format.name'),
        schema: record(f['schema'], 'text.format.schema'),
      };
      if (typeof f['description'] === 'string') js.description = f['description'];
      if (typeof f['strict'] === 'boolean') js.strict = f['strict'];
      return { type: 'json_schema', json_schema: js };
    }
    default:
      return refuse(`text.format.type: expected text, json_object or json_schema, got '${String(f['type'])}'`);
  }
}

function record(v: unknown, at: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return refuse(`${at}: expected an object`);
  // a non-null, non-array object: its keys are strings and its values unknown, which is all Json claims
  return v as Json;
}

function str(v: unknown, at: string): string {
  if (typeof v !== 'string') return refuse(`${at}: expected a string`);
  return v;
}
