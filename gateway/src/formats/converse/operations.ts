// The Bedrock runtime operations (Converse, ConverseStream, InvokeModel, InvokeModelWithResponseStream,
// CountTokens): validated, then served natively by the bedrock provider (the caller's body as it came, only the
// model id in the path rewritten) and, for Converse and CountTokens, through the unified chat schema by the
// other providers; streamed as AWS event-stream messages.
import { z } from 'zod';
import { formatIssues, issueParam } from '../../config/issues.ts';
import type { OperationSpec, UsageSummary } from '../../engine/operations.ts';
import { GatewayError } from '../../http/errors.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { INVOKE_USAGE, type InvokeUsage } from '../../providers/bedrock/native.ts';
import { ProviderError } from '../../providers/errors.ts';
import type { JsonObject, NativeEvent } from '../../providers/types.ts';
import { stringIssue } from '../../schemas/strings.ts';
import type { Decoded, FormatOperation, RequestParts, StreamCodec } from '../types.ts';
import { EVENT_STREAM_CONTENT_TYPE, eventFrame, exceptionFrame } from './event-stream.ts';
import { converseFormat } from './format.ts';
import { fromChatResponse, fromTokenUsage } from './from-chat.ts';
import { invokeStreamUsage, invokeUsage } from './invoke-usage.ts';
import {
  ConverseRequest,
  ConverseResponseView,
  CountTokensRequest,
  CountTokensView,
  ErrorView,
  InvokeRequest,
  InvokeResponseView,
} from './schema.ts';
import { converseEvents } from './stream-from-chat.ts';
import { toChatRequest, toCountTokensRequest } from './to-chat.ts';
import { converseTools } from './tools.ts';

const INFERENCE_ERRORS = [400, 402, 403, 404, 429, 500, 502, 503, 504];

export const ERROR_BODY = {
  name: 'ConverseError',
  schema: ErrorView,
  description: 'The Bedrock runtime’s error shape `{message, type}`; the exception name is also in `x-amzn-errortype`',
};

/** The path's model id (the router decoded `%3A`/`%2F`): one line, not a dot segment, at most 2048 characters. */
function modelIdOf(parts: RequestParts): string {
  const id = parts.params['modelId'] ?? '';
  const problem =
    id === '' || id === '.' || id === '..'
      ? 'must name a model'
      : id.length > 2048
        ? 'is longer than 2048 characters'
        : stringIssue(id, 'line');
  if (problem) throw new GatewayError('invalid_request', `modelId ${problem}`, { param: 'modelId' });
  return id;
}

/** Validates with `schema` and hands on the body as it came (a pass-through keeps every field). */
function validated<T>(schema: z.ZodType<T>, parts: RequestParts): T {
  const r = schema.safeParse(parts.body);
  if (!r.success) {
    const param = issueParam(r.error);
    throw new GatewayError('invalid_request', formatIssues(r.error), param ? { param } : {});
  }
  // The schema accepted this very value; its loose objects keep every field, so the raw body is the same data.
  return parts.body as T;
}

/** A prompt-management ARN carries its own messages; every other Converse call needs some. */
function requireMessages(body: ConverseRequest, modelId: string): void {
  if (modelId.includes(':prompt/')) return;
  if (!body.messages || body.messages.length === 0) {
    throw new GatewayError('invalid_request', 'messages: at least one message is required', { param: 'messages' });
  }
}

export const converseSpec: OperationSpec<ConverseRequest, JsonObject, NativeEvent> = {
  requestType: 'chat_completion',
  label: 'converse',
  unary: (a) => {
    const native = a.native?.unary?.['converse.converse'];
    if (native) return native;
    const chat = a.chat?.bind(a);
    return (
      chat &&
      (async (body, ctx) => {
        const started = Date.now();
        const res = await chat(toChatRequest(body, ctx.model, false), ctx);
        return fromChatResponse(res, Date.now() - started);
      })
    );
  },
  stream: (a) => {
    const native = a.native?.stream?.['converse.converse'];
    if (native) return native;
    const chatStream = a.chatStream?.bind(a);
    return (
      chatStream && (async (body, ctx) => converseEvents(await chatStream(toChatRequest(body, ctx.model, true), ctx)))
    );
  },
  usage: (res) => fromTokenUsage(res['usage']),
  chunkUsage: (ev) => (ev.event === 'metadata' ? fromTokenUsage(ev.data['usage']) : undefined),
};

/** InvokeModel's body is the model family's own format: only Bedrock takes it (docs/formats/cloudconv.md). */
export const invokeSpec: OperationSpec<JsonObject, JsonObject, NativeEvent> = {
  requestType: 'chat_completion',
  label: 'invoke model',
  unary: (a) => a.native?.unary?.['converse.invoke'],
  stream: (a) => a.native?.stream?.['converse.invoke'],
  usage: (res) => {
    // Set by the bedrock provider from Bedrock's token-count headers (providers/bedrock/native.ts).
    const counted = (res as { [INVOKE_USAGE]?: InvokeUsage })[INVOKE_USAGE];
    return counted ? usageOf(counted.inputTokens, counted.outputTokens) : invokeUsage(res);
  },
  chunkUsage: (ev) => (ev.event === 'chunk' ? invokeStreamUsage(ev.data) : undefined),
};

function usageOf(input: number, output: number): UsageSummary {
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

export const countTokensSpec: OperationSpec<CountTokensRequest, JsonObject, never> = {
  requestType: 'count_tokens',
  label: 'count tokens',
  unary: (a) => {
    const native = a.native?.unary?.['converse.count_tokens'];
    if (native) return native;
    const count = a.countTokens?.bind(a);
    return (
      count &&
      (async (body, ctx) => {
        const converse = body.input.converse;
        if (!converse) {
          throw new ProviderError(
            'invalid_request',
            'input.invokeModel: a model-native body can only be counted by bedrock',
          );
        }
        return { inputTokens: (await count(toCountTokensRequest(converse, ctx.model), ctx)).input_tokens };
      })
    );
  },
  usage: () => undefined,
};

/** Events go out as they came (native) or as translated; the gateway's `extra_fields` ride on `extraOn`. */
function eventStreamCodec<Req>(
  spec: OperationSpec<Req, JsonObject, NativeEvent>,
  extraOn: string | undefined,
): StreamCodec<Req, NativeEvent> {
  return {
    contentType: EVENT_STREAM_CONTENT_TYPE,
    open() {
      return {
        usage: (ev) => spec.chunkUsage?.(ev),
        chunk(ev, extra) {
          const name = ev.event ?? 'chunk';
          return eventFrame(name, name === extraOn ? { ...ev.data, extra_fields: extra() } : ev.data);
        },
        end: () => undefined,
        error: (env) => exceptionFrame(env),
      };
    },
  };
}

const MODEL_PARAM = z.object({
  modelId: z
    .string()
    .min(1)
    .max(2048)
    .describe('a Bedrock model id, inference-profile ARN, key alias or `<provider>/<model>`, percent-encoded'),
});

const MODEL_PARAM_DOC =
  'The model id is in the path (percent-encoded; an inference-profile ARN works): a bare id goes to the `bedrock` ' +
  'provider, `<provider>/<model>` to any provider.';

function doc(
  operationId: string,
  summary: string,
  body: z.ZodType,
  example: unknown,
  ok: RouteDoc['responses'][number],
  description: string,
): RouteDoc {
  return {
    operationId,
    summary,
    description: `${MODEL_PARAM_DOC} ${description}`,
    tags: ['Bedrock runtime'],
    params: MODEL_PARAM,
    body,
    bodyExamples: [example],
    responses: { 200: ok },
    errors: INFERENCE_ERRORS,
    errorBody: ERROR_BODY,
  };
}

const CONVERSE_EXAMPLE = { messages: [{ role: 'user', content: [{ text: 'Say hello' }] }] };

function converseOperation(stream: boolean): FormatOperation<ConverseRequest, JsonObject, NativeEvent> {
  const op: FormatOperation<ConverseRequest, JsonObject, NativeEvent> = {
    format: converseFormat,
    spec: converseSpec,
    doc: stream
      ? doc(
          'bedrockConverseStream',
          'Stream a conversation (Bedrock ConverseStream)',
          ConverseRequest,
          CONVERSE_EXAMPLE,
          { description: 'ConverseStream events in the AWS event-stream framing', text: EVENT_STREAM_CONTENT_TYPE },
          'Fallbacks: the body’s `fallbacks`.',
        )
      : doc(
          'bedrockConverse',
          'Converse with a model (Bedrock Converse)',
          ConverseRequest,
          CONVERSE_EXAMPLE,
          { description: 'The Converse response with the gateway’s `extra_fields`', json: ConverseResponseView },
          'Fallbacks: the body’s `fallbacks`.',
        ),
    decode(parts): Decoded<ConverseRequest> {
      const model = modelIdOf(parts);
      const body = validated(ConverseRequest, parts);
      requireMessages(body, model);
      const { fallbacks, ...upstream } = body;
      return { body: upstream, model, fallbacks, stream };
    },
    respond(res, extra) {
      // The answer was parsed for this request alone: annotate it in place rather than copy it.
      return Object.assign(res, { extra_fields: extra });
    },
  };
  const withTools = { ...op, tools: converseTools };
  return stream ? { ...withTools, stream: eventStreamCodec(converseSpec, 'metadata') } : withTools;
}

function invokeOperation(stream: boolean): FormatOperation<JsonObject, JsonObject, NativeEvent> {
  const op: FormatOperation<JsonObject, JsonObject, NativeEvent> = {
    format: converseFormat,
    spec: invokeSpec,
    doc: stream
      ? doc(
          'bedrockInvokeModelWithResponseStream',
          'Invoke a model, streamed (Bedrock InvokeModelWithResponseStream)',
          InvokeRequest,
          { anthropic_version: 'bedrock-2023-05-31', max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] },
          { description: '`chunk` events whose `bytes` hold the model’s own JSON', text: EVENT_STREAM_CONTENT_TYPE },
          'The model-native body goes to Bedrock as sent; other providers answer 400. Fallbacks: `x-gateway-fallbacks`.',
        )
      : doc(
          'bedrockInvokeModel',
          'Invoke a model (Bedrock InvokeModel)',
          InvokeRequest,
          { anthropic_version: 'bedrock-2023-05-31', max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] },
          { description: 'The model’s own JSON answer, as Bedrock sent it', json: InvokeResponseView },
          'The model-native body goes to Bedrock as sent; other providers answer 400. Fallbacks: `x-gateway-fallbacks`.',
        ),
    decode(parts): Decoded<JsonObject> {
      const model = modelIdOf(parts);
      return { body: validated(InvokeRequest, parts), model, stream };
    },
    respond: (res) => res,
  };
  return stream ? { ...op, stream: eventStreamCodec(invokeSpec, undefined) } : op;
}

export const cloudconvOperations = {
  converse: converseOperation(false),
  converseStream: converseOperation(true),
  invoke: invokeOperation(false),
  invokeStream: invokeOperation(true),
  countTokens: {
    format: converseFormat,
    spec: countTokensSpec,
    doc: doc(
      'bedrockCountTokens',
      'Count the input tokens of a request (Bedrock CountTokens)',
      CountTokensRequest,
      { input: { converse: CONVERSE_EXAMPLE } },
      { description: 'The input token count', json: CountTokensView },
      '`input.invokeModel` bodies can only be counted by Bedrock.',
    ),
    decode(parts): Decoded<CountTokensRequest> {
      const model = modelIdOf(parts);
      return { body: validated(CountTokensRequest, parts), model, stream: false };
    },
    respond: (res) => res,
  } satisfies FormatOperation<CountTokensRequest, JsonObject, never>,
};
