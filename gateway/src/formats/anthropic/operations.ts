// The Anthropic-format operations (Messages, count tokens): validated, then served natively by providers that
// speak the Messages API (the caller's body as it came, only the model rewritten) and through the unified chat
// schema by the others; answered as Anthropic Messages, streamed as its server-sent events.
import type { z } from 'zod';
import { formatIssues, issueParam } from '../../config/issues.ts';
import type { OperationSpec, UsageSummary } from '../../engine/operations.ts';
import { messagesReferences } from '../../engine/referenced-resources.ts';
import { GatewayError } from '../../http/errors.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { SSE_CONTENT_TYPE, sseFrame } from '../../http/stream-writer.ts';
import type { CallContext, JsonObject, NativeEvent, ProviderAdapter } from '../../providers/types.ts';
import { isRecord } from '../../util/records.ts';
import type { Decoded, FormatOperation, RequestParts, StreamCodec } from '../types.ts';
import { anthropicFormat } from './format.ts';
import { fromAnthropicUsage, toMessage } from './from-chat.ts';
import { CountTokensRequest, CountTokensView, ErrorView, MessagesRequest, MessageView } from './schema.ts';
import { messagesEvents } from './stream-from-chat.ts';
import { toChatRequest, toCountTokensRequest } from './to-chat.ts';
import { messagesTools } from './tools.ts';

type Json = Record<string, unknown>;

/** Errors an inference request can end in besides the edge's: governance and the upstream provider. */
const INFERENCE_ERRORS = [400, 402, 403, 404, 429, 502, 503, 504];

export const ERROR_BODY = {
  name: 'AnthropicError',
  schema: ErrorView,
  description: 'Anthropic’s error shape: `{"type":"error","error":{"type","message"}}`',
};

/**
 * Caller headers that select Anthropic API behaviour (beta features) and go upstream with a native call. They
 * are not credentials; the body cannot carry them, so they are kept beside it, by the body object.
 */
const SELECTOR_HEADERS = ['anthropic-beta'] as const;
const selectors = new WeakMap<object, Record<string, string>>();

function rememberSelectors(body: object, headers: RequestParts['headers']): void {
  const found: Record<string, string> = {};
  for (const name of SELECTOR_HEADERS) {
    const v = headers[name];
    if (v !== undefined) found[name] = Array.isArray(v) ? v.join(',') : v;
  }
  if (Object.keys(found).length > 0) selectors.set(body, found);
}

function withSelectors(body: object, ctx: CallContext): CallContext {
  const found = selectors.get(body);
  return found ? { ...ctx, forward_headers: { ...ctx.forward_headers, ...found } } : ctx;
}

/** Validates with `schema` and hands on the body as it came (a pass-through keeps every byte's meaning). */
function validated<T extends { model: string }>(schema: z.ZodType<T>, parts: RequestParts): T {
  const r = schema.safeParse(parts.body);
  if (!r.success) {
    const param = issueParam(r.error);
    throw new GatewayError('invalid_request', formatIssues(r.error), param ? { param } : {});
  }
  // The schema accepted this very value; its loose objects keep every field, so the raw body is the same data.
  const body = parts.body as T;
  rememberSelectors(body, parts.headers);
  return body;
}

function newId(): string {
  return `msg_${crypto.randomUUID().replaceAll('-', '')}`;
}

function bindChat(a: ProviderAdapter) {
  return a.chat ? a.chat.bind(a) : undefined;
}

export const messagesSpec: OperationSpec<MessagesRequest, JsonObject, NativeEvent> = {
  requestType: 'chat_completion',
  label: 'messages',
  unary: (a) => {
    const native = a.native?.unary?.['anthropic.messages'];
    if (native) return (body, ctx) => native(body, withSelectors(body, ctx));
    const chat = bindChat(a);
    return chat && (async (body, ctx) => toMessage(await chat(toChatRequest(body, false), ctx)));
  },
  stream: (a) => {
    const native = a.native?.stream?.['anthropic.messages'];
    if (native) return (body, ctx) => native(body, withSelectors(body, ctx));
    const chatStream = a.chatStream?.bind(a);
    return (
      chatStream &&
      (async (body, ctx) => messagesEvents(await chatStream(toChatRequest(body, true), ctx), ctx.model, newId()))
    );
  },
  usage: (res) => (isRecord(res['usage']) ? fromAnthropicUsage(res['usage']) : undefined),
  references: messagesReferences,
};

export const countTokensSpec: OperationSpec<CountTokensRequest, JsonObject, never> = {
  requestType: 'count_tokens',
  label: 'count tokens',
  unary: (a) => {
    const native = a.native?.unary?.['anthropic.count_tokens'];
    if (native) return (body, ctx) => native(body, withSelectors(body, ctx));
    const count = a.countTokens?.bind(a);
    return (
      count && (async (body, ctx) => ({ input_tokens: (await count(toCountTokensRequest(body), ctx)).input_tokens }))
    );
  },
  usage: () => undefined,
  references: messagesReferences,
};

/**
 * Messages SSE: events go out as they came (native) or as translated, each under its own `event:` name; the
 * gateway's `extra_fields` ride on message_delta. Usage is read from message_start and the cumulative
 * message_delta counts, natively and translated alike.
 */
const messagesStream: StreamCodec<MessagesRequest, NativeEvent> = {
  contentType: SSE_CONTENT_TYPE,
  open() {
    let counts: Json = {};
    return {
      usage(ev): UsageSummary | undefined {
        const type = ev.data['type'];
        if (type === 'message_start') {
          const message = ev.data['message'];
          const usage = isRecord(message) ? message['usage'] : undefined;
          counts = isRecord(usage) ? { ...usage } : {};
          return fromAnthropicUsage(counts);
        }
        if (type !== 'message_delta' || !isRecord(ev.data['usage'])) return undefined;
        for (const [k, v] of Object.entries(ev.data['usage'])) if (v != null) counts[k] = v;
        return fromAnthropicUsage(counts);
      },
      chunk(ev, extra) {
        const type = ev.data['type'];
        const data = type === 'message_delta' ? { ...ev.data, extra_fields: extra() } : ev.data;
        return sseFrame(JSON.stringify(data), ev.event ?? (typeof type === 'string' ? type : undefined));
      },
      end: () => undefined,
      error: (env) => sseFrame(JSON.stringify(anthropicFormat.error(env).body), 'error'),
    };
  },
};

const EXAMPLE = { model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'Say hello' }] };

const messagesDoc: RouteDoc = {
  operationId: 'anthropicCreateMessage',
  summary: 'Create a message (Anthropic Messages API)',
  description:
    'A bare model goes to the `anthropic` provider, body passed through as sent; `<provider>/<model>` goes to any ' +
    'provider, translated. Fallbacks: the `x-gateway-fallbacks` header.',
  tags: ['Anthropic'],
  body: MessagesRequest,
  bodyExamples: [EXAMPLE],
  responses: {
    200: {
      description: 'The message with the gateway’s `extra_fields`; with `stream: true`, Anthropic’s server-sent events',
      json: MessageView,
      text: 'text/event-stream',
    },
  },
  errors: INFERENCE_ERRORS,
  errorBody: ERROR_BODY,
};

const countDoc: RouteDoc = {
  operationId: 'anthropicCountTokens',
  summary: 'Count the input tokens of a message (Anthropic Messages API)',
  tags: ['Anthropic'],
  body: CountTokensRequest,
  bodyExamples: [{ model: EXAMPLE.model, messages: EXAMPLE.messages }],
  responses: { 200: { description: 'The token count', json: CountTokensView } },
  errors: INFERENCE_ERRORS,
  errorBody: ERROR_BODY,
};

export const messagesOperation: FormatOperation<MessagesRequest, JsonObject, NativeEvent> = {
  format: anthropicFormat,
  spec: messagesSpec,
  doc: messagesDoc,
  stream: messagesStream,
  tools: {
    ...messagesTools,
    next(body, res, outputs) {
      // The next step's body is a new object: the caller's beta headers go on with it.
      const next = messagesTools.next(body, res, outputs);
      const found = selectors.get(body);
      if (found) selectors.set(next, found);
      return next;
    },
  },
  decode(parts): Decoded<MessagesRequest> {
    const body = validated(MessagesRequest, parts);
    return { body, model: body.model, stream: body.stream === true };
  },
  respond(res, extra) {
    // The answer was parsed for this request alone: annotate it in place rather than copy it.
    return Object.assign(res, { extra_fields: extra });
  },
};

export const countTokensOperation: FormatOperation<CountTokensRequest, JsonObject, never> = {
  format: anthropicFormat,
  spec: countTokensSpec,
  doc: countDoc,
  decode(parts): Decoded<CountTokensRequest> {
    const body = validated(CountTokensRequest, parts);
    return { body, model: body.model, stream: false };
  },
  respond(res, extra) {
    return Object.assign(res, { extra_fields: extra });
  },
};
