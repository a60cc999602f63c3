// The Cohere-format operations (v2 chat, embed, rerank; v1 tokenize): validated, then served natively by the
// cohere provider (the caller's body as it came, only the model rewritten) and through the unified schema by
// the others where the operation exists there (chat, embed); rerank and tokenize are Cohere's alone.
import type { z } from 'zod';
import { formatIssues, issueParam } from '../../config/issues.ts';
import { embeddingsOp, type OperationSpec, type UsageSummary } from '../../engine/operations.ts';
import { GatewayError } from '../../http/errors.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { SSE_CONTENT_TYPE, sseFrame } from '../../http/stream-writer.ts';
import type { JsonObject, NativeEvent } from '../../providers/types.ts';
import { searchUnits } from '../../schemas/rerank.ts';
import { isRecord } from '../../util/records.ts';
import type { Decoded, FormatOperation, RequestParts, StreamCodec } from '../types.ts';
import { toEmbedAnswer, toEmbeddingRequest } from './embed.ts';
import { cohereFormat } from './format.ts';
import { fromCohereUsage, metaUnits, toChatAnswer } from './from-chat.ts';
import {
  ChatRequest,
  ChatView,
  EmbedRequest,
  EmbedView,
  ErrorView,
  RerankRequest,
  RerankView,
  TokenizeRequest,
  TokenizeView,
} from './schema.ts';
import { cohereEvents } from './stream-from-chat.ts';
import { toChatRequest } from './to-chat.ts';
import { cohereChatTools } from './tools.ts';

/** Errors an inference request can end in besides the edge's: governance and the upstream provider. */
const INFERENCE_ERRORS = [400, 402, 403, 404, 429, 502, 503, 504];

export const ERROR_BODY = {
  name: 'CohereError',
  schema: ErrorView,
  description: 'Cohere’s error shape: `{"message": ...}` (with the gateway’s event id in `id`)',
};

/** Validates with `schema` and hands on the body as it came (a pass-through keeps every field). */
function validated<T extends { model: string }>(schema: z.ZodType<T>, parts: RequestParts): T {
  const r = schema.safeParse(parts.body);
  if (!r.success) {
    const param = issueParam(r.error);
    throw new GatewayError('invalid_request', formatIssues(r.error), param ? { param } : {});
  }
  // The schema accepted this very value; its loose objects keep every field, so the raw body is the same data.
  return parts.body as T;
}

function newId(): string {
  return crypto.randomUUID();
}

export const chatSpec: OperationSpec<ChatRequest, JsonObject, NativeEvent> = {
  requestType: 'chat_completion',
  label: 'chat',
  unary: (a) => {
    const native = a.native?.unary?.['cohere.chat'];
    if (native) return native;
    const chat = a.chat?.bind(a);
    return chat && (async (body, ctx) => toChatAnswer(await chat(toChatRequest(body, false), ctx)));
  },
  stream: (a) => {
    const native = a.native?.stream?.['cohere.chat'];
    if (native) return native;
    const chatStream = a.chatStream?.bind(a);
    return chatStream && (async (body, ctx) => cohereEvents(await chatStream(toChatRequest(body, true), ctx), newId()));
  },
  usage: (res) => fromCohereUsage(res['usage']),
  chunkUsage: (ev) => (ev.data['type'] === 'message-end' ? usageOfEnd(ev.data) : undefined),
};

function usageOfEnd(data: JsonObject): UsageSummary | undefined {
  const delta = data['delta'];
  return isRecord(delta) ? fromCohereUsage(delta['usage']) : undefined;
}

export const embedSpec: OperationSpec<EmbedRequest, JsonObject, never> = {
  requestType: 'embedding',
  label: 'embeddings',
  unary: (a) => {
    const native = a.native?.unary?.['cohere.embed'];
    if (native) return native;
    const embed = embeddingsOp.unary(a);
    return embed && (async (body, ctx) => toEmbedAnswer(await embed(toEmbeddingRequest(body), ctx), body, newId()));
  },
  usage: (res) => {
    const units = metaUnits(res);
    const input = typeof units?.['input_tokens'] === 'number' ? units['input_tokens'] : 0;
    return { prompt_tokens: input, completion_tokens: 0, total_tokens: input };
  },
};

/**
 * Same-format rerank on /cohere: the caller's body passes through to a provider with Cohere's rerank API. Billed
 * by search units (Cohere's `meta.billed_units.search_units`) at the model's per-unit price, as /v1/rerank is.
 */
export const rerankSpec: OperationSpec<RerankRequest, JsonObject, never> = {
  requestType: 'rerank',
  label: 'rerank (only providers with a native rerank API, such as cohere, serve it)',
  unary: (a) => a.native?.unary?.['cohere.rerank'],
  usage: (res) => {
    const units = metaUnits(res);
    const searches = typeof units?.['search_units'] === 'number' ? units['search_units'] : 0;
    return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, units: { search_units: searches } };
  },
  estimateUnits: (req) => ({ search_units: searchUnits(req.documents.length) }),
};

/** Token ids exist only in the model's own tokenizer: tokenize is Cohere's alone and costs nothing. */
export const tokenizeSpec: OperationSpec<TokenizeRequest, JsonObject, never> = {
  requestType: 'tokenize',
  label:
    'tokenize (token ids come from cohere’s tokenizer only; count tokens of other models with ' +
    '/anthropic/v1/messages/count_tokens or /v1/count_tokens)',
  unary: (a) => a.native?.unary?.['cohere.tokenize'],
  usage: () => undefined,
};

/**
 * Cohere's SSE: events go out as they came (native) or as translated, each under its own `event:` name; the
 * gateway's `extra_fields` ride on message-end. A failure after the stream started ends it the way Cohere ends
 * a failed generation: a message-end with finish_reason ERROR and the error's message.
 */
const chatStream: StreamCodec<ChatRequest, NativeEvent> = {
  contentType: SSE_CONTENT_TYPE,
  open() {
    return {
      usage: (e) => chatSpec.chunkUsage?.(e),
      chunk(e, extra) {
        const type = e.data['type'];
        const data = type === 'message-end' ? { ...e.data, extra_fields: extra() } : e.data;
        return sseFrame(JSON.stringify(data), e.event ?? (typeof type === 'string' ? type : undefined));
      },
      end: () => undefined,
      error: (env) =>
        sseFrame(
          JSON.stringify({
            type: 'message-end',
            id: env.event_id,
            delta: { finish_reason: 'ERROR', error: env.error.message },
          }),
          'message-end',
        ),
    };
  },
};

function doc(
  operationId: string,
  summary: string,
  body: z.ZodType,
  example: JsonObject,
  response: z.ZodType,
  description: string,
  sse = false,
): RouteDoc {
  return {
    operationId,
    summary,
    description,
    tags: ['Cohere'],
    body,
    bodyExamples: [example],
    responses: {
      200: {
        description: sse
          ? 'The answer with the gateway’s `extra_fields`; with `stream: true`, Cohere’s server-sent events'
          : 'The answer with the gateway’s `extra_fields`',
        json: response,
        ...(sse ? { text: 'text/event-stream' } : {}),
      },
    },
    errors: INFERENCE_ERRORS,
    errorBody: ERROR_BODY,
  };
}

const ROUTING =
  'A bare model goes to the `cohere` provider, body passed through as sent; `<provider>/<model>` goes to any provider';

function operation<Req extends { model: string }, Chunk>(
  spec: OperationSpec<Req, JsonObject, Chunk>,
  schema: z.ZodType<Req>,
  routeDoc: RouteDoc,
  check?: (body: Req) => void,
): FormatOperation<Req, JsonObject, Chunk> {
  return {
    format: cohereFormat,
    spec,
    doc: routeDoc,
    decode(parts): Decoded<Req> {
      const body = validated(schema, parts);
      check?.(body);
      return { body, model: body.model, stream: body['stream' as keyof Req] === true };
    },
    respond(res, extra) {
      // The answer was parsed for this request alone: annotate it in place rather than copy it.
      return Object.assign(res, { extra_fields: extra });
    },
  };
}

export const chatOperation: FormatOperation<ChatRequest, JsonObject, NativeEvent> = {
  ...operation(
    chatSpec,
    ChatRequest,
    doc(
      'cohereChat',
      'Chat (Cohere API v2)',
      ChatRequest,
      { model: 'command-a-03-2025', messages: [{ role: 'user', content: 'Say hello' }] },
      ChatView,
      `${ROUTING}, translated. Fallbacks: the \`x-gateway-fallbacks\` header.`,
      true,
    ),
  ),
  stream: chatStream,
  tools: cohereChatTools,
};

export const embedOperation = operation(
  embedSpec,
  EmbedRequest,
  doc(
    'cohereEmbed',
    'Embed (Cohere API v2)',
    EmbedRequest,
    { model: 'embed-v4.0', texts: ['hello'], input_type: 'search_document', embedding_types: ['float'] },
    EmbedView,
    `${ROUTING}'s embeddings (texts only; float or base64).`,
  ),
  (body) => {
    if (!body.texts && !body.images && !body.inputs) {
      throw new GatewayError('invalid_request', 'one of texts, images or inputs is required', { param: 'texts' });
    }
  },
);

export const rerankOperation = operation(
  rerankSpec,
  RerankRequest,
  doc(
    'cohereRerank',
    'Rerank (Cohere API v2)',
    RerankRequest,
    { model: 'rerank-v3.5', query: 'capital of France', documents: ['Paris is in France', 'Berlin'] },
    RerankView,
    'Served only by providers with a native rerank API (cohere); others answer 400. Usage is logged and charged ' +
      'in search units, as prompt tokens.',
  ),
);

export const tokenizeOperation = operation(
  tokenizeSpec,
  TokenizeRequest,
  doc(
    'cohereTokenize',
    'Tokenize (Cohere API v1)',
    TokenizeRequest,
    { model: 'command-a-03-2025', text: 'hello world' },
    TokenizeView,
    'Served by cohere models only (token ids belong to the model’s tokenizer); other providers answer 400. Not charged.',
  ),
);
