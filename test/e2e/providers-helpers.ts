// Shared pieces of the per-provider end-to-end tests (providers-*.test.ts): the official openai SDK against a
// real gateway, stream collectors, one tool, one image, one JSON schema, and plain-fetch calls for /v1/count_tokens.
import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { FunctionTool, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { expect } from 'vitest';
import type { RecordedRequest } from '../fakes/server.ts';
import { INFERENCE_TOKEN, type TestGateway } from '../harness/gateway.ts';

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
