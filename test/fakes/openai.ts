// Fake OpenAI upstream: chat completions, text completions, embeddings, Responses (+ streams), input token
// counting and models, speaking the real wire format closely enough for the official `openai` SDK. Routes match
// on the path suffix, so the same fake serves `/v1/...`, prefixed roots (`/openai/v1`, `/api/v1`), rootless
// servers (`/chat/completions`) and Azure (`/openai/deployments/{d}/...`, `/openai/v1/responses`).
// Answers echo the model and the last user message so tests can assert what the upstream received. Stored
// responses can be continued (`previous_response_id`); an id the fakes never stored answers OpenAI's 404.
import type { ServerResponse } from 'node:http';
import { FakeServer, type RecordedRequest, type Route, sendJson, sleep } from './server.ts';

export interface OpenAIFakeStreamState {
  /** Pause between stream events (ms); raise it to prove the gateway yields before the stream ends. */
  gapMs: number;
  /** Streams written to the end, `[DONE]` included. */
  completed: number;
}

export type OpenAIFake = FakeServer & { stream: OpenAIFakeStreamState };

export function createOpenAIFake(opts: { gapMs?: number } = {}): OpenAIFake {
  const stream: OpenAIFakeStreamState = { gapMs: opts.gapMs ?? 0, completed: 0 };
  return Object.assign(new FakeServer(openAIRoutes(stream)), { stream });
}

/** Models listed by `GET .../models`. */
export const FAKE_MODELS = ['gpt-4o-mini', 'gpt-4.1', 'text-embedding-3-small'];

/** The deterministic vector the fake returns for one input (float32 values, so base64 round-trips exactly). */
export function fakeEmbedding(input: string, dimensions = 8): number[] {
  let h = 2166136261;
  for (let i = 0; i < input.length; i++) h = Math.imul(h ^ input.charCodeAt(i), 16777619);
  return Array.from({ length: dimensions }, (_, i) => Math.fround(Math.sin(h + i)));
}

/** The assistant text the fake answers with. */
export function fakeReply(model: string, lastUser: string): string {
  return `Echo from ${model}: ${lastUser}`;
}

type Json = Record<string, unknown>;

function openAIRoutes(stream: OpenAIFakeStreamState): Route[] {
  return [
    { method: 'POST', path: /\/chat\/completions$/, handler: (req, res) => chat(req, res, stream) },
    { method: 'POST', path: /\/completions$/, handler: (req, res) => completions(req, res, stream) },
    { method: 'POST', path: /\/embeddings$/, handler: embeddings },
    { method: 'POST', path: /\/responses\/input_tokens$/, handler: inputTokens },
    { method: 'POST', path: /\/responses$/, handler: (req, res) => responses(req, res, stream) },
    { method: 'GET', path: /\/models$/, handler: models },
  ];
}

let counter = 0;
const nextId = (prefix: string): string => `${prefix}${(++counter).toString(36).padStart(8, '0')}`;
const now = (): number => Math.floor(Date.now() / 1000);
const tokens = (text: string): number => text.split(/\s+/).filter(Boolean).length;
const words = (text: string): string[] => text.match(/\s*\S+/g) ?? [''];

function obj(v: unknown): Json | undefined {
  // a non-null, non-array object: its properties are read as unknown and checked where used
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

/** The objects of a JSON array (anything else: none). */
function objects(v: unknown): Json[] {
  return Array.isArray(v) ? v.map((x: unknown) => obj(x) ?? {}) : [];
}

const body = (req: RecordedRequest): Json => obj(req.json) ?? {};

/** The model a request names: the body's, else the Azure deployment in the path. */
function modelOf(req: RecordedRequest, b: Json): string {
  if (typeof b['model'] === 'string') return b['model'];
  return /\/deployments\/([^/]+)\//.exec(req.path)?.[1] ?? 'unknown-model';
}

/** OpenAI's 400 shape; returns true when it answered. */
function invalid(res: ServerResponse, ok: boolean, message: string, param: string | null): boolean {
  if (ok) return false;
  sendJson(res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
  return true;
}

function checkStreamOptions(res: ServerResponse, b: Json): boolean {
  return invalid(
    res,
    b['stream_options'] === undefined || b['stream_options'] === null || b['stream'] === true,
    'The stream_options parameter is only allowed when stream is enabled.',
    'stream_options',
  );
}

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  return objects(content)
    .map((p) => (typeof p['text'] === 'string' ? p['text'] : ''))
    .filter(Boolean)
    .join(' ');
}

function chatUsage(prompt: number, completion: number): Json {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
}

async function writeSse(
  res: ServerResponse,
  state: OpenAIFakeStreamState,
  events: { event?: string; data: unknown }[],
  done = true,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const e of events) {
    if (res.destroyed) return;
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
    if (state.gapMs > 0) await sleep(state.gapMs);
  }
  if (res.destroyed) return;
  // chat and completions streams end with the [DONE] sentinel; Responses streams just end
  res.end(done ? 'data: [DONE]\n\n' : undefined);
  state.completed++;
}

async function chat(req: RecordedRequest, res: ServerResponse, state: OpenAIFakeStreamState): Promise<void> {
  const b = body(req);
  const messages = objects(b['messages']);
  if (
    invalid(
      res,
      messages.length > 0,
      "Invalid 'messages': empty array. Expected an array with minimum length 1.",
      'messages',
    )
  )
    return;
  if (checkStreamOptions(res, b)) return;
  const model = modelOf(req, b);
  const last = messages.at(-1);
  const lastUser = textOfContent(messages.findLast((m) => m['role'] === 'user')?.['content']);
  const prompt = messages.reduce((n, m) => n + tokens(textOfContent(m['content'])), 0);
  const toolName = obj(objects(b['tools'])[0]?.['function'])?.['name'];
  const callTool = typeof toolName === 'string' && last?.['role'] === 'user' && b['tool_choice'] !== 'none';
  const text = fakeReply(model, lastUser);
  const args = JSON.stringify({ query: lastUser });
  const id = nextId('chatcmpl-');
  const created = now();
  const completion = callTool ? tokens(args) : tokens(text);
  const finish = callTool ? 'tool_calls' : 'stop';
  const callId = nextId('call_');

  if (b['stream'] !== true) {
    const message = callTool
      ? {
          role: 'assistant',
          content: null,
          refusal: null,
          annotations: [],
          tool_calls: [{ id: callId, type: 'function', function: { name: toolName, arguments: args } }],
        }
      : { role: 'assistant', content: text, refusal: null, annotations: [] };
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage: chatUsage(prompt, completion),
      service_tier: 'default',
      system_fingerprint: 'fp_fake',
    });
    return;
  }

  const includeUsage = obj(b['stream_options'])?.['include_usage'] === true;
  const chunk = (delta: Json, finishReason: string | null): { data: Json } => ({
    data: {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      service_tier: 'default',
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    },
  });
  const events = callTool
    ? [
        chunk(
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: toolName, arguments: '' } }],
          },
          null,
        ),
        ...words(args).map((a) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] }, null)),
      ]
    : [
        chunk({ role: 'assistant', content: '', refusal: null }, null),
        ...words(text).map((w) => chunk({ content: w }, null)),
      ];
  events.push(chunk({}, finish));
  if (includeUsage) {
    events.push({
      data: {
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [],
        usage: chatUsage(prompt, completion),
      },
    });
  }
  await writeSse(res, state, events);
}

async function completions(req: RecordedRequest, res: ServerResponse, state: OpenAIFakeStreamState): Promise<void> {
  const b = body(req);
  const p = b['prompt'];
  if (invalid(res, p !== undefined && p !== null, 'You must provide a prompt.', 'prompt')) return;
  if (checkStreamOptions(res, b)) return;
  const model = modelOf(req, b);
  const prompts =
    typeof p === 'string' ? [p] : Array.isArray(p) && p.every((x) => typeof x === 'string') ? p : [JSON.stringify(p)];
  const texts = prompts.map((x) => ` ${fakeReply(model, String(x))}`);
  const promptTokens = prompts.reduce((n, x) => n + tokens(String(x)), 0);
  const usage = chatUsage(
    promptTokens,
    texts.reduce((n, t) => n + tokens(t), 0),
  );
  const id = nextId('cmpl-');
  const created = now();
  const base = { id, object: 'text_completion', created, model, system_fingerprint: 'fp_fake' };
  if (b['stream'] !== true) {
    const choices = texts.map((text, index) => ({ text, index, logprobs: null, finish_reason: 'stop' }));
    sendJson(res, 200, { ...base, choices, usage });
    return;
  }
  const includeUsage = obj(b['stream_options'])?.['include_usage'] === true;
  const events: { data: Json }[] = [];
  texts.forEach((text, index) => {
    for (const w of words(text)) {
      events.push({ data: { ...base, choices: [{ text: w, index, logprobs: null, finish_reason: null }] } });
    }
    events.push({ data: { ...base, choices: [{ text: '', index, logprobs: null, finish_reason: 'stop' }] } });
  });
  if (includeUsage) events.push({ data: { ...base, choices: [], usage } });
  await writeSse(res, state, events);
}

function embeddings(req: RecordedRequest, res: ServerResponse): void {
  const b = body(req);
  const input = b['input'];
  const inputs: unknown[] = Array.isArray(input) && input.some((x) => typeof x !== 'number') ? input : [input];
  if (
    invalid(
      res,
      input !== undefined && input !== '' && inputs.length > 0,
      "'input' : input cannot be an empty string",
      'input',
    )
  )
    return;
  const dims = typeof b['dimensions'] === 'number' ? b['dimensions'] : 8;
  const base64 = b['encoding_format'] === 'base64';
  const data = inputs.map((x, index) => {
    const vector = fakeEmbedding(typeof x === 'string' ? x : JSON.stringify(x), dims);
    const embedding = base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
    return { object: 'embedding', index, embedding };
  });
  const promptTokens = inputs.reduce<number>(
    (n, x) => n + (typeof x === 'string' ? tokens(x) : Array.isArray(x) ? x.length : 1),
    0,
  );
  sendJson(res, 200, {
    object: 'list',
    data,
    model: modelOf(req, b),
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}

/** Text of the last user turn of a Responses `input` (a string, or a list of items). */
function lastUserInput(input: unknown): string {
  if (typeof input === 'string') return input;
  const item = objects(input)
    .reverse()
    .find((i) => i['role'] === 'user');
  return textOfContent(item?.['content']);
}

function inputTokenCount(b: Json): number {
  const input = b['input'];
  const items = typeof input === 'string' ? [{ content: input }] : objects(input);
  let n = typeof b['instructions'] === 'string' ? tokens(b['instructions']) : 0;
  for (const i of items) {
    n += tokens(textOfContent(i['content'])) + tokens(typeof i['output'] === 'string' ? i['output'] : '');
    if (typeof i['arguments'] === 'string') n += tokens(i['arguments']);
  }
  return n + (Array.isArray(b['tools']) ? b['tools'].length * 10 : 0);
}

function inputTokens(req: RecordedRequest, res: ServerResponse): void {
  const b = body(req);
  if (invalid(res, typeof b['model'] === 'string', "Missing required parameter: 'model'.", 'model')) return;
  sendJson(res, 200, { object: 'response.input_tokens', input_tokens: inputTokenCount(b) });
}

/**
 * Ids of the responses the fakes stored (`store` not false), as one OpenAI organisation holds them: another
 * fake instance continues them too. Bounded: the oldest are forgotten first.
 */
const storedResponses = new Set<string>();
const MAX_STORED_RESPONSES = 10_000;

function storeResponse(id: string): void {
  storedResponses.add(id);
  if (storedResponses.size > MAX_STORED_RESPONSES) storedResponses.delete(storedResponses.values().next().value!);
}

/** OpenAI's answer to a `previous_response_id` it does not hold (never stored, or made with `store: false`). */
function unknownPrevious(res: ServerResponse, previous: unknown): boolean {
  if (previous === undefined || previous === null) return false;
  if (typeof previous === 'string' && storedResponses.has(previous)) return false;
  sendJson(res, 404, {
    error: {
      message: `Previous response with id '${String(previous)}' not found.`,
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    },
  });
  return true;
}

async function responses(req: RecordedRequest, res: ServerResponse, state: OpenAIFakeStreamState): Promise<void> {
  const b = body(req);
  const input = b['input'];
  if (invalid(res, typeof input === 'string' || Array.isArray(input), "Missing required parameter: 'input'.", 'input'))
    return;
  if (unknownPrevious(res, b['previous_response_id'])) return;
  const model = modelOf(req, b);
  const text = fakeReply(model, lastUserInput(input));
  const inTokens = inputTokenCount(b);
  const outTokens = tokens(text);
  const id = nextId('resp_');
  if (b['store'] !== false) storeResponse(id);
  const itemId = nextId('msg_');
  const part = { type: 'output_text', annotations: [], logprobs: [], text };
  const item = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
  const response = (status: string, output: Json[], usage: Json | null): Json => ({
    id,
    object: 'response',
    created_at: now(),
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: b['instructions'] ?? null,
    max_output_tokens: b['max_output_tokens'] ?? null,
    metadata: b['metadata'] ?? {},
    model,
    output,
    parallel_tool_calls: true,
    previous_response_id: b['previous_response_id'] ?? null,
    reasoning: { effort: null, summary: null },
    store: b['store'] ?? true,
    temperature: b['temperature'] ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: b['tools'] ?? [],
    top_p: b['top_p'] ?? 1,
    truncation: 'disabled',
    usage,
    user: null,
  });
  const usage = {
    input_tokens: inTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inTokens + outTokens,
  };
  if (b['stream'] !== true) {
    sendJson(res, 200, response('completed', [item], usage));
    return;
  }
  let seq = 0;
  const ev = (type: string, payload: Json): { event: string; data: Json } => ({
    event: type,
    data: { type, sequence_number: seq++, ...payload },
  });
  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  const events = [
    ev('response.created', { response: response('in_progress', [], null) }),
    ev('response.in_progress', { response: response('in_progress', [], null) }),
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }),
    ev('response.content_part.added', { ...at, part: { ...part, text: '' } }),
    ...words(text).map((delta) => ev('response.output_text.delta', { ...at, delta, logprobs: [] })),
    ev('response.output_text.done', { ...at, text, logprobs: [] }),
    ev('response.content_part.done', { ...at, part }),
    ev('response.output_item.done', { output_index: 0, item }),
    ev('response.completed', { response: response('completed', [item], usage) }),
  ];
  await writeSse(res, state, events, false);
}

function models(_req: RecordedRequest, res: ServerResponse): void {
  sendJson(res, 200, {
    object: 'list',
    data: FAKE_MODELS.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })),
  });
}
