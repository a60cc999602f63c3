// The Gemini API's model calls (`POST /v1beta/models/{model}:{method}`), one format operation for every method:
// Gemini puts the method after a colon in the last path segment, so one route takes them all and the decoder
// splits it off. A gemini model gets the caller's body as it came (native pass-through); any other provider's
// model is served through the unified chat, embeddings or count-tokens operation and answered in Gemini's shape.
import type { z } from 'zod';
import { formatIssues, issueParam } from '../../config/issues.ts';
import { embeddingsOp, type OperationSpec } from '../../engine/operations.ts';
import { genaiReferences } from '../../engine/referenced-resources.ts';
import { GatewayError } from '../../http/errors.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import type { CallContext, JsonObject, ProviderAdapter } from '../../providers/types.ts';
import type { Decoded, FormatOperation, RequestParts } from '../types.ts';
import type { GenaiCall, GenaiResult } from './call.ts';
import { toBatchEmbedResponse, toEmbedContentResponse, toEmbeddingRequest } from './embed.ts';
import { genaiFormat } from './format.ts';
import { fromChatResponse, toGenaiEvents } from './from-chat.ts';
import { withJsonNames } from './proto-names.ts';
import {
  BatchEmbedContentsRequest,
  CountTokensRequest,
  EmbedContentRequest,
  GenerateContentRequest,
  GoogleErrorBody,
  ModelsCallResponse,
} from './schema.ts';
import { genaiStream } from './stream-codec.ts';
import { toChatRequest } from './to-chat.ts';
import { genaiTools } from './tools.ts';
import { usageOf } from './usage.ts';

const BODIES = {
  generateContent: GenerateContentRequest,
  streamGenerateContent: GenerateContentRequest,
  embedContent: EmbedContentRequest,
  batchEmbedContents: BatchEmbedContentsRequest,
  countTokens: CountTokensRequest,
} as const;

type Method = keyof typeof BODIES;

function isMethod(m: string): m is Method {
  return Object.hasOwn(BODIES, m);
}

function unsupported(a: ProviderAdapter, what: string): GatewayError {
  return new GatewayError('unsupported_operation', `provider ${a.name} does not support ${what}`, { param: 'model' });
}

async function serve(a: ProviderAdapter, call: GenaiCall, ctx: CallContext): Promise<GenaiResult> {
  const native = a.native?.unary;
  switch (call.action) {
    case 'generateContent': {
      const pass = native?.['genai.generate_content'];
      if (pass) {
        const body = await pass(call.body, ctx);
        return { body, usage: usageOf(body) };
      }
      if (!a.chat) throw unsupported(a, 'generateContent');
      const res = await a.chat(toChatRequest(call.body, ctx.model, false), ctx);
      const body = fromChatResponse(res);
      return { body, usage: usageOf(body) };
    }
    case 'embedContent':
    case 'batchEmbedContents': {
      const batch = call.action === 'batchEmbedContents';
      const pass = native?.[batch ? 'genai.batch_embed_contents' : 'genai.embed_content'];
      if (pass) {
        const body = await pass(call.body, ctx);
        return { body, usage: usageOf(body) };
      }
      const embed = embeddingsOp.unary(a);
      if (!embed) throw unsupported(a, 'embeddings');
      const requests = call.action === 'batchEmbedContents' ? call.body.requests : [call.body];
      const res = await embed(toEmbeddingRequest(requests, ctx.model), ctx);
      const body = batch ? toBatchEmbedResponse(res, requests.length) : toEmbedContentResponse(res);
      return { body, usage: embeddingsOp.usage(res) };
    }
    case 'countTokens': {
      const pass = native?.['genai.count_tokens'];
      if (pass) return { body: await pass(call.body, ctx), usage: undefined };
      if (!a.countTokens) throw unsupported(a, 'countTokens');
      const inner: GenerateContentRequest = call.body.generateContentRequest ?? { contents: call.body.contents ?? [] };
      const chat = toChatRequest(inner, ctx.model, false);
      const req = { model: ctx.model, messages: chat.messages, ...(chat.tools ? { tools: chat.tools } : {}) };
      const res = await a.countTokens(req, ctx);
      return { body: { totalTokens: res.input_tokens }, usage: undefined };
    }
  }
}

async function* nativeData(events: AsyncIterable<{ data: JsonObject }>): AsyncGenerator<JsonObject> {
  for await (const ev of events) yield ev.data;
}

export const modelsCallSpec: OperationSpec<GenaiCall, GenaiResult, JsonObject> = {
  // One route serves every method; the decoder names each call's request type (REQUEST_TYPES).
  requestType: 'chat_completion',
  label: 'Gemini API calls',
  unary: (a) => (call, ctx) => serve(a, call, ctx),
  stream: (a) => async (call, ctx) => {
    if (call.action !== 'generateContent') throw unsupported(a, `streaming ${call.action}`);
    const pass = a.native?.stream?.['genai.generate_content'];
    if (pass) return nativeData(await pass(call.body, ctx));
    if (!a.chatStream) throw unsupported(a, 'streamGenerateContent');
    return toGenaiEvents(await a.chatStream(toChatRequest(call.body, ctx.model, true), ctx));
  },
  usage: (r) => r.usage,
  chunkUsage: usageOf,
  references: genaiReferences,
};

/** `gemini-2.5-flash:generateContent` (or `openai/gpt-4o-mini:generateContent`) -> model and method. */
export function splitModelPath(path: string): { model: string; method: Method } {
  const colon = path.lastIndexOf(':');
  const method = colon < 0 ? '' : path.slice(colon + 1);
  if (!isMethod(method)) {
    throw new GatewayError('not_found', `models/${path} is not a Gemini API method (use {model}:generateContent, …)`);
  }
  const model = path.slice(0, colon).replace(/^models\//, '');
  if (model === '') throw new GatewayError('invalid_request', 'the path names no model', { param: 'model' });
  return { model, method };
}

function parse<T>(schema: z.ZodType<T>, raw: unknown): T {
  const r = schema.safeParse(raw);
  if (!r.success) {
    const param = issueParam(r.error);
    throw new GatewayError('invalid_request', formatIssues(r.error), param ? { param } : {});
  }
  return r.data;
}

/** What each method is in logs and metrics. */
const REQUEST_TYPES: Record<GenaiCall['action'], string> = {
  generateContent: 'chat_completion',
  embedContent: 'embedding',
  batchEmbedContents: 'embedding',
  countTokens: 'count_tokens',
};

function decode(parts: RequestParts): Decoded<GenaiCall> {
  const { model, method } = splitModelPath(parts.params['*'] ?? '');
  // Proto names (Python's SDK) become JSON names: one spelling for the translators and for Gemini alike.
  const raw = withJsonNames(parts.body ?? {});
  let call: GenaiCall;
  switch (method) {
    case 'generateContent':
    case 'streamGenerateContent':
      call = { action: 'generateContent', body: parse(GenerateContentRequest, raw), sse: parts.query['alt'] === 'sse' };
      break;
    case 'embedContent':
      call = { action: 'embedContent', body: parse(EmbedContentRequest, raw) };
      break;
    case 'batchEmbedContents':
      call = { action: 'batchEmbedContents', body: parse(BatchEmbedContentsRequest, raw) };
      break;
    case 'countTokens': {
      const body = parse(CountTokensRequest, raw);
      if (!body.contents?.length && !body.generateContentRequest) {
        throw new GatewayError('invalid_request', 'countTokens needs contents or generateContentRequest', {
          param: 'contents',
        });
      }
      call = { action: 'countTokens', body };
      break;
    }
  }
  return { body: call, model, stream: method === 'streamGenerateContent', requestType: REQUEST_TYPES[call.action] };
}

/** Every /genai route's errors, for the API document. */
export const GOOGLE_ERROR_DOC = {
  name: 'GoogleError',
  schema: GoogleErrorBody,
  description: 'in Google’s error shape',
};

const doc: RouteDoc = {
  operationId: 'genaiModelCall',
  summary: 'Call a model the Gemini API way: {model}:generateContent, :streamGenerateContent, :embedContent, …',
  description:
    'The path ends in `{model}:{method}`, method one of generateContent, streamGenerateContent (`?alt=sse` for ' +
    'server-sent events, else a JSON array streamed element by element), embedContent, batchEmbedContents, ' +
    'countTokens. A model without `<provider>/` is a gemini model; `<provider>/<model>` goes to that provider, ' +
    'translated. Fallbacks: the `x-gateway-fallbacks` header.',
  tags: ['Gemini API'],
  body: GenerateContentRequest.or(EmbedContentRequest).or(BatchEmbedContentsRequest).or(CountTokensRequest),
  responses: {
    200: {
      description: 'The Gemini API answer, with the gateway’s `extra_fields`; streams as SSE or a JSON array',
      json: ModelsCallResponse,
      text: 'text/event-stream',
    },
  },
  errors: [400, 402, 403, 404, 429, 502, 503, 504],
  errorBody: GOOGLE_ERROR_DOC,
};

export const modelsCall: FormatOperation<GenaiCall, GenaiResult, JsonObject> = {
  format: genaiFormat,
  spec: modelsCallSpec,
  decode,
  respond: (res, extra) => Object.assign(res.body, { extra_fields: extra }),
  stream: genaiStream,
  tools: genaiTools,
  doc,
};
