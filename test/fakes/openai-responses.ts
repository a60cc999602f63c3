// The fake OpenAI upstream's Responses API (openai.ts routes to it): `POST .../responses` (+ stream) and
// `.../responses/input_tokens`. Stored responses can be continued (`previous_response_id`); an id the fakes never
// stored answers OpenAI's 404.
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
