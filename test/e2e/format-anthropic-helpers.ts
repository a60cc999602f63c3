// Shared pieces of the `/anthropic` end-to-end tests: the official Anthropic SDK pointed at a gateway mount, one
// tool, the two turns of a tool round trip, a raw-fetch call for bodies the SDK would not send, and error checks.
import Anthropic from '@anthropic-ai/sdk';
import type { Message, MessageParam, Tool, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { expect } from 'vitest';
import { INFERENCE_TOKEN, type TestGateway } from '../harness/gateway.ts';

export type Json = Record<string, unknown>;

/** The SDK as an application configures it: a base URL and a key (sent as `x-api-key`), nothing else. */
export function anthropicClient(gw: TestGateway, apiKey = INFERENCE_TOKEN, mount = '/anthropic'): Anthropic {
  return new Anthropic({ baseURL: `${gw.url}${mount}`, apiKey, maxRetries: 0 });
}

export const WEATHER: Tool = {
  name: 'get_weather',
  description: 'Current weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

export const QUESTION = 'What is the weather in Paris?';
export const RESULT = '{"temperature_c":21,"sky":"sunny"}';

/** The tool_use block of an answer (the test fails when there is none). */
export function toolUseOf(m: Message): ToolUseBlock {
  const block = m.content.find((b): b is ToolUseBlock => b.type === 'tool_use');
  if (!block) throw new Error(`no tool_use block in ${JSON.stringify(m.content)}`);
  return block;
}

/** The second turn: the question, the assistant's answer as returned, and the tool's result for its call. */
export function resultTurn(first: Message): MessageParam[] {
  const call = toolUseOf(first);
  return [
    { role: 'user', content: QUESTION },
    { role: 'assistant', content: first.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: RESULT }] },
  ];
}

export function textOf(m: Message): string {
  return m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** The gateway's `extra_fields`, which the SDK types do not know about. */
export function extraOf(value: object): Json | undefined {
  const extra: unknown = Reflect.get(value, 'extra_fields');
  return extra && typeof extra === 'object' ? (extra as Json) : undefined; // a JSON object from the wire
}

export interface RawCall {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
}

/** POST to a gateway path with `x-api-key` and a JSON body (or a raw string body as is). */
export async function post(
  gw: TestGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'x-api-key': INFERENCE_TOKEN },
): Promise<RawCall> {
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: Json = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') json = parsed as Json; // a JSON object answer
  } catch {
    // A stream or a non-JSON answer: the text is there.
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Anthropic's error body with this status and error type; returns its message. */
export function expectAnthropicError(call: RawCall, status: number, type: string): string {
  expect(call.status, call.text).toBe(status);
  expect(call.json['type']).toBe('error');
  const error = call.json['error'] as Json; // Anthropic's error object
  expect(error['type']).toBe(type);
  expect(typeof error['message']).toBe('string');
  return String(error['message']);
}

/** The SDK error a call ends in; fails the test when the call succeeds. */
export async function sdkFailure(p: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(Anthropic.APIError);
    return err as InstanceType<typeof Anthropic.APIError>; // checked just above
  }
  throw new Error('expected the request to fail');
}

/** The `error` object of Anthropic's error body as the SDK kept it. */
export function errorTypeOf(err: InstanceType<typeof Anthropic.APIError>): unknown {
  const body: unknown = err.error;
  const inner = body && typeof body === 'object' ? Reflect.get(body, 'error') : undefined;
  return inner && typeof inner === 'object' ? Reflect.get(inner, 'type') : undefined;
}

/** Parsed SSE events of a raw streamed answer. */
export function sseEvents(text: string): { event: string | undefined; data: Json }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines.find((l) => l.startsWith('data: '))?.slice(6) ?? '{}';
      return { event, data: JSON.parse(data) as Json }; // each data line is a JSON object
    });
}
