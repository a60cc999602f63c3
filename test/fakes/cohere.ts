// Fake Cohere upstream: /v2/chat (JSON, SSE when asked with `accept: text/event-stream`, NDJSON otherwise),
// /v2/embed, /v2/rerank, /v1/models and /v1/tokenize. Answers echo the last user text and call a tool when tools
// are offered; rerank scores documents by the words they share with the query.
import type { ServerResponse } from 'node:http';
import { FakeServer, type RecordedRequest, sendJson, sendSse, sleep } from './server.ts';

type Json = Record<string, unknown>;

/** Tokens the real API adds for its chat template; `tokens` counts them, `billed_units` does not. */
const TEMPLATE_TOKENS = 7;

export class CohereFake extends FakeServer {
  /** When set, calls must carry `Authorization: Bearer <apiKey>` (otherwise any bearer token passes). */
  apiKey: string | undefined;
  /** Pause between streamed events. */
  streamGapMs = 0;
  /** Streams whose last event has not been written yet (lets tests see that chunks arrive before the end). */
  streamsOpen = 0;
  models = ['command-a-03-2025', 'command-r7b-12-2024', 'embed-v4.0'];
  modelsPageSize = 50;
  /** Fields added to every chat, embed and rerank answer (as a newer API version would send). */
  extraAnswerFields: Json = {};
  /** When set, an SSE chat stream stops after this many events, without message-end (a cut-off upstream). */
  cutStreamAfter: number | undefined;

  constructor() {
    const ref: { self?: CohereFake } = {};
    const self = (): CohereFake => ref.self!;
    const guarded =
      (h: (fake: CohereFake, req: RecordedRequest, res: ServerResponse) => void | Promise<void>) =>
      (req: RecordedRequest, res: ServerResponse) =>
        authorized(self(), req, res) ? h(self(), req, res) : undefined;
    super([
      { method: 'POST', path: '/v2/chat', handler: guarded(chat) },
      { method: 'POST', path: '/v2/embed', handler: guarded(embed) },
      { method: 'POST', path: '/v2/rerank', handler: guarded(rerank) },
      { method: 'GET', path: '/v1/models', handler: guarded(listModels) },
      { method: 'POST', path: '/v1/tokenize', handler: guarded(tokenize) },
    ]);
    ref.self = this;
  }

  override reset(): void {
    super.reset();
    this.extraAnswerFields = {};
    this.cutStreamAfter = undefined;
  }
}

export function createCohereFake(): CohereFake {
  return new CohereFake();
}

function authorized(fake: CohereFake, req: RecordedRequest, res: ServerResponse): boolean {
  const tok = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!tok || (fake.apiKey !== undefined && tok !== fake.apiKey)) {
    sendJson(res, 401, { id: 'err-auth', message: 'invalid api token' });
    return false;
  }
  return true;
}

function bad(res: ServerResponse, message: string): void {
  sendJson(res, 400, { id: 'err-bad', message });
}

async function chat(fake: CohereFake, req: RecordedRequest, res: ServerResponse): Promise<void> {
  const body = isObj(req.json) ? req.json : {};
  if (typeof body['model'] !== 'string') return bad(res, 'invalid request: model must be specified');
  const messages = Array.isArray(body['messages']) ? body['messages'].filter(isObj) : [];
  if (messages.length === 0) return bad(res, 'invalid request: messages must not be empty');
  for (const m of messages) {
    if (!['system', 'user', 'assistant', 'tool'].includes(String(m['role']))) {
      return bad(res, `invalid request: unknown role ${String(m['role'])}`);
    }
    if (m['role'] === 'tool' && typeof m['tool_call_id'] !== 'string') {
      return bad(res, 'invalid request: tool messages need a tool_call_id');
    }
  }
  const r = reply(body, messages);
  if (body['stream'] !== true) return sendJson(res, 200, { ...r.whole, ...fake.extraAnswerFields });
  if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
    // The real API streams newline-delimited JSON unless SSE is asked for.
    res.writeHead(200, { 'content-type': 'application/stream+json' });
    for (const e of r.events) {
      res.write(`${JSON.stringify(e)}\n`);
      if (fake.streamGapMs) await sleep(fake.streamGapMs);
    }
    res.end();
    return;
  }
  fake.streamsOpen += 1;
  try {
    await sendSse(
      res,
      r.events.slice(0, fake.cutStreamAfter).map((data) => ({ event: String(data['type']), data })),
      { gapMs: fake.streamGapMs },
    );
  } finally {
    fake.streamsOpen -= 1;
  }
}

interface Reply {
  whole: Json;
  events: Json[];
}

function reply(body: Json, messages: Json[]): Reply {
  const id = `c-${Math.random().toString(36).slice(2, 10)}`;
  const last = messages.at(-1);
  const lastUser = [...messages].reverse().find((m) => m['role'] === 'user');
  const userText = lastUser ? textOf(lastUser['content']) : '';
  const tools = (Array.isArray(body['tools']) ? body['tools'] : []).filter(isObj);
  const thinking = isObj(body['thinking']) && body['thinking']['type'] === 'enabled';
  const inputTokens = messages.reduce<number>((n, m) => n + words(textOf(m['content'])), 0);
  const events: Json[] = [
    {
      id,
      type: 'message-start',
      delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
    },
  ];
  const content: Json[] = [];
  let toolPlan: string | undefined;
  let toolCalls: Json[] | undefined;
  let finish = 'COMPLETE';
  let outputTokens: number;

  if (thinking) {
    const thought = 'Thinking it over.';
    content.push({ type: 'thinking', thinking: thought });
    events.push(
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'thinking', thinking: '' } } } },
      { type: 'content-delta', index: 0, delta: { message: { content: { thinking: thought } } } },
      { type: 'content-end', index: 0 },
    );
  }
  if (tools.length > 0 && last?.['role'] !== 'tool' && body['tool_choice'] !== 'NONE') {
    const fn = isObj(tools[0]!['function']) ? tools[0]!['function'] : {};
    const name = String(fn['name']);
    const args = JSON.stringify(argsFor(fn, userText));
    toolPlan = `I will call ${name}.`;
    toolCalls = [{ id: `${name}_${id}`, type: 'function', function: { name, arguments: args } }];
    finish = 'TOOL_CALL';
    outputTokens = 5;
    const half = Math.ceil(args.length / 2);
    events.push(
      ...toolPlan.split(/(?<= )/).map((t) => ({ type: 'tool-plan-delta', delta: { message: { tool_plan: t } } })),
      {
        type: 'tool-call-start',
        index: 0,
        delta: {
          message: { tool_calls: { id: toolCalls[0]!['id'], type: 'function', function: { name, arguments: '' } } },
        },
      },
      {
        type: 'tool-call-delta',
        index: 0,
        delta: { message: { tool_calls: { function: { arguments: args.slice(0, half) } } } },
      },
      {
        type: 'tool-call-delta',
        index: 0,
        delta: { message: { tool_calls: { function: { arguments: args.slice(half) } } } },
      },
      { type: 'tool-call-end', index: 0 },
    );
  } else {
    const format = isObj(body['response_format']) ? body['response_format'] : {};
    let text =
      last?.['role'] === 'tool'
        ? `tool said: ${textOf(last['content'])}`
        : format['type'] === 'json_object'
          ? JSON.stringify({ echo: userText })
          : `echo: ${userText}`;
    let pieces = text.split(/(?<= )/);
    const max = body['max_tokens'];
    if (typeof max === 'number' && pieces.length > max) {
      pieces = pieces.slice(0, max);
      text = pieces.join('');
      finish = 'MAX_TOKENS';
    }
    outputTokens = pieces.length;
    const index = content.length;
    content.push({ type: 'text', text });
    events.push(
      { type: 'content-start', index, delta: { message: { content: { type: 'text', text: '' } } } },
      ...pieces.map((t) => ({ type: 'content-delta', index, delta: { message: { content: { text: t } } } })),
      { type: 'content-end', index },
    );
  }
  const usage = {
    billed_units: { input_tokens: inputTokens, output_tokens: outputTokens },
    tokens: { input_tokens: inputTokens + TEMPLATE_TOKENS, output_tokens: outputTokens + 1 },
  };
  events.push({ type: 'message-end', delta: { finish_reason: finish, usage } });
  const message: Json = { role: 'assistant', content };
  if (toolPlan) message['tool_plan'] = toolPlan;
  if (toolCalls) message['tool_calls'] = toolCalls;
  return { whole: { id, finish_reason: finish, message, usage }, events };
}

function argsFor(fn: Json, userText: string): Json {
  const params = isObj(fn['parameters']) ? fn['parameters'] : {};
  const props = isObj(params['properties']) ? params['properties'] : {};
  const args: Json = {};
  for (const [name, p] of Object.entries(props)) if (isObj(p) && p['type'] === 'string') args[name] = userText;
  return args;
}

function embed(fake: CohereFake, req: RecordedRequest, res: ServerResponse) {
  const body = isObj(req.json) ? req.json : {};
  if (typeof body['model'] !== 'string') return bad(res, 'invalid request: model must be specified');
  const texts = Array.isArray(body['texts']) ? body['texts'].filter((t): t is string => typeof t === 'string') : [];
  if (texts.length === 0) return bad(res, 'invalid request: texts must not be empty');
  const types = ['search_document', 'search_query', 'classification', 'clustering', 'image'];
  if (!types.includes(String(body['input_type']))) {
    return bad(res, 'invalid request: valid input_type must be provided with the provided model');
  }
  const dims = typeof body['output_dimension'] === 'number' ? body['output_dimension'] : 8;
  const kinds = Array.isArray(body['embedding_types']) ? body['embedding_types'] : ['float'];
  const embeddings: Json = {};
  if (kinds.includes('float')) embeddings['float'] = texts.map((t) => vector(t, dims));
  if (kinds.includes('int8')) {
    embeddings['int8'] = texts.map((t) => vector(t, dims).map((x) => Math.round(x * 100) - 128));
  }
  sendJson(res, 200, {
    ...fake.extraAnswerFields,
    id: `e-${Math.random().toString(36).slice(2, 10)}`,
    embeddings,
    texts,
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: texts.reduce((n, t) => n + words(t), 0) } },
    response_type: 'embeddings_by_type',
  });
}

/** Cohere's `/v2/rerank`: results by descending score; one search unit per 100 documents. */
function rerank(fake: CohereFake, req: RecordedRequest, res: ServerResponse) {
  const body = isObj(req.json) ? req.json : {};
  if (typeof body['model'] !== 'string') return bad(res, 'invalid request: model must be specified');
  if (typeof body['query'] !== 'string') return bad(res, 'invalid request: query must be a string');
  const docs = Array.isArray(body['documents']) ? body['documents'] : [];
  if (docs.length === 0 || !docs.every((d) => typeof d === 'string')) {
    return bad(res, 'invalid request: documents must be a non-empty list of strings');
  }
  const query = new Set(body['query'].toLowerCase().split(/\W+/).filter(Boolean));
  const scored = docs.map((d, index) => {
    const shared = String(d)
      .toLowerCase()
      .split(/\W+/)
      .filter((w) => query.has(w)).length;
    return { index, relevance_score: Math.round((shared / (shared + 1)) * 1000) / 1000 };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const topN = typeof body['top_n'] === 'number' ? body['top_n'] : scored.length;
  sendJson(res, 200, {
    id: `r-${Math.random().toString(36).slice(2, 10)}`,
    results: scored.slice(0, topN),
    meta: { api_version: { version: '2' }, billed_units: { search_units: Math.ceil(docs.length / 100) } },
    ...fake.extraAnswerFields,
  });
}

function listModels(fake: CohereFake, req: RecordedRequest, res: ServerResponse): void {
  const q = new URL(req.url, 'http://x').searchParams;
  const size = Math.min(Number(q.get('page_size') ?? 20) || 20, fake.modelsPageSize);
  const start = Number(q.get('page_token') ?? 0) || 0;
  const next = start + size < fake.models.length ? String(start + size) : undefined;
  sendJson(res, 200, {
    models: fake.models.slice(start, start + size).map((name) => ({
      name,
      endpoints: name.startsWith('embed') ? ['embed'] : ['chat'],
      finetuned: false,
      context_length: 128000,
    })),
    ...(next ? { next_page_token: next } : {}),
  });
}

function tokenize(_fake: CohereFake, req: RecordedRequest, res: ServerResponse) {
  const body = isObj(req.json) ? req.json : {};
  if (typeof body['text'] !== 'string' || typeof body['model'] !== 'string') {
    return bad(res, 'invalid request: text and model are required');
  }
  const strings = body['text'].split(/\s+/).filter(Boolean);
  sendJson(res, 200, {
    tokens: strings.map((_, i) => 1000 + i),
    token_strings: strings,
    meta: { api_version: { version: '1' } },
  });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObj)
    .map((p) => (p['type'] === 'text' && typeof p['text'] === 'string' ? p['text'] : ''))
    .join('');
}

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function vector(text: string, dims: number): number[] {
  return Array.from({ length: dims }, (_, i) => ((text.charCodeAt(i % Math.max(text.length, 1)) || 0) + i) / 1000);
}

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
