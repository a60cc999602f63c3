// Fake Bedrock runtime: verifies every request's SigV4 signature by re-signing it with the known secret, validates
// Converse bodies the way Bedrock does (enough to catch translation bugs), and answers in the real wire formats,
// including the binary event streams of ConverseStream and InvokeModelWithResponseStream that the official SDK
// decodes. Converse answers carry one field no client knows (`fakeExtension`), to show a pass-through keeps it.
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { FakeServer, type RecordedRequest, sendJson, sleep } from './server.ts';

export interface BedrockFakeOptions {
  accessKey: string;
  secretKey: string;
  /** Pause between event-stream frames, to show that consumers see events before the stream ends. */
  gapMs: number;
  /** When set, the next stream sends this exception after its first text delta, then ends. */
  streamException?: { type: string; message: string };
}

export type BedrockFake = FakeServer & {
  options: BedrockFakeOptions;
  /** Answers still being written: shows a chunk arrived before the upstream stream ended. */
  readonly openResponses: number;
};

type Json = Record<string, unknown>;

const OPERATION = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream|count-tokens)$/;
const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';
const codec = new EventStreamCodec(toUtf8, fromUtf8);
let requestCounter = 0;

export function createBedrockFake(init: { accessKey: string; secretKey: string; gapMs?: number }): BedrockFake {
  const options: BedrockFakeOptions = { gapMs: 0, ...init };
  const state = { open: 0 };
  const server = new FakeServer([
    {
      method: 'POST',
      path: OPERATION,
      handler: async (req, res) => {
        state.open += 1;
        try {
          await handle(options, req, res);
        } finally {
          state.open -= 1;
        }
      },
    },
  ]);
  // defineProperty, not Object.assign: assign would copy the getter's current value once.
  Object.defineProperty(server, 'openResponses', { get: () => state.open });
  return Object.assign(server, { options }) as BedrockFake; // openResponses was defined just above
}

function awsError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(
    res,
    status,
    { message },
    { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
  );
}

async function handle(options: BedrockFakeOptions, req: RecordedRequest, res: ServerResponse): Promise<void> {
  requestCounter += 1;
  res.setHeader('x-amzn-requestid', `fake-req-${requestCounter}`);
  const auth = await verifySignature(options, req);
  if (auth) return awsError(res, 403, auth.type, auth.message);
  const [, encodedId, op] = OPERATION.exec(req.path) ?? [];
  const modelId = decodeURIComponent(encodedId ?? '');
  const body = asObject(req.json);
  if (!body) return awsError(res, 400, 'SerializationException', 'body must be a JSON object');
  switch (op) {
    case 'converse':
    case 'converse-stream': {
      const problem = validateConverse(body);
      if (problem) return awsError(res, 400, 'ValidationException', problem);
      const answer = converseAnswer(modelId, body);
      if (op === 'converse') {
        return sendJson(res, 200, {
          output: { message: { role: 'assistant', content: answer.blocks } },
          stopReason: answer.stopReason,
          usage: answer.usage,
          metrics: { latencyMs: 12 },
          ...echoed(body),
          fakeExtension: { note: 'a field no client knows' },
        });
      }
      return stream(options, res, answer, body);
    }
    case 'invoke':
      return invoke(res, modelId, body);
    case 'invoke-with-response-stream':
      return invokeStream(options, res, modelId, body);
    default:
      return countTokens(res, body);
  }
}

/** Converse echoes the tiers it served the request with. */
function echoed(body: Json): Json {
  const out: Json = {};
  if (body['performanceConfig']) out['performanceConfig'] = body['performanceConfig'];
  if (body['serviceTier']) out['serviceTier'] = body['serviceTier'];
  return out;
}

function countTokens(res: ServerResponse, body: Json) {
  const input = asObject(body['input']);
  const invokeBody = asObject(input?.['invokeModel'])?.['body'];
  if (typeof invokeBody === 'string') return sendJson(res, 200, { inputTokens: estimateTokens(invokeBody) });
  const converse = asObject(input?.['converse']);
  const problem = converse ? validateConverse(converse) : 'input.converse or input.invokeModel is required';
  if (problem || !converse) return awsError(res, 400, 'ValidationException', problem ?? 'invalid input');
  return sendJson(res, 200, { inputTokens: estimateTokens(converse) });
}

/** Re-signs the request as received with the known secret and compares, as AWS does. */
export async function verifySignature(
  options: BedrockFakeOptions,
  req: RecordedRequest,
): Promise<{ type: string; message: string } | undefined> {
  const auth = String(req.headers.authorization ?? '');
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return { type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const [, accessKey, day, region, service, signedList, signature] = m;
  if (accessKey !== options.accessKey) {
    return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  }
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const signingDate = parseAmzDate(amzDate);
  const signed = (signedList ?? '').split(';');
  const mismatch = { type: 'InvalidSignatureException', message: SIGNATURE_MISMATCH };
  if (!signingDate || !amzDate.startsWith(day ?? '') || service !== 'bedrock' || !signed.includes('host'))
    return mismatch;
  const contentHash = req.headers['x-amz-content-sha256'];
  if (contentHash !== undefined && contentHash !== createHash('sha256').update(req.body).digest('hex')) return mismatch;
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const v = req.headers[name];
    headers[name] = Array.isArray(v) ? v.join(',') : (v ?? '');
  }
  const token = signed.includes('x-amz-security-token') ? headers['x-amz-security-token'] : undefined;
  const signer = new SignatureV4({
    service: 'bedrock',
    region: region ?? '',
    credentials: {
      accessKeyId: options.accessKey,
      secretAccessKey: options.secretKey,
      ...(token ? { sessionToken: token } : {}),
    },
    sha256: Sha256,
    // The client decides whether to sign a payload-hash header; the fake only re-signs what it received.
    applyChecksum: false,
  });
  const host = new URL(`http://${headers['host'] ?? 'localhost'}`);
  const query = Object.fromEntries(new URL(req.url, 'http://x').searchParams);
  const resigned = await signer.sign(
    {
      method: req.method,
      protocol: 'http:',
      hostname: host.hostname,
      ...(host.port ? { port: Number(host.port) } : {}),
      path: req.path,
      query,
      headers,
      body: req.body,
    },
    { signingDate },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(resigned.headers['authorization']))?.[1];
  return expected === signature ? undefined : mismatch;
}

function parseAmzDate(v: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(v);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number);
  return new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!));
}

function frame(messageType: 'event' | 'exception', name: string, payload: Json): Uint8Array {
  const nameHeader = messageType === 'event' ? ':event-type' : ':exception-type';
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: messageType },
      [nameHeader]: { type: 'string', value: name },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    // Bedrock pads payloads with a `p` field so sizes do not leak content; clients must ignore it.
    body: fromUtf8(
      JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEFGH'.slice(0, 1 + (requestCounter % 30)) }),
    ),
  });
}

async function stream(
  options: BedrockFakeOptions,
  res: ServerResponse,
  answer: ConverseAnswer,
  body: Json,
): Promise<void> {
  const frames: Uint8Array[] = [frame('event', 'messageStart', { role: 'assistant' })];
  const failure = options.streamException;
  options.streamException = undefined;
  let cutAt: number | undefined;
  answer.blocks.forEach((b, contentBlockIndex) => {
    const toolUse = asObject(b['toolUse']);
    const reasoning = asObject(asObject(b['reasoningContent'])?.['reasoningText']);
    if (reasoning) {
      for (const delta of [{ text: reasoning['text'] }, { signature: reasoning['signature'] }]) {
        frames.push(frame('event', 'contentBlockDelta', { contentBlockIndex, delta: { reasoningContent: delta } }));
      }
    } else if (toolUse) {
      frames.push(
        frame('event', 'contentBlockStart', {
          contentBlockIndex,
          start: { toolUse: { toolUseId: toolUse['toolUseId'], name: toolUse['name'] } },
        }),
      );
      const json = JSON.stringify(toolUse['input']);
      const mid = Math.floor(json.length / 2);
      for (const input of [json.slice(0, mid), json.slice(mid)]) {
        frames.push(frame('event', 'contentBlockDelta', { contentBlockIndex, delta: { toolUse: { input } } }));
      }
    } else {
      for (const text of String(b['text']).match(/\S+\s*/g) ?? ['']) {
        frames.push(frame('event', 'contentBlockDelta', { contentBlockIndex, delta: { text } }));
        if (failure && cutAt === undefined) {
          frames.push(frame('exception', failure.type, { message: failure.message }));
          cutAt = frames.length;
        }
      }
    }
    frames.push(frame('event', 'contentBlockStop', { contentBlockIndex }));
  });
  frames.push(frame('event', 'messageStop', { stopReason: answer.stopReason }));
  frames.push(frame('event', 'metadata', { usage: answer.usage, metrics: { latencyMs: 12 }, ...echoed(body) }));
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  for (const f of frames.slice(0, cutAt)) {
    res.write(f);
    if (options.gapMs) await sleep(options.gapMs);
  }
  res.end();
}

/** An Anthropic Messages answer as Claude on Bedrock gives it to InvokeModel (no model field, no id prefix). */
function claudeAnswer(body: Json): { answer: Json; input: number; output: number } | string {
  if (body['anthropic_version'] !== 'bedrock-2023-05-31') return 'anthropic_version must be bedrock-2023-05-31';
  const msgs = body['messages'];
  if (!Array.isArray(msgs) || msgs.length === 0) return 'messages: at least one message is required';
  if (typeof body['max_tokens'] !== 'number') return 'max_tokens: field required';
  const last = asObject(msgs.at(-1));
  const content = last?.['content'];
  const said = typeof content === 'string' ? content : JSON.stringify(content);
  const text = `[claude] ${said}`;
  const input = estimateTokens(msgs);
  const output = estimateTokens(text);
  requestCounter += 1;
  const answer = {
    id: `msg_bdrk_${requestCounter}`,
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: input, output_tokens: output },
  };
  return { answer, input, output };
}

function tokenHeaders(input: number, output: number): Record<string, string> {
  return { 'x-amzn-bedrock-input-token-count': String(input), 'x-amzn-bedrock-output-token-count': String(output) };
}

/** InvokeModelWithResponseStream for Claude: Anthropic's stream events, each JSON in a `chunk` event's bytes. */
async function invokeStream(options: BedrockFakeOptions, res: ServerResponse, modelId: string, body: Json) {
  if (!modelId.includes('anthropic.claude')) {
    return awsError(res, 400, 'ValidationException', `The provided model identifier is invalid: ${modelId}`);
  }
  const claude = claudeAnswer(body);
  if (typeof claude === 'string') return awsError(res, 400, 'ValidationException', claude);
  const { answer, input, output } = claude;
  const text = String(asObject((answer['content'] as Json[])[0])?.['text']); // built just above
  const events: Json[] = [
    { type: 'message_start', message: { ...answer, content: [], usage: { input_tokens: input, output_tokens: 0 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...(text.match(/\S+\s*/g) ?? []).map((t) => ({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: t },
    })),
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: output },
    },
    {
      type: 'message_stop',
      'amazon-bedrock-invocationMetrics': {
        inputTokenCount: input,
        outputTokenCount: output,
        invocationLatency: 12,
        firstByteLatency: 5,
      },
    },
  ];
  const failure = options.streamException;
  options.streamException = undefined;
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  for (const [i, ev] of events.entries()) {
    res.write(frame('event', 'chunk', { bytes: Buffer.from(JSON.stringify(ev)).toString('base64') }));
    if (failure && i === 2) {
      res.write(frame('exception', failure.type, { message: failure.message }));
      break;
    }
    if (options.gapMs) await sleep(options.gapMs);
  }
  res.end();
}

function invoke(res: ServerResponse, modelId: string, body: Json) {
  if (modelId.includes('anthropic.claude')) {
    const claude = claudeAnswer(body);
    if (typeof claude === 'string') return awsError(res, 400, 'ValidationException', claude);
    return sendJson(res, 200, claude.answer, tokenHeaders(claude.input, claude.output));
  }
  if (modelId.includes('amazon.titan-embed')) {
    const text = body['inputText'];
    if (typeof text !== 'string' || text === '')
      return awsError(res, 400, 'ValidationException', 'inputText is required');
    const dims = body['dimensions'] ?? 1024;
    if (dims !== 256 && dims !== 512 && dims !== 1024) {
      return awsError(res, 400, 'ValidationException', 'dimensions must be one of 256, 512, 1024');
    }
    const tokens = estimateTokens(text);
    return sendJson(
      res,
      200,
      { embedding: vectorFor(text, dims), inputTextTokenCount: tokens },
      { 'x-amzn-bedrock-input-token-count': String(tokens) },
    );
  }
  if (modelId.includes('cohere.embed')) {
    const texts = body['texts'];
    if (!Array.isArray(texts) || texts.length > 96 || !texts.every((t) => typeof t === 'string')) {
      return awsError(res, 400, 'ValidationException', 'texts must be a list of at most 96 strings');
    }
    if (typeof body['input_type'] !== 'string')
      return awsError(res, 400, 'ValidationException', 'input_type is required');
    const tokens = texts.reduce((n: number, t: string) => n + estimateTokens(t), 0);
    return sendJson(
      res,
      200,
      {
        id: `emb-${requestCounter}`,
        embeddings: texts.map((t: string) => vectorFor(t, 1024)),
        response_type: 'embeddings_floats',
        texts,
      },
      { 'x-amzn-bedrock-input-token-count': String(tokens) },
    );
  }
  awsError(res, 400, 'ValidationException', `The provided model identifier is invalid: ${modelId}`);
}

/** Deterministic: the same text always gets the same vector, different texts different ones. */
function vectorFor(text: string, dims: number): number[] {
  const seed = createHash('sha256').update(text).digest();
  return Array.from({ length: dims }, (_, i) => ((seed[i % seed.length]! + i) % 200) / 100 - 1);
}

function estimateTokens(v: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(v).length / 4));
}

function asObject(v: unknown): Json | undefined {
  // Plain JSON objects parsed from request bodies; arrays and null are excluded.
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

/** Bedrock's own Converse checks that a translation bug would trip; the message is Bedrock's wording. */
function validateConverse(body: Json): string | undefined {
  const msgs = body['messages'];
  if (!Array.isArray(msgs) || msgs.length === 0) return 'A conversation must start with a user message.';
  let hasToolBlocks = false;
  for (const [i, raw] of msgs.entries()) {
    const m = asObject(raw);
    const role = m?.['role'];
    if (role !== 'user' && role !== 'assistant') return `messages.${i}.role: must be user or assistant`;
    if (i === 0 && role !== 'user')
      return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
    if (i > 0 && asObject(msgs[i - 1])?.['role'] === role) {
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    }
    const content = m?.['content'];
    if (!Array.isArray(content) || content.length === 0) return `messages.${i}.content: must not be empty`;
    for (const [j, rawBlock] of content.entries()) {
      const b = asObject(rawBlock) ?? {};
      if ('text' in b && (typeof b['text'] !== 'string' || b['text'].trim() === '')) {
        return `The text field in the ContentBlock object at messages.${i}.content.${j} is blank. Add text to the text field, and try again.`;
      }
      const image = asObject(b['image']);
      if (
        image &&
        (typeof asObject(image['source'])?.['bytes'] !== 'string' ||
          !['png', 'jpeg', 'gif', 'webp'].includes(String(image['format'])))
      ) {
        return `messages.${i}.content.${j}.image: format and source.bytes are required`;
      }
      if ('toolUse' in b || 'toolResult' in b) hasToolBlocks = true;
    }
  }
  if (hasToolBlocks && !asObject(body['toolConfig'])) {
    return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  }
  return undefined;
}

interface ConverseAnswer {
  blocks: Json[];
  stopReason: string;
  usage: {
    inputTokens: number;
    outputTokens: number;
    totalTokens: number;
    cacheReadInputTokens?: number;
    cacheWriteInputTokens?: number;
  };
}

/** Tools yield a toolUse; a toolResult is acknowledged; structured output gets JSON; otherwise echo. */
function converseAnswer(modelId: string, body: Json): ConverseAnswer {
  // validateConverse accepted the body: messages is a non-empty array of objects with content arrays.
  const msgs = body['messages'] as Json[];
  const lastBlocks = (msgs.at(-1)?.['content'] ?? []) as Json[]; // checked by validateConverse
  const toolConfig = asObject(body['toolConfig']);
  const tools = Array.isArray(toolConfig?.['tools']) ? (toolConfig['tools'] as Json[]) : []; // array checked
  const toolResult = asObject(lastBlocks.find((b) => 'toolResult' in b)?.['toolResult']);
  const forced = asObject(asObject(toolConfig?.['toolChoice'])?.['tool'])?.['name'];
  const blocks: Json[] = [];
  let stopReason = 'end_turn';
  if (toolResult) {
    const texts = (Array.isArray(toolResult['content']) ? toolResult['content'] : []).map((c) =>
      String(asObject(c)?.['text'] ?? ''),
    );
    blocks.push({ text: `tool result: ${texts.join('')}` });
  } else if (tools.length > 0) {
    const spec = tools.map((t) => asObject(t['toolSpec'])).find((s) => !forced || s?.['name'] === forced) ?? {};
    requestCounter += 1;
    const input = sampleFor(asObject(asObject(spec['inputSchema'])?.['json']));
    blocks.push({ toolUse: { toolUseId: `tooluse_fake${requestCounter}`, name: spec['name'], input } });
    stopReason = 'tool_use';
  } else {
    const jsonSchema = asObject(
      asObject(asObject(asObject(body['outputConfig'])?.['textFormat'])?.['structure'])?.['jsonSchema'],
    );
    const text =
      typeof jsonSchema?.['schema'] === 'string'
        ? JSON.stringify(sampleFor(asObject(JSON.parse(jsonSchema['schema']))))
        : `[${modelId}] ${lastUserText(msgs)}`;
    blocks.push({ text });
  }
  // Extended thinking (asked for in the model's own fields) comes first, with its signature.
  if (asObject(body['additionalModelRequestFields'])?.['thinking']) {
    blocks.unshift({ reasoningContent: { reasoningText: { text: 'Let me think.', signature: 'sig-fake-1' } } });
  }
  const inputTokens = estimateTokens([body['system'] ?? [], msgs]);
  const outputTokens = estimateTokens(blocks);
  const usage: ConverseAnswer['usage'] = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  // A system prompt with a cache point reads its prefix from the cache.
  const system = Array.isArray(body['system']) ? body['system'] : [];
  if (system.some((b) => asObject(b)?.['cachePoint'])) {
    usage.cacheReadInputTokens = 7;
    usage.cacheWriteInputTokens = 0;
    usage.totalTokens += 7;
  }
  return { blocks, stopReason, usage };
}

function lastUserText(msgs: Json[]): string {
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i]!;
    if (m['role'] !== 'user' || !Array.isArray(m['content'])) continue;
    const texts = m['content'].map((b) => asObject(b)?.['text']).filter((t): t is string => typeof t === 'string');
    if (texts.length > 0) return texts.at(-1)!;
  }
  return '';
}

/** A value that satisfies simple JSON schemas, so tool inputs and structured output look plausible. */
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
