// Fake Anthropic Messages API: validates requests the way the real API does (enough to catch translation
// bugs) and answers in the real wire format, including the SSE event sequence the official SDK parses.
import type { ServerResponse } from 'node:http';
import { FakeServer, type RecordedRequest, sendJson, sendSse } from './server.ts';

export interface AnthropicFakeOptions {
  /** When set, requests with another `x-api-key` get 401. */
  apiKey?: string;
  /** Pause between SSE events, to show that consumers see events before the stream ends. */
  gapMs: number;
  /** When set, the next stream sends this `error` event after its first text delta, then ends. */
  streamError?: { type: string; message: string };
  /** Model ids served by GET /v1/models. */
  models: string[];
}

export type AnthropicFake = FakeServer & {
  options: AnthropicFakeOptions;
  /** /v1/messages answers still being written: shows a chunk arrived before the upstream stream ended. */
  readonly openResponses: number;
};

type Json = Record<string, unknown>;

export function createAnthropicFake(init: Partial<AnthropicFakeOptions> = {}): AnthropicFake {
  const state = { open: 0 };
  const options: AnthropicFakeOptions = {
    gapMs: 0,
    models: ['claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001', 'claude-opus-4-1-20250805'],
    ...init,
  };
  const server = new FakeServer([
    {
      method: 'POST',
      path: '/v1/messages',
      handler: async (req, res) => {
        state.open += 1;
        try {
          await messages(options, req, res);
        } finally {
          state.open -= 1;
        }
      },
    },
    {
      method: 'POST',
      path: '/v1/messages/count_tokens',
      handler: (req, res) => {
        if (!authorized(options, req, res)) return;
        const body = asObject(req.json);
        const problem = body ? validateMessages(body['messages']) : 'body must be a JSON object';
        if (problem || !body) return invalid(res, problem ?? 'invalid body');
        sendJson(res, 200, { input_tokens: estimateTokens(body) });
      },
    },
    {
      method: 'GET',
      path: '/v1/models',
      handler: (req, res) => {
        if (!authorized(options, req, res)) return;
        const q = new URL(req.url, 'http://fake').searchParams;
        const limit = Number(q.get('limit') ?? 20);
        const after = q.get('after_id');
        const start = after ? options.models.indexOf(after) + 1 : 0;
        const page = options.models.slice(start, start + limit);
        sendJson(res, 200, {
          data: page.map((id, i) => ({
            type: 'model',
            id,
            display_name: id,
            created_at: new Date(Date.UTC(2025, 0, 1 + i)).toISOString(),
          })),
          has_more: start + limit < options.models.length,
          first_id: page[0] ?? null,
          last_id: page.at(-1) ?? null,
        });
      },
    },
  ]);
  // defineProperty, not Object.assign: assign would copy the getter's current value once.
  Object.defineProperty(server, 'openResponses', { get: () => state.open });
  return Object.assign(server, { options }) as AnthropicFake; // openResponses was defined just above
}

function authorized(options: AnthropicFakeOptions, req: RecordedRequest, res: ServerResponse): boolean {
  // Any dated version is accepted (the SDK sends a newer one than the gateway); a missing one is rejected.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(String(req.headers['anthropic-version'] ?? ''))) {
    invalid(res, 'anthropic-version: header is required');
    return false;
  }
  // The API takes the key as x-api-key; newer SDKs send it as a bearer token, which it also accepts.
  const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
  if (options.apiKey !== undefined && key !== options.apiKey) {
    sendJson(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    return false;
  }
  return true;
}

function invalid(res: ServerResponse, message: string): void {
  sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message } });
}

async function messages(options: AnthropicFakeOptions, req: RecordedRequest, res: ServerResponse): Promise<void> {
  if (!authorized(options, req, res)) return;
  const body = asObject(req.json);
  if (!body) return invalid(res, 'body must be a JSON object');
  if (typeof body['model'] !== 'string') return invalid(res, 'model: Field required');
  if (typeof body['max_tokens'] !== 'number') return invalid(res, 'max_tokens: Field required');
  const problem = validateMessages(body['messages']);
  if (problem) return invalid(res, problem);
  const answer = buildAnswer(body);
  if (body['stream'] === true) return stream(options, res, body, answer);
  sendJson(res, 200, {
    id: answer.id,
    type: 'message',
    role: 'assistant',
    model: body['model'],
    content: answer.blocks,
    stop_reason: answer.stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: answer.inputTokens,
      output_tokens: answer.outputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  });
}

interface Answer {
  id: string;
  blocks: Json[];
  stopReason: string;
  inputTokens: number;
  outputTokens: number;
}

let counter = 0;

/** Tools (unless tool_choice is none) yield a tool_use; a tool_result is acknowledged; otherwise echo. */
function buildAnswer(body: Json): Answer {
  // validateMessages accepted the body, so messages is a non-empty array of objects.
  const msgs = body['messages'] as Json[];
  const last = msgs.at(-1);
  const lastBlocks = last ? blocksOf(last['content']) : [];
  const tools = Array.isArray(body['tools']) ? (body['tools'] as Json[]) : []; // an array of tool objects
  const choice = asObject(body['tool_choice']);
  const blocks: Json[] = [];
  const thinking = asObject(body['thinking']);
  if (thinking?.['type'] === 'enabled')
    blocks.push({ type: 'thinking', thinking: 'Let me think.', signature: 'sig-fake' });
  const toolResult = lastBlocks.find((b) => b['type'] === 'tool_result');
  let stopReason = 'end_turn';
  if (toolResult) {
    blocks.push({ type: 'text', text: `tool result: ${textOf(toolResult['content'])}` });
  } else if (tools.length > 0 && choice?.['type'] !== 'none') {
    const forced = choice?.['type'] === 'tool' ? tools.find((t) => t['name'] === choice['name']) : undefined;
    const tool = forced ?? tools[0]!;
    counter += 1;
    blocks.push({
      type: 'tool_use',
      id: `toolu_fake${counter}`,
      name: tool['name'],
      input: sampleFor(asObject(tool['input_schema'])),
    });
    stopReason = 'tool_use';
  } else {
    const format = asObject(asObject(body['output_config'])?.['format']);
    const text =
      format?.['type'] === 'json_schema'
        ? JSON.stringify(sampleFor(asObject(format['schema'])))
        : `[${String(body['model'])}] ${lastText(msgs)}`;
    blocks.push({ type: 'text', text });
  }
  counter += 1;
  const outputTokens = blocks.reduce((n, b) => n + Math.ceil(JSON.stringify(b).length / 4), 0);
  return { id: `msg_fake${counter}`, blocks, stopReason, inputTokens: estimateTokens(body), outputTokens };
}

async function stream(options: AnthropicFakeOptions, res: ServerResponse, body: Json, answer: Answer): Promise<void> {
  const events: { event: string; data: Json }[] = [];
  const push = (data: Json): void => void events.push({ event: String(data['type']), data });
  push({
    type: 'message_start',
    message: {
      id: answer.id,
      type: 'message',
      role: 'assistant',
      model: body['model'],
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: answer.inputTokens,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  });
  let failAfterFirstDelta = options.streamError;
  options.streamError = undefined;
  let cutAt: number | undefined;
  answer.blocks.forEach((b, index) => {
    if (b['type'] === 'text') {
      push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      if (index === 0) push({ type: 'ping' });
      for (const piece of splitText(String(b['text']))) {
        push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
        if (failAfterFirstDelta) {
          push({ type: 'error', error: failAfterFirstDelta });
          failAfterFirstDelta = undefined;
          cutAt = events.length;
        }
      }
    } else if (b['type'] === 'thinking') {
      push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '' } });
      push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: String(b['thinking']) } });
      push({
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: String(b['signature']) },
      });
    } else {
      push({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: b['id'], name: b['name'], input: {} },
      });
      const json = JSON.stringify(b['input']);
      const mid = Math.floor(json.length / 2);
      push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } });
      push({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: json.slice(0, mid) },
      });
      push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(mid) } });
    }
    push({ type: 'content_block_stop', index });
  });
  push({
    type: 'message_delta',
    delta: { stop_reason: answer.stopReason, stop_sequence: null },
    usage: { output_tokens: answer.outputTokens },
  });
  push({ type: 'message_stop' });
  await sendSse(res, events.slice(0, cutAt), { gapMs: options.gapMs });
}

function validateMessages(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return 'messages: at least one message is required';
  let pendingToolUses: string[] = [];
  for (const [i, raw] of value.entries()) {
    const m = asObject(raw);
    if (!m || (m['role'] !== 'user' && m['role'] !== 'assistant'))
      return `messages.${i}.role: must be user or assistant`;
    const blocks = blocksOf(m['content']);
    if (blocks.length === 0) return `messages.${i}: all messages must have non-empty content`;
    if (blocks.some((b) => b['type'] === 'text' && b['text'] === ''))
      return `messages.${i}: text content blocks must be non-empty`;
    if (pendingToolUses.length > 0) {
      const answered = blocks.filter((b) => b['type'] === 'tool_result').map((b) => String(b['tool_use_id']));
      const missing = pendingToolUses.filter((id) => !answered.includes(id));
      if (m['role'] !== 'user' || missing.length > 0) {
        return `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(', ')}`;
      }
    }
    pendingToolUses =
      m['role'] === 'assistant' ? blocks.filter((b) => b['type'] === 'tool_use').map((b) => String(b['id'])) : [];
  }
  return undefined;
}

function blocksOf(content: unknown): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter((b): b is Json => asObject(b) !== undefined) : [];
}

function textOf(content: unknown): string {
  return blocksOf(content)
    .map((b) => (b['type'] === 'text' ? String(b['text']) : ''))
    .join('');
}

function lastText(msgs: Json[]): string {
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i]!;
    if (m['role'] !== 'user') continue;
    const texts = blocksOf(m['content']).filter((b) => b['type'] === 'text');
    if (texts.length > 0) return String(texts.at(-1)!['text']);
  }
  return '';
}

function estimateTokens(body: Json): number {
  const chars = JSON.stringify([body['system'] ?? '', body['messages'], body['tools'] ?? []]).length;
  return Math.max(1, Math.ceil(chars / 4));
}

/** A value that satisfies simple JSON schemas, so structured-output and tool answers look plausible. */
function sampleFor(schema: Json | undefined): unknown {
  switch (schema?.['type']) {
    case 'string':
      return 'fake';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [sampleFor(asObject(schema['items']))];
    default: {
      const props = asObject(schema?.['properties']) ?? {};
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sampleFor(asObject(v))]));
    }
  }
}

function splitText(text: string): string[] {
  const pieces = text.match(/\S+\s*/g) ?? [text];
  return pieces.length > 0 ? pieces : [''];
}

function asObject(v: unknown): Json | undefined {
  // Plain JSON objects parsed from request bodies; arrays and null are excluded.
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}
