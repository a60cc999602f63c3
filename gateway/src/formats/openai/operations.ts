// The OpenAI-format operations (chat, text completions, embeddings, responses, count tokens): validated with the
// unified schemas (which are OpenAI's), served by every provider through the engine's operation specs, answered
// with `extra_fields`, streamed as OpenAI's server-sent events.
import type { z } from 'zod';
import { formatIssues } from '../../config/issues.ts';
import {
  chatOp,
  countTokensOp,
  embeddingsOp,
  type OperationSpec,
  responsesOp,
  textCompletionOp,
} from '../../engine/operations.ts';
import { GatewayError } from '../../http/errors.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { SSE_CONTENT_TYPE, sseFrame } from '../../http/stream-writer.ts';
import { ChatRequest } from '../../schemas/chat.ts';
import { isPlainChatRequest } from '../../schemas/chat-quick.ts';
import { TextCompletionRequest } from '../../schemas/completions.ts';
import { CountTokensRequest } from '../../schemas/count-tokens.ts';
import { EmbeddingRequest } from '../../schemas/embeddings.ts';
import {
  ChatCompletionView,
  CountTokensView,
  EmbeddingListView,
  ResponseView,
  TextCompletionView,
} from '../../schemas/inference-views.ts';
import { ResponsesRequest } from '../../schemas/responses.ts';
import type {
  Decoded,
  FormatOperation,
  RequestParts,
  StreamCodec,
  StreamEncoder,
  ToolCodec,
  WireFormat,
} from '../types.ts';
import { chatTools, responsesTools } from './tools.ts';

interface ModelBody {
  model: string;
  fallbacks?: string[] | undefined;
  stream?: boolean | undefined;
  stream_options?: { include_usage?: boolean | undefined } | null | undefined;
}

/** Errors an inference request can end in besides the edge's: governance and the upstream provider. */
const INFERENCE_ERRORS = [400, 402, 403, 404, 429, 502, 503, 504];

const MODEL = 'openai/gpt-4o-mini';
const messages = [{ role: 'user', content: 'Say hello' }];

interface OpDef<Req extends ModelBody, Res, Chunk> {
  schema: z.ZodType<Req>;
  /** A cheap check that accepts only bodies the schema accepts unchanged; others (and all errors) go to the schema. */
  quickCheck?: (body: unknown) => body is Req;
  spec: OperationSpec<Req, Res, Chunk>;
  /** SSE framing: chat and text completions end with `data: [DONE]`; Responses events are named. */
  sse?: 'done-sentinel' | 'named-events';
  /** Function tools: MCP tools are injected and auto-executed (chat and Responses). */
  tools?: ToolCodec<Req, Res>;
  doc: { operationId: string; summary: string; tags: string[]; response: z.ZodType; example: Record<string, unknown> };
}

function routeDoc(def: OpDef<ModelBody, unknown, unknown>): RouteDoc {
  const json = {
    description: 'The answer (OpenAI wire format) with the gateway’s `extra_fields`',
    json: def.doc.response,
  };
  const sse = def.sse
    ? { text: 'text/event-stream', description: `${json.description}; with \`stream: true\`, server-sent events` }
    : {};
  return {
    operationId: def.doc.operationId,
    summary: def.doc.summary,
    tags: def.doc.tags,
    description: 'model is `<provider>/<model>` (or a model a virtual key routes); `fallbacks` are tried in order.',
    body: def.schema,
    bodyExamples: [def.doc.example],
    responses: { 200: { ...json, ...sse } },
    errors: INFERENCE_ERRORS,
  };
}

/** The request body as the operation's schema accepts it; the quick check spares the common body zod's walk. */
function validBody<Req>(schema: z.ZodType<Req>, quickCheck: ((b: unknown) => b is Req) | undefined, raw: unknown): Req {
  if (quickCheck?.(raw)) return raw;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new GatewayError('invalid_request', formatIssues(parsed.error));
  return parsed.data;
}

/** A chat/completions chunk that only carries usage (the include_usage chunk). */
function isUsageOnly(chunk: object): boolean {
  // Only reads optional fields, each checked before use.
  const c = chunk as { choices?: unknown[]; type?: unknown };
  return c.type === undefined && Array.isArray(c.choices) && c.choices.length === 0;
}

/** The chunk that closes a choice (or carries usage) also carries the gateway's extra_fields. */
function isFinal(chunk: object): boolean {
  // Only reads optional fields, each checked before use.
  const c = chunk as { usage?: unknown; choices?: { finish_reason?: unknown }[]; type?: unknown };
  if (c.usage) return true;
  if (c.type === 'response.completed' || c.type === 'response.incomplete') return true;
  return Array.isArray(c.choices) && c.choices.some((x) => x.finish_reason != null);
}

function sseCodec<Req extends ModelBody, Chunk extends object>(
  spec: OperationSpec<Req, unknown, Chunk>,
  framing: 'done-sentinel' | 'named-events',
): StreamCodec<Req, Chunk> {
  const named = framing === 'named-events';
  return {
    contentType: SSE_CONTENT_TYPE,
    open(body, governed): StreamEncoder<Chunk> {
      // Usage is needed to charge a governed stream: ask for it, and drop the usage-only chunk if the caller didn't.
      const callerWantsUsage = body.stream_options?.include_usage === true;
      if (governed && !callerWantsUsage && !named) {
        body.stream_options = { ...body.stream_options, include_usage: true };
      }
      return {
        usage: (chunk) => spec.chunkUsage?.(chunk),
        chunk(chunk, extra) {
          // The usage-only chunk the gateway asked for (cheap shape test first: this runs per chunk).
          if (!callerWantsUsage && !named && isUsageOnly(chunk) && spec.chunkUsage?.(chunk)) return undefined;
          const out = isFinal(chunk) ? { ...chunk, extra_fields: extra() } : chunk;
          // Named-event streams (Responses) carry their event name in `type`; read defensively.
          const type = named ? (chunk as { type?: unknown }).type : undefined;
          return sseFrame(JSON.stringify(out), typeof type === 'string' ? type : undefined);
        },
        end: () => (named ? undefined : sseFrame('[DONE]')),
        error: (env) => sseFrame(JSON.stringify(env), named ? 'error' : undefined),
      };
    },
  };
}

function operation<Req extends ModelBody, Res extends object, Chunk extends object>(
  format: WireFormat,
  def: OpDef<Req, Res, Chunk>,
): FormatOperation<Req, Res, Chunk> {
  const op: FormatOperation<Req, Res, Chunk> = {
    format,
    spec: def.spec,
    doc: routeDoc(def as unknown as OpDef<ModelBody, unknown, unknown>),
    decode(parts: RequestParts): Decoded<Req> {
      const body = validBody(def.schema, def.quickCheck, parts.body);
      return { body, model: body.model, fallbacks: body.fallbacks, stream: body.stream === true };
    },
    respond(res, extra) {
      // The response object was parsed for this request alone: annotate it in place rather than copy it.
      return Object.assign(res, { extra_fields: extra });
    },
  };
  const withTools = def.tools ? { ...op, tools: def.tools } : op;
  if (def.sse && def.spec.stream) return { ...withTools, stream: sseCodec(def.spec, def.sse) };
  return withTools;
}

export interface OpenAIOperations {
  chat: FormatOperation<ChatRequest, object, object>;
  completions: FormatOperation<TextCompletionRequest, object, object>;
  embeddings: FormatOperation<EmbeddingRequest, object, object>;
  responses: FormatOperation<ResponsesRequest, object, object>;
  countTokens: FormatOperation<CountTokensRequest, object, object>;
}

export function openaiOperations(format: WireFormat): OpenAIOperations {
  return {
    chat: operation(format, {
      schema: ChatRequest,
      quickCheck: isPlainChatRequest,
      spec: chatOp,
      sse: 'done-sentinel',
      tools: chatTools,
      doc: {
        operationId: 'createChatCompletion',
        summary: 'Create a chat completion',
        tags: ['Chat Completions'],
        response: ChatCompletionView,
        example: { model: MODEL, messages },
      },
    }),
    completions: operation(format, {
      schema: TextCompletionRequest,
      spec: textCompletionOp,
      sse: 'done-sentinel',
      doc: {
        operationId: 'createTextCompletion',
        summary: 'Create a text completion',
        tags: ['Text Completions'],
        response: TextCompletionView,
        example: { model: MODEL, prompt: 'Say hello' },
      },
    }),
    embeddings: operation(format, {
      schema: EmbeddingRequest,
      spec: embeddingsOp,
      doc: {
        operationId: 'createEmbedding',
        summary: 'Create embeddings',
        tags: ['Embeddings'],
        response: EmbeddingListView,
        example: { model: 'openai/text-embedding-3-small', input: 'hello' },
      },
    }),
    responses: operation(format, {
      schema: ResponsesRequest,
      spec: responsesOp,
      sse: 'named-events',
      tools: responsesTools,
      doc: {
        operationId: 'createResponse',
        summary: 'Create a response (Responses API)',
        tags: ['Responses'],
        response: ResponseView,
        example: { model: MODEL, input: 'Say hello' },
      },
    }),
    countTokens: operation(format, {
      schema: CountTokensRequest,
      spec: countTokensOp,
      doc: {
        operationId: 'countTokens',
        summary: 'Count the input tokens of a chat request',
        tags: ['Count Tokens'],
        response: CountTokensView,
        example: { model: MODEL, messages },
      },
    }),
  };
}
