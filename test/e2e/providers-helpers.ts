// Shared pieces of the per-provider end-to-end tests (providers-*.test.ts): the official openai SDK against a
// real gateway, stream collectors, one tool, one image, one JSON schema, plain-fetch calls for /v1/count_tokens,
// and the steps every provider file repeats (streams, tool turns, Responses, unsupported operations).
import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { FunctionTool, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { FakeServer, RecordedRequest } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';

export type APIError = InstanceType<typeof OpenAI.APIError>;
type Json = Record<string, unknown>;

export function sdkClient(gw: TestGateway): OpenAI {
  return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
}

/** The SDK error a call ends in; fails the test when the call succeeds. */
export async function apiFailure(p: Promise<unknown>): Promise<APIError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(OpenAI.APIError);
    return err as APIError; // checked by the expect just above
  }
  throw new Error('expected the request to fail');
}

/** Asserts the call fails with the gateway's 400 `unsupported_operation`. */
export async function expectUnsupported(p: Promise<unknown>): Promise<void> {
  const err = await apiFailure(p);
  expect(err.status).toBe(400);
  expect(err.code).toBe('unsupported_operation');
}

/** The gateway's `extra_fields`, which the SDK types do not know about. */
export function extraFields(value: object): Json | undefined {
  const extra: unknown = Reflect.get(value, 'extra_fields');
  return extra && typeof extra === 'object' ? (extra as Json) : undefined; // a JSON object from the wire
}

/** The parsed JSON body the fake upstream received (an empty object when it was not JSON). */
export function upstreamJson(req: RecordedRequest): Json {
  const j = req.json;
  return j && typeof j === 'object' && !Array.isArray(j) ? (j as Json) : {}; // a parsed JSON object
}

export interface StreamedToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface StreamedChat {
  text: string;
  finishReason: string | null;
  usage: CompletionUsage | null;
  toolCalls: StreamedToolCall[];
  chunks: number;
  /** extra_fields of the last chunk that carried them. */
  extra: Json | undefined;
}

/** Drains an SDK chat stream (the iterator must finish on its own) and assembles what a client would show. */
export async function collectChat(stream: AsyncIterable<ChatCompletionChunk>): Promise<StreamedChat> {
  const out: StreamedChat = { text: '', finishReason: null, usage: null, toolCalls: [], chunks: 0, extra: undefined };
  for await (const chunk of stream) {
    out.chunks += 1;
    out.extra = extraFields(chunk) ?? out.extra;
    if (chunk.usage) out.usage = chunk.usage;
    for (const choice of chunk.choices) {
      out.text += choice.delta.content ?? '';
      if (choice.finish_reason) out.finishReason = choice.finish_reason;
      for (const tc of choice.delta.tool_calls ?? []) {
        const slot = out.toolCalls[tc.index] ?? { id: '', name: '', arguments: '' };
        out.toolCalls[tc.index] = slot;
        if (tc.id) slot.id = tc.id;
        if (tc.function?.name) slot.name += tc.function.name;
        if (tc.function?.arguments) slot.arguments += tc.function.arguments;
      }
    }
  }
  return out;
}

export interface StreamedResponse {
  text: string;
  types: string[];
  completedText: string | undefined;
  completedStatus: string | undefined;
}

/** Drains a Responses event stream: the text deltas and the `response.completed` event. */
export async function collectResponses(stream: AsyncIterable<ResponseStreamEvent>): Promise<StreamedResponse> {
  const out: StreamedResponse = { text: '', types: [], completedText: undefined, completedStatus: undefined };
  for await (const ev of stream) {
    out.types.push(ev.type);
    if (ev.type === 'response.output_text.delta') out.text += ev.delta;
    if (ev.type === 'response.completed') {
      out.completedStatus = ev.response.status;
      out.completedText = ev.response.output
        .flatMap((item) => (item.type === 'message' ? item.content : []))
        .map((part) => (part.type === 'output_text' ? part.text : ''))
        .join('');
    }
  }
  return out;
}

export const WEATHER_TOOL: ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name' } },
      required: ['city'],
    },
  },
};

/** The same function as a Responses API tool. */
export const RESPONSES_WEATHER_TOOL: FunctionTool = {
  type: 'function',
  name: WEATHER_TOOL.function.name,
  description: WEATHER_TOOL.function.description ?? null,
  parameters: WEATHER_TOOL.function.parameters ?? null,
  strict: false,
};

export const TOOL_QUESTION = 'What is the weather in Paris?';
export const TOOL_RESULT = '{"temperature_c":21,"sky":"sunny"}';

/** The first tool call of an answer, checked to be a function call with JSON-object arguments. */
export function firstFunctionCall(answer: ChatCompletion): { id: string; name: string; args: Json } {
  const call = answer.choices[0]?.message.tool_calls?.[0];
  if (call?.type !== 'function') throw new Error('the answer has no function tool call');
  const args: unknown = JSON.parse(call.function.arguments);
  expect(args).toBeTypeOf('object');
  return { id: call.id, name: call.function.name, args: args as Json }; // checked to be an object just above
}

/**
 * The second turn as an SDK user writes it: the question, the assistant message exactly as the gateway returned
 * it (provider extras such as Gemini's thought signature included), and the tool's result for its first call.
 */
export function toolResultTurn(first: ChatCompletion): ChatCompletionMessageParam[] {
  const message = first.choices[0]?.message;
  if (!message) throw new Error('the answer has no message');
  const call = firstFunctionCall(first);
  return [
    { role: 'user', content: TOOL_QUESTION },
    message,
    { role: 'tool', tool_call_id: call.id, content: TOOL_RESULT },
  ];
}

/** A 1x1 PNG. */
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
export const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;

export const IMAGE_MESSAGE: ChatCompletionMessageParam = {
  role: 'user',
  content: [
    { type: 'text', text: 'What is in this picture?' },
    { type: 'image_url', image_url: { url: PNG_DATA_URL } },
  ],
};

export const PERSON_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' } },
  required: ['name', 'age'],
  additionalProperties: false,
};

export const PERSON_FORMAT = {
  type: 'json_schema',
  json_schema: { name: 'person', strict: true, schema: PERSON_SCHEMA },
} as const;

/** POST /v1/count_tokens with the inference token (the SDK has no method for it). */
export async function countTokens(gw: TestGateway, body: Json): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${gw.url}/v1/count_tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json: unknown = await res.json();
  expect(json).toBeTypeOf('object');
  return { status: res.status, json: json as Json }; // checked to be an object just above
}

/** Model ids the gateway lists, through the SDK's paginator. */
export async function listedModelIds(client: OpenAI): Promise<string[]> {
  const ids: string[] = [];
  for await (const m of client.models.list()) ids.push(m.id);
  return ids;
}

/** The chat most cases ask: a system prompt and one user turn. */
export const ASK: ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'hello there' },
];

/** A provider's config that sends it to a fake upstream at `url`, without retries, with these keys. */
export function atFake(url: string, ...keys: Json[]): Json {
  return { network_config: { base_url: url, max_retries: 0 }, keys };
}

/** The gateway a provider test file runs against, ready from its beforeAll on. */
export interface ProviderGateway {
  readonly gw: TestGateway;
  readonly client: OpenAI;
}

/**
 * Registers a provider file's hooks: `start` starts its fakes and returns the gateway's `providers` config; the
 * fakes (read when needed, so a half-finished start still gets stopped) are reset before each test and stopped last.
 */
export function useProviderGateway(setup: {
  fakes: () => (FakeServer | undefined)[];
  start: () => Promise<Record<string, unknown>>;
}): ProviderGateway {
  let gw: TestGateway | undefined;
  let client: OpenAI | undefined;
  beforeAll(async () => {
    const providers = await setup.start();
    gw = await startTestGateway({ config: { providers } });
    client = sdkClient(gw);
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all(setup.fakes().map((f) => f?.stop()));
  });
  beforeEach(() => {
    for (const f of setup.fakes()) f?.reset();
  });
  return {
    get gw(): TestGateway {
      if (!gw) throw new Error('the gateway has not started');
      return gw;
    },
    get client(): OpenAI {
      if (!client) throw new Error('the gateway has not started');
      return client;
    },
  };
}

/**
 * Asks ASK whole, then streamed with include_usage: the same text and a usage chunk. With `plainToo`, streams once
 * more without include_usage: the same text and no usage chunk (so the upstream's last request is that stream).
 */
export async function expectStreamMatches(
  client: OpenAI,
  model: string,
  opts: { plainToo: boolean },
): Promise<{ whole: ChatCompletion; streamed: StreamedChat }> {
  const whole = await client.chat.completions.create({ model, messages: ASK });
  const streamed = await collectChat(
    await client.chat.completions.create({
      model,
      messages: ASK,
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  expect(streamed.text).toBe(whole.choices[0]?.message.content ?? 'no text');
  expect(streamed.usage).not.toBeNull();
  if (opts.plainToo) {
    const plain = await collectChat(await client.chat.completions.create({ model, messages: ASK, stream: true }));
    expect(plain.text).toBe(streamed.text);
    expect(plain.usage).toBeNull();
  }
  return { whole, streamed };
}

/** First tool turn: TOOL_QUESTION with WEATHER_TOOL must end in a tool call; returns the answer and its first call. */
export async function askWithTool(
  client: OpenAI,
  model: string,
): Promise<{ first: ChatCompletion; call: ReturnType<typeof firstFunctionCall> }> {
  const first = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: TOOL_QUESTION }],
    tools: [WEATHER_TOOL],
  });
  expect(first.choices[0]?.finish_reason).toBe('tool_calls');
  return { first, call: firstFunctionCall(first) };
}

/** Second tool turn: the first answer and TOOL_RESULT sent back (see toolResultTurn). */
export function answerToolResult(client: OpenAI, model: string, first: ChatCompletion): Promise<ChatCompletion> {
  return client.chat.completions.create({ model, messages: toolResultTurn(first), tools: [WEATHER_TOOL] });
}

/** Streams TOOL_QUESTION with WEATHER_TOOL: exactly one get_weather call with `args`, returned for id checks. */
export async function streamOneToolCall(client: OpenAI, model: string, args: Json): Promise<StreamedToolCall> {
  const streamed = await collectChat(
    await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: TOOL_QUESTION }],
      tools: [WEATHER_TOOL],
      stream: true,
    }),
  );
  expect(streamed.finishReason).toBe('tool_calls');
  expect(streamed.toolCalls).toHaveLength(1);
  expect(streamed.toolCalls[0]?.name).toBe('get_weather');
  expect(JSON.parse(streamed.toolCalls[0]?.arguments ?? '')).toEqual(args);
  const call = streamed.toolCalls[0];
  if (!call) throw new Error('no streamed tool call');
  return call;
}

/** Sends IMAGE_MESSAGE with PERSON_FORMAT; what the upstream received is the caller's to check. */
export function askImageWithFormat(client: OpenAI, model: string): Promise<ChatCompletion> {
  return client.chat.completions.create({ model, messages: [IMAGE_MESSAGE], response_format: PERSON_FORMAT });
}

/** Streams `input` through the Responses API: the deltas and the completed response must both carry `text`. */
export async function expectResponsesStream(
  client: OpenAI,
  model: string,
  input: string,
  text: string,
): Promise<StreamedResponse> {
  const streamed = await collectResponses(await client.responses.create({ model, input, stream: true }));
  expect(streamed.text).toBe(text);
  expect(streamed.completedText).toBe(text);
  return streamed;
}

/**
 * A Responses function call round trip: TOOL_QUESTION must yield a get_weather function_call with `args`; its
 * output (TOOL_RESULT) goes back as function_call_output. Returns the call id and the second answer's text.
 */
export async function responsesToolRoundTrip(
  client: OpenAI,
  model: string,
  args: Json,
): Promise<{ callId: string; text: string }> {
  const first = await client.responses.create({ model, input: TOOL_QUESTION, tools: [RESPONSES_WEATHER_TOOL] });
  const call = first.output.find((o) => o.type === 'function_call');
  if (call?.type !== 'function_call') throw new Error('no function_call output item');
  expect(call.name).toBe('get_weather');
  expect(JSON.parse(call.arguments)).toEqual(args);
  const second = await client.responses.create({
    model,
    input: [
      { role: 'user', content: TOOL_QUESTION },
      call,
      { type: 'function_call_output', call_id: call.call_id, output: TOOL_RESULT },
    ],
    tools: [RESPONSES_WEATHER_TOOL],
  });
  return { callId: call.call_id, text: second.output_text };
}

/** Text completions answer 400 unsupported_operation. */
export function expectNoTextCompletions(client: OpenAI, model: string): Promise<void> {
  return expectUnsupported(client.completions.create({ model, prompt: 'x' }));
}

/** Embeddings answer 400 unsupported_operation. */
export function expectNoEmbeddings(client: OpenAI, model: string): Promise<void> {
  return expectUnsupported(client.embeddings.create({ model, input: 'x' }));
}

/** /v1/count_tokens for `messages` answers 400 unsupported_operation. */
export async function expectNoTokenCounting(
  gw: TestGateway,
  model: string,
  messages: ChatCompletionMessageParam[],
): Promise<void> {
  const { status, json } = await countTokens(gw, { model, messages });
  expect(status).toBe(400);
  expect(json).toMatchObject({ error: { code: 'unsupported_operation' } });
}
