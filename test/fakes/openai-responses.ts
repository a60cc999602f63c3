// The fake OpenAI upstream's Responses API (openai.ts routes to it): `POST .../responses` (+ stream) and
// `.../responses/input_tokens`. Stored responses can be continued (`previous_response_id`) and their output items
// named (`item_reference`, an id-only reasoning item); an id the fakes never stored answers OpenAI's 404.
import type { ServerResponse } from 'node:http';
import {
  body,
  fakeReply,
  invalid,
  type Json,
  modelOf,
  nextId,
  now,
  type OpenAIFakeStreamState,
  objects,
  textOfContent,
  tokens,
  words,
  writeSse,
} from './openai-wire.ts';
import { type RecordedRequest, sendJson } from './server.ts';

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

export function inputTokens(req: RecordedRequest, res: ServerResponse): void {
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

/**
 * Output items of the stored responses, by id, as the organisation holds them: an input `item_reference` (or a
 * reasoning item without its encrypted content) is resolved from here. Bounded like the responses.
 */
const storedItems = new Map<string, Json>();

function storeItems(items: Json[]): void {
  for (const item of items) {
    if (typeof item['id'] === 'string') storedItems.set(item['id'], item);
    if (storedItems.size > MAX_STORED_RESPONSES) storedItems.delete(storedItems.keys().next().value!);
  }
}

/** The id OpenAI resolves an input item by: an item_reference (its type may be left out), an id-only reasoning item. */
function resolvedId(item: Json): string | undefined {
  const id = item['id'];
  if (typeof id !== 'string') return undefined;
  const type = item['type'];
  if (type === 'item_reference' || ((type === undefined || type === null) && item['role'] === undefined)) return id;
  if (type === 'reasoning' && typeof item['encrypted_content'] !== 'string') return id;
  return undefined;
}

/**
 * The input with its referenced items replaced by the stored ones, or OpenAI's 404 (answered, undefined) for an id
 * it does not hold.
 */
function resolveItems(res: ServerResponse, input: unknown): unknown {
  if (!Array.isArray(input)) return input;
  const out: Json[] = [];
  for (const item of objects(input)) {
    const id = resolvedId(item);
    if (id === undefined) {
      out.push(item);
      continue;
    }
    const stored = storedItems.get(id);
    if (!stored) {
      sendJson(res, 404, {
        error: {
          message: `Item with id '${id}' not found.`,
          type: 'invalid_request_error',
          param: 'input',
          code: null,
        },
      });
      return undefined;
    }
    out.push(stored);
  }
  return out;
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

export async function responses(
  req: RecordedRequest,
  res: ServerResponse,
  state: OpenAIFakeStreamState,
): Promise<void> {
  const b = body(req);
  const input = b['input'];
  if (invalid(res, typeof input === 'string' || Array.isArray(input), "Missing required parameter: 'input'.", 'input'))
    return;
  if (unknownPrevious(res, b['previous_response_id'])) return;
  const resolved = resolveItems(res, input);
  if (resolved === undefined) return;
  const model = modelOf(req, b);
  const text = fakeReply(model, lastUserInput(resolved));
  const inTokens = inputTokenCount({ ...b, input: resolved });
  const outTokens = tokens(text);
  const id = nextId('resp_');
  const itemId = nextId('msg_');
  const part = { type: 'output_text', annotations: [], logprobs: [], text };
  const item = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
  // A reasoning model's answer (asked for with `reasoning`) starts with a reasoning item, as OpenAI's does.
  const reasoning = b['reasoning'] ? { id: nextId('rs_'), type: 'reasoning', summary: [] } : undefined;
  const output = reasoning ? [reasoning, item] : [item];
  if (b['store'] !== false) {
    storeResponse(id);
    storeItems(output);
  }
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
    sendJson(res, 200, response('completed', output, usage));
    return;
  }
  let seq = 0;
  const ev = (type: string, payload: Json): { event: string; data: Json } => ({
    event: type,
    data: { type, sequence_number: seq++, ...payload },
  });
  const index = output.length - 1;
  const at = { item_id: itemId, output_index: index, content_index: 0 };
  const events = [
    ev('response.created', { response: response('in_progress', [], null) }),
    ev('response.in_progress', { response: response('in_progress', [], null) }),
    ...(reasoning
      ? [
          ev('response.output_item.added', { output_index: 0, item: reasoning }),
          ev('response.output_item.done', { output_index: 0, item: reasoning }),
        ]
      : []),
    ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } }),
    ev('response.content_part.added', { ...at, part: { ...part, text: '' } }),
    ...words(text).map((delta) => ev('response.output_text.delta', { ...at, delta, logprobs: [] })),
    ev('response.output_text.done', { ...at, text, logprobs: [] }),
    ev('response.content_part.done', { ...at, part }),
    ev('response.output_item.done', { output_index: index, item }),
    ev('response.completed', { response: response('completed', output, usage) }),
  ];
  await writeSse(res, state, events, false);
}
