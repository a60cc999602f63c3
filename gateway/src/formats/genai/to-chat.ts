// A Gemini API `generateContent` body -> the unified chat request, for a model of another provider. Pure; throws
// GatewayError('invalid_request') for what the unified schema cannot carry (see docs/formats/genai.md).
import { GatewayError } from '../../http/errors.ts';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../../schemas/chat.ts';
import { isRecord } from '../../util/records.ts';
import type { GenerateContentRequest, Part } from './schema.ts';

type GenerationConfig = NonNullable<GenerateContentRequest['generationConfig']>;

export function toChatRequest(req: GenerateContentRequest, model: string, stream: boolean): ChatRequest {
  const out: ChatRequest = { model, messages: toMessages(req) };
  const tools = toTools(req.tools);
  if (tools) {
    out.tools = tools;
    const choice = toToolChoice(req.toolConfig?.functionCallingConfig);
    if (choice) out.tool_choice = choice;
  }
  if (req.generationConfig) applyGenerationConfig(out, req.generationConfig);
  if (stream) {
    out.stream = true;
    // usageMetadata is part of Gemini's answer: always ask the other provider for usage.
    out.stream_options = { include_usage: true };
  }
  return out;
}

function toMessages(req: GenerateContentRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const system = req.systemInstruction;
  const systemText = typeof system === 'string' ? system : system ? textOf(system.parts) : '';
  if (systemText !== '') messages.push({ role: 'system', content: systemText });
  // Calls still waiting for their response, by name: Gemini's functionResponse may omit the call id.
  const open: ToolCall[] = [];
  let calls = 0;
  for (const [i, c] of req.contents.entries()) {
    if (c.role === 'model') {
      const toolCalls = c.parts.flatMap((p) => (p.functionCall ? [toToolCall(p, `call_${calls++}`)] : []));
      open.push(...toolCalls);
      const text = textOf(c.parts);
      const msg: ChatMessage = { role: 'assistant', content: toolCalls.length > 0 && text === '' ? null : text };
      if (toolCalls.length > 0) msg.tool_calls = toolCalls;
      messages.push(msg);
      continue;
    }
    const content: ContentPart[] = [];
    for (const [j, p] of c.parts.entries()) {
      if (p.functionResponse) {
        const fr = p.functionResponse;
        const at = open.findIndex((t) => (fr.id ? t.id === fr.id : t.function.name === fr.name));
        const id = at >= 0 ? open.splice(at, 1)[0]!.id : (fr.id ?? `call_${calls++}`);
        messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(fr.response) });
        continue;
      }
      const part = toContentPart(p, `contents[${i}].parts[${j}]`);
      if (part) content.push(part);
    }
    if (content.length > 0) messages.push({ role: 'user', content: plain(content) });
  }
  return messages;
}

/** A single text part travels as a string, which every provider takes. */
function plain(content: ContentPart[]): string | ContentPart[] {
  const [first] = content;
  return content.length === 1 && first?.type === 'text' ? first.text : content;
}

function toToolCall(p: Part, fallbackId: string): ToolCall {
  const fc = p.functionCall!;
  const call: ToolCall = {
    id: fc.id ?? fallbackId,
    type: 'function',
    function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) },
  };
  if (p.thoughtSignature) call['extra_content'] = { google: { thought_signature: p.thoughtSignature } };
  return call;
}

/** Thought parts are the model's own reasoning: not sent back to another provider (which could not verify it). */
function textOf(parts: Part[]): string {
  return parts.map((p) => (typeof p.text === 'string' && p.thought !== true ? p.text : '')).join('');
}

function toContentPart(p: Part, where: string): ContentPart | undefined {
  if (typeof p.text === 'string')
    return p.thought === true || p.text === '' ? undefined : { type: 'text', text: p.text };
  if (p.inlineData) {
    const { mimeType, data } = p.inlineData;
    const url = `data:${mimeType};base64,${data}`;
    if (mimeType.startsWith('image/')) return { type: 'image_url', image_url: { url } };
    return { type: 'file', file: { file_data: url } };
  }
  if (p.fileData) {
    const { mimeType, fileUri } = p.fileData;
    if (mimeType?.startsWith('image/') || (!mimeType && /^https?:/.test(fileUri))) {
      return { type: 'image_url', image_url: { url: fileUri } };
    }
    return { type: 'file', file: { file_id: fileUri } };
  }
  if (p.functionCall) {
    throw new GatewayError('invalid_request', `${where}: functionCall parts belong in a 'model' turn`, {
      param: `${where}.functionCall`,
    });
  }
  const kind = Object.keys(p)[0] ?? 'empty';
  throw new GatewayError('invalid_request', `${where}: a '${kind}' part cannot be sent to this model`, {
    param: `${where}.${kind}`,
  });
}

function toTools(tools: GenerateContentRequest['tools']): FunctionTool[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  const out: FunctionTool[] = [];
  for (const [i, t] of tools.entries()) {
    const other = Object.keys(t).find((k) => k !== 'functionDeclarations');
    if (other) {
      throw new GatewayError('invalid_request', `tools[${i}].${other} is a Gemini-only tool: use a gemini model`, {
        param: `tools[${i}].${other}`,
      });
    }
    for (const d of t.functionDeclarations ?? []) {
      const fn: FunctionTool['function'] = { name: d.name };
      if (d.description) fn.description = d.description;
      const params = d.parametersJsonSchema ?? (d.parameters ? openApiToJsonSchema(d.parameters) : undefined);
      fn.parameters = isRecord(params) ? params : { type: 'object', properties: {} };
      out.push({ type: 'function', function: fn });
    }
  }
  return out.length > 0 ? out : undefined;
}

type CallingConfig = NonNullable<NonNullable<GenerateContentRequest['toolConfig']>['functionCallingConfig']>;

function toToolChoice(cfg: CallingConfig | undefined): ToolChoice | undefined {
  switch (cfg?.mode) {
    case 'NONE':
      return 'none';
    case 'AUTO':
      return 'auto';
    case 'ANY':
    case 'VALIDATED': {
      const names = cfg.allowedFunctionNames ?? [];
      return names.length === 1 ? { type: 'function', function: { name: names[0]! } } : 'required';
    }
    default:
      return undefined;
  }
}

/** Gemini's thinking budget in the unified reasoning effort (the inverse of providers/gemini/request.ts). */
function effortOf(t: NonNullable<GenerationConfig['thinkingConfig']>): string | undefined {
  if (t.thinkingLevel) return t.thinkingLevel.toLowerCase();
  const b = t.thinkingBudget;
  if (b === undefined) return t.includeThoughts ? 'medium' : undefined;
  if (b === 0) return 'none';
  if (b < 0) return 'medium';
  return b <= 1024 ? 'low' : b <= 8192 ? 'medium' : 'high';
}

function applyGenerationConfig(out: ChatRequest, g: GenerationConfig): void {
  if (g.temperature !== undefined) out.temperature = g.temperature;
  if (g.topP !== undefined) out.top_p = g.topP;
  if (g.topK !== undefined) out['top_k'] = g.topK;
  if (g.maxOutputTokens !== undefined) out.max_tokens = g.maxOutputTokens;
  if (g.stopSequences && g.stopSequences.length > 0) out.stop = g.stopSequences;
  if (g.candidateCount !== undefined) out.n = g.candidateCount;
  if (g.seed !== undefined) out.seed = g.seed;
  if (g.presencePenalty !== undefined) out.presence_penalty = g.presencePenalty;
  if (g.frequencyPenalty !== undefined) out.frequency_penalty = g.frequencyPenalty;
  if (g.responseMimeType === 'application/json') {
    const schema = g.responseJsonSchema ?? (g.responseSchema ? openApiToJsonSchema(g.responseSchema) : undefined);
    out.response_format =
      isRecord(schema) && Object.keys(schema).length > 0
        ? { type: 'json_schema', json_schema: { name: 'response', schema } }
        : { type: 'json_object' };
  }
  const effort = g.thinkingConfig ? effortOf(g.thinkingConfig) : undefined;
  if (effort) out.reasoning_effort = effort;
}

/** Gemini's OpenAPI-subset schema (`type: "OBJECT"`, `nullable`) as JSON Schema. */
export function openApiToJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(openApiToJsonSchema);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' && typeof v === 'string') out[k] = v.toLowerCase();
    else if (k === 'nullable' || k === 'propertyOrdering') continue;
    else if (k === 'properties' && isRecord(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, openApiToJsonSchema(s)]));
    } else out[k] = openApiToJsonSchema(v);
  }
  if (schema['nullable'] === true && typeof out['type'] === 'string') out['type'] = [out['type'], 'null'];
  return out;
}
