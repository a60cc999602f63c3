// Same-format pass-through for the Bedrock runtime format (`/cloudconv`): the caller's Converse, InvokeModel and
// CountTokens bodies go upstream as sent (the model id is in the path: only it is rewritten, after alias
// resolution), signed with the key's credentials; Bedrock's answers and event-stream events come back as sent.

import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import type { UpstreamResponse } from '../shared/http.ts';
import { translateBody } from '../shared/stream.ts';
import type { CallContext, JsonObject, NativeCalls, NativeEvent } from '../types.ts';
import type { BedrockOperation, BedrockPost } from './signing.ts';
import { createFrameReader, type DecodedEvent, decodeFrame } from './stream.ts';

/**
 * InvokeModel bodies are model-native and carry their token counts (if at all) in family-specific fields;
 * Bedrock reports them for every family in response headers. They ride on the answer under this symbol,
 * which JSON serialisation skips, so the caller's body stays exactly as Bedrock sent it.
 */
export const INVOKE_USAGE: unique symbol = Symbol('bedrock.invokeUsage');

export interface InvokeUsage {
  inputTokens: number;
  outputTokens: number;
}

async function readObject(res: UpstreamResponse, what: string): Promise<JsonObject> {
  let body: unknown;
  try {
    body = await res.body.json();
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw new ProviderError('bad_response', `bedrock ${what} answer is not JSON`, { cause: err });
  }
  if (!isRecord(body)) throw new ProviderError('bad_response', `bedrock ${what} answer is not a JSON object`);
  return body;
}

function headerCount(res: UpstreamResponse, name: string): number | undefined {
  const raw = res.headers[name];
  const v = Number(Array.isArray(raw) ? raw[0] : raw);
  return Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** Event-stream frames as native events; exceptions inside the stream become ProviderErrors. */
async function eventStream(
  res: UpstreamResponse,
  lastEvent: string | undefined,
  what: string,
): Promise<AsyncIterable<NativeEvent>> {
  const reader = createFrameReader(res.body.maxBytes);
  let finished = lastEvent === undefined;
  const toEvent = (ev: DecodedEvent): NativeEvent => {
    if (ev.messageType === 'exception') {
      throw new ProviderError('upstream', messageOf(ev.payload) ?? ev.name, {
        status: STREAM_EXCEPTION_STATUS[ev.name] ?? 500,
        type: ev.name.charAt(0).toUpperCase() + ev.name.slice(1),
      });
    }
    if (ev.messageType === 'error') {
      throw new ProviderError('upstream', ev.errorMessage || ev.name || `bedrock ${what} failed`, { status: 500 });
    }
    if (ev.name === lastEvent) finished = true;
    return { event: ev.name, data: isRecord(ev.payload) ? ev.payload : {} };
  };
  return translateBody(
    res.body,
    res.body,
    (bytes) => reader.push(bytes).map((f) => toEvent(decodeFrame(f))),
    () => {
      if (!finished || reader.buffered > 0) throw new ProviderError('network', `bedrock ${what} ended early`);
    },
  );
}

const STREAM_EXCEPTION_STATUS: Record<string, number> = {
  validationException: 400,
  throttlingException: 429,
  modelStreamErrorException: 424,
  modelTimeoutException: 408,
  internalServerException: 500,
  serviceUnavailableException: 503,
};

function messageOf(payload: unknown): string | undefined {
  if (!isRecord(payload)) return undefined;
  const m = payload['message'] ?? payload['Message'];
  return typeof m === 'string' && m !== '' ? m : undefined;
}

/** The calls for one adapter; the native body is serialised once, unchanged, and sent with its signed `post`. */
export function createBedrockNativeCalls(signedPost: BedrockPost): NativeCalls {
  const post = (ctx: CallContext, op: BedrockOperation, body: JsonObject): Promise<UpstreamResponse> =>
    signedPost(ctx, op, JSON.stringify(body));
  return {
    unary: {
      'converse.converse': async (body, ctx) => {
        const res = await readObject(await post(ctx, 'converse', body), 'converse');
        if (!isRecord(res['output'])) throw new ProviderError('bad_response', 'bedrock converse answer has no output');
        return res;
      },
      'converse.invoke': async (body, ctx) => {
        const res = await post(ctx, 'invoke', body);
        const answer = await readObject(res, 'invoke');
        const inputTokens = headerCount(res, 'x-amzn-bedrock-input-token-count');
        const outputTokens = headerCount(res, 'x-amzn-bedrock-output-token-count');
        if (inputTokens !== undefined || outputTokens !== undefined) {
          const usage: InvokeUsage = { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 };
          Object.defineProperty(answer, INVOKE_USAGE, { value: usage, enumerable: false });
        }
        return answer;
      },
      'converse.count_tokens': async (body, ctx) => {
        const res = await readObject(await post(ctx, 'count-tokens', body), 'count-tokens');
        if (typeof res['inputTokens'] !== 'number') {
          throw new ProviderError('bad_response', 'bedrock count-tokens answer has no inputTokens');
        }
        return res;
      },
    },
    stream: {
      'converse.converse': async (body, ctx) =>
        eventStream(await post(ctx, 'converse-stream', body), 'messageStop', 'converse stream'),
      // InvokeModelWithResponseStream has no closing event: the stream ends with the body.
      'converse.invoke': async (body, ctx) =>
        eventStream(await post(ctx, 'invoke-with-response-stream', body), undefined, 'invoke stream'),
    },
  };
}
