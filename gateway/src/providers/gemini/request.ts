// Unified chat request -> Gemini `generateContent` body. Pure: no I/O, throws ProviderError('invalid_request')
// for input Gemini cannot express.
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../../schemas/chat.ts';
import { ProviderError } from '../errors.ts';
import type {
  GeminiContent,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiThinkingConfig,
  GeminiTool,
  GeminiToolConfig,
  GenerateContentRequest,
} from './wire.ts';

/**
 * Gemini 3 rejects a function-call turn without a thought signature; this documented placeholder is accepted
 * for histories Gemini did not produce (e.g. after a fallback from another provider).
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

export function toGenerateContentRequest(req: ChatRequest, model: string): GenerateContentRequest {
  const body: GenerateContentRequest = toGeminiConversation(req.messages);
  const tools = toGeminiTools(req.tools);
  if (tools) {
    body.tools = tools;
    const toolConfig = toGeminiToolConfig(req.tool_choice);
    if (toolConfig) body.toolConfig = toolConfig;
  }
  const generationConfig = toGenerationConfig(req, model);
  if (generationConfig) body.generationConfig = generationConfig;
  const safety = req['safety_settings'] ?? req['safetySettings'];
  if (Array.isArray(safety)) body.safetySettings = safety;
  const cached = req['cached_content'] ?? req['cachedContent'];
  if (typeof cached === 'string') body.cachedContent = cached;
  return body;
}

/** Messages -> `contents` (user/model turns) plus `systemInstruction` from system and developer messages. */
export function toGeminiConversation(
  messages: ChatMessage[],
): Pick<GenerateContentRequest, 'contents' | 'systemInstruction'> {
  const contents: GeminiContent[] = [];
  const systemParts: GeminiPart[] = [];
  // Gemini names the function in each functionResponse; OpenAI only sends the call id back.
  const toolNames = new Map<string, string>();
  for (const msg of messages) {
    switch (msg.role) {
      case 'system':
      case 'developer':
        systemParts.push(...toParts(msg.content));
        break;
      case 'user':
        pushContent(contents, 'user', toParts(msg.content));
        break;
      case 'assistant': {
        const parts = msg.content == null ? [] : toParts(msg.content);
        msg.tool_calls?.forEach((call, i) => {
          toolNames.set(call.id, call.function.name);
          parts.push(toFunctionCallPart(call, i === 0));
        });
        pushContent(contents, 'model', parts);
        break;
      }
      case 'tool': {
        const name = toolNames.get(msg.tool_call_id);
        if (!name) {
          throw new ProviderError(
            'invalid_request',
            `tool message refers to tool_call_id '${msg.tool_call_id}' that no earlier assistant message called`,
          );
        }
        const response = toFunctionResponseValue(textOf(msg.content));
        const part: GeminiPart = { functionResponse: { id: msg.tool_call_id, name, response } };
        // All results of one model turn go back in one user turn, as Gemini expects.
        const prev = contents.at(-1);
        if (prev?.role === 'user' && prev.parts.every((p) => p.functionResponse)) prev.parts.push(part);
        else contents.push({ role: 'user', parts: [part] });
        break;
      }
    }
  }
  const out: Pick<GenerateContentRequest, 'contents' | 'systemInstruction'> = { contents };
  if (systemParts.length > 0) out.systemInstruction = { parts: systemParts };
  return out;
}

function pushContent(contents: GeminiContent[], role: 'user' | 'model', parts: GeminiPart[]): void {
  // Gemini rejects turns without parts (e.g. an empty assistant message).
  if (parts.length > 0) contents.push({ role, parts });
}

function toFunctionCallPart(call: ToolCall, first: boolean): GeminiPart {
  let args: unknown;
  try {
    args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch {
    throw new ProviderError('invalid_request', `tool call '${call.id}' has arguments that are not valid JSON`);
  }
  if (!isPlainObject(args)) {
    throw new ProviderError('invalid_request', `tool call '${call.id}' arguments must be a JSON object`);
  }
  const part: GeminiPart = { functionCall: { id: call.id, name: call.function.name, args } };
  const signature = thoughtSignatureOf(call) ?? (first ? SKIP_THOUGHT_SIGNATURE : undefined);
  if (signature) part.thoughtSignature = signature;
  return part;
}

/** Reads `extra_content.google.thought_signature`, where responses put Gemini's signature (as Google's OpenAI layer does). */
function thoughtSignatureOf(call: ToolCall): string | undefined {
  const extra = call['extra_content'];
  if (!isPlainObject(extra)) return undefined;
  const google = extra['google'];
  if (!isPlainObject(google)) return undefined;
  const sig = google['thought_signature'];
  return typeof sig === 'string' ? sig : undefined;
}

/** Gemini wants an object: JSON objects pass as they are, anything else is wrapped as `{output}`. */
export function toFunctionResponseValue(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return isPlainObject(parsed) ? parsed : { output: parsed };
  } catch {
    return { output: text };
  }
}

function toParts(content: string | ContentPart[]): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const parts: GeminiPart[] = [];
  for (const part of content) {
    const p = toPart(part);
    if (p) parts.push(p);
  }
  return parts;
}

function toPart(part: ContentPart): GeminiPart | undefined {
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : { text: part.text };
    case 'refusal':
      return { text: part.refusal };
    case 'image_url':
      return mediaPart(part.image_url.url, 'image/jpeg');
    case 'input_audio':
      return { inlineData: { mimeType: `audio/${part.input_audio.format}`, data: part.input_audio.data } };
    case 'file': {
      const { file_data, file_id, filename } = part.file;
      if (file_data) return mediaPart(file_data, guessMime(filename ?? '') ?? 'application/pdf');
      if (file_id)
        return { fileData: { mimeType: guessMime(filename ?? file_id) ?? 'application/pdf', fileUri: file_id } };
      throw new ProviderError('invalid_request', 'file content part needs file_data or file_id');
    }
  }
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*?);base64,(.*)$/s;

/** data: URLs become inline bytes; other URLs (http(s), gs://, Files API) are passed by reference. */
function mediaPart(url: string, fallbackMime: string): GeminiPart {
  if (url.startsWith('data:')) {
    const m = DATA_URL.exec(url);
    if (!m) throw new ProviderError('invalid_request', 'data: URLs must be base64-encoded');
    return { inlineData: { mimeType: m[1] || fallbackMime, data: m[3] ?? '' } };
  }
  return { fileData: { mimeType: guessMime(url) ?? fallbackMime, fileUri: url } };
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  mov: 'video/mov',
  webm: 'video/webm',
};

function guessMime(nameOrUrl: string): string | undefined {
  const path = nameOrUrl.split(/[?#]/)[0] ?? '';
  const dot = path.lastIndexOf('.');
  return dot === -1 ? undefined : MIME_BY_EXTENSION[path.slice(dot + 1).toLowerCase()];
}

function textOf(content: string | ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

export function toGeminiTools(tools: FunctionTool[] | undefined): GeminiTool[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return [
    {
      functionDeclarations: tools.map(({ function: fn }) => {
        const decl: GeminiTool['functionDeclarations'][number] = { name: fn.name };
        if (fn.description) decl.description = fn.description;
        // Gemini rejects an object schema without properties; a parameterless function simply omits it.
        if (fn.parameters && hasProperties(fn.parameters)) decl.parametersJsonSchema = fn.parameters;
        return decl;
      }),
    },
  ];
}

function hasProperties(schema: Record<string, unknown>): boolean {
  const props = schema['properties'];
  return schema['type'] !== 'object' || (isPlainObject(props) && Object.keys(props).length > 0);
}

export function toGeminiToolConfig(choice: ToolChoice | undefined): GeminiToolConfig | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}

function toGenerationConfig(req: ChatRequest, model: string): GeminiGenerationConfig | undefined {
  const cfg: GeminiGenerationConfig = {};
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens != null) cfg.maxOutputTokens = maxTokens;
  if (req.temperature != null) cfg.temperature = req.temperature;
  if (req.top_p != null) cfg.topP = req.top_p;
  const topK = req['top_k'];
  if (typeof topK === 'number') cfg.topK = topK;
  if (req.stop != null) cfg.stopSequences = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (req.n != null) cfg.candidateCount = req.n;
  if (req.seed != null) cfg.seed = req.seed;
  if (req.presence_penalty != null) cfg.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty != null) cfg.frequencyPenalty = req.frequency_penalty;
  const format = req.response_format;
  if (format?.type === 'json_object') cfg.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    cfg.responseMimeType = 'application/json';
    if (format.json_schema.schema) cfg.responseJsonSchema = format.json_schema.schema;
  }
  const thinking = toThinkingConfig(req.reasoning_effort, model);
  if (thinking) cfg.thinkingConfig = thinking;
  return Object.keys(cfg).length > 0 ? cfg : undefined;
}

/** Token budgets for Gemini 2.5 models, by OpenAI reasoning effort. */
const THINKING_BUDGET: Record<string, number> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576 };
const THINKING_LEVELS = new Set(['minimal', 'low', 'medium', 'high']);

/** Gemini 3 takes a thinking level, earlier thinking models a token budget; both are asked to return thoughts. */
export function toThinkingConfig(effort: string | null | undefined, model: string): GeminiThinkingConfig | undefined {
  if (!effort) return undefined;
  if (/gemini-3/.test(model)) {
    if (effort === 'none') return { thinkingLevel: 'minimal' };
    return { includeThoughts: true, thinkingLevel: THINKING_LEVELS.has(effort) ? effort : 'high' };
  }
  if (effort === 'none') return { thinkingBudget: 0 };
  return { includeThoughts: true, thinkingBudget: THINKING_BUDGET[effort] ?? THINKING_BUDGET['high'] };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
