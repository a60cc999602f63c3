// Shared pieces of the `/cloudconv` end-to-end tests: the official AWS SDK (BedrockRuntimeClient) pointed at a
// gateway mount with a bearer token, one tool, the two turns of a tool round trip, a raw-fetch call for bodies
// the SDK would not send, a decoder for the event-stream answers, and error checks.
import {
  BedrockRuntimeClient,
  type ContentBlock,
  type ConverseResponse,
  type ConverseStreamOutput,
  type Message,
  type Tool,
} from '@aws-sdk/client-bedrock-runtime';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { expect } from 'vitest';
import { INFERENCE_TOKEN, type TestGateway } from '../harness/gateway.ts';

export type Json = Record<string, unknown>;

/** The SDK as an application configures it for a bearer key: endpoint, region, token; no retries. */
export function bedrockClient(gw: TestGateway, token = INFERENCE_TOKEN, mount = '/cloudconv'): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    endpoint: `${gw.url}${mount}`,
    region: 'us-east-1',
    token: { token },
    authSchemePreference: ['httpBearerAuth'],
    requestHandler: new NodeHttpHandler(),
    maxAttempts: 1,
  });
}

export const WEATHER: Tool = {
  toolSpec: {
    name: 'get_weather',
    description: 'Current weather in a city',
    inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  },
};

export const QUESTION = 'What is the weather in Paris?';
export const RESULT = { temperature_c: 21, sky: 'sunny' };

export function textOf(res: ConverseResponse): string {
  return (res.output?.message?.content ?? []).map((b) => b.text ?? '').join('');
}

/** The toolUse block of an answer (the test fails when there is none). */
export function toolUseOf(res: ConverseResponse): NonNullable<ContentBlock['toolUse']> {
  const block = res.output?.message?.content?.find((b) => b.toolUse)?.toolUse;
  if (!block) throw new Error(`no toolUse block in ${JSON.stringify(res.output)}`);
  return block;
}

/** The second turn: the question, the assistant's answer as returned, and the tool's result for its call. */
export function resultTurn(first: ConverseResponse): Message[] {
  const call = toolUseOf(first);
  const answer = first.output?.message;
  if (!answer) throw new Error('no answer message');
  return [
    { role: 'user', content: [{ text: QUESTION }] },
    answer,
    { role: 'user', content: [{ toolResult: { toolUseId: call.toolUseId, content: [{ json: RESULT }] } }] },
  ];
}

export interface StreamedConverse {
  text: string;
  reasoning: string;
  signature: string;
  stopReason: string | undefined;
  usage: Json | undefined;
  tools: { toolUseId: string; name: string; input: string }[];
  events: string[];
}

/** Drains an SDK ConverseStream (the iterator must end on its own) into what a client shows. */
export async function collect(stream: AsyncIterable<ConverseStreamOutput> | undefined): Promise<StreamedConverse> {
  const out: StreamedConverse = {
    text: '',
    reasoning: '',
    signature: '',
    stopReason: undefined,
    usage: undefined,
    tools: [],
    events: [],
  };
  if (!stream) throw new Error('no stream');
  const byIndex = new Map<number, StreamedConverse['tools'][number]>();
  for await (const ev of stream) {
    const name = Object.keys(ev).find((k) => Reflect.get(ev, k) !== undefined) ?? '?';
    out.events.push(name);
    if (ev.contentBlockStart?.start?.toolUse) {
      const t = ev.contentBlockStart.start.toolUse;
      const slot = { toolUseId: t.toolUseId ?? '', name: t.name ?? '', input: '' };
      byIndex.set(ev.contentBlockStart.contentBlockIndex ?? -1, slot);
      out.tools.push(slot);
    }
    const d = ev.contentBlockDelta?.delta;
    if (d?.text) out.text += d.text;
    if (d?.toolUse?.input) {
      const slot = byIndex.get(ev.contentBlockDelta?.contentBlockIndex ?? -1);
      if (slot) slot.input += d.toolUse.input;
    }
    if (d?.reasoningContent?.text) out.reasoning += d.reasoningContent.text;
    if (d?.reasoningContent?.signature) out.signature += d.reasoningContent.signature;
    if (ev.messageStop) out.stopReason = ev.messageStop.stopReason;
    if (ev.metadata?.usage) out.usage = { ...ev.metadata.usage };
  }
  return out;
}

export interface RawCall {
  status: number;
  headers: Headers;
  text: string;
  bytes: Uint8Array;
  json: Json;
}

/** POST to a gateway path with a bearer token and a JSON body (or a raw string body as is). */
export async function post(
  gw: TestGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = { authorization: `Bearer ${INFERENCE_TOKEN}` },
): Promise<RawCall> {
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = Buffer.from(bytes).toString('utf8');
  let json: Json = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') json = parsed as Json; // a JSON object answer
  } catch {
    // An event stream or a non-JSON answer: the bytes are there.
  }
  return { status: res.status, headers: res.headers, text, bytes, json };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

export interface RawEvent {
  type: string;
  name: string;
  data: Json;
}

/** The messages of an event-stream answer, decoded by the SDK's own codec (both CRCs checked). */
export function decodeEvents(bytes: Uint8Array): RawEvent[] {
  const out: RawEvent[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const total = new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getUint32(0, false);
    const msg = codec.decode(bytes.subarray(offset, offset + total));
    offset += total;
    const h = (k: string) => String(msg.headers[k]?.value ?? '');
    const type = h(':message-type');
    out.push({
      type,
      name: type === 'exception' ? h(':exception-type') : h(':event-type'),
      data: JSON.parse(toUtf8(msg.body)) as Json, // every payload is a JSON object
    });
  }
  return out;
}

/** The Converse error body with this status and exception name; returns its message. */
export function expectConverseError(call: RawCall, status: number, type: string): string {
  expect(call.status, call.text).toBe(status);
  expect(call.json['type']).toBe(type);
  expect(call.headers.get('x-amzn-errortype')).toBe(type);
  expect(typeof call.json['message']).toBe('string');
  return String(call.json['message']);
}

/** The SDK exception a call ends in (its class name and HTTP status); fails the test when the call succeeds. */
export async function sdkFailure(
  p: Promise<unknown>,
): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(Error);
    const e = err as Error & { $metadata?: { httpStatusCode?: number } }; // the SDK's ServiceException
    return { name: e.name, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error('expected the request to fail');
}

/** The gateway's `extra_fields`, which the SDK drops; read from a raw answer. */
export function extraOf(call: RawCall): Json | undefined {
  const extra = call.json['extra_fields'];
  return extra && typeof extra === 'object' ? (extra as Json) : undefined; // a JSON object from the wire
}
