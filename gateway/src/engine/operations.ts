// The inference operations: for each, which adapter method serves it (natively or through a bridge),
// and where its usage is. Adding an operation is one entry here plus a thin route.

import { ProviderError } from '../providers/errors.ts';
import type { CallContext, ProviderAdapter } from '../providers/types.ts';
import type { ChatChunk, ChatRequest, ChatResponse, Usage } from '../schemas/chat.ts';
import type { TextCompletionRequest, TextCompletionResponse } from '../schemas/completions.ts';
import type { CountTokensRequest, CountTokensResponse } from '../schemas/count-tokens.ts';
import { type EmbeddingRequest, type EmbeddingResponse, encodeAsRequested } from '../schemas/embeddings.ts';
import type {
  ResponsesRequest,
  ResponsesResponse,
  ResponsesStreamEvent,
  ResponsesUsage,
} from '../schemas/responses.ts';
import { isRecord } from '../util/records.ts';
import { chatReferences, responsesReferences } from './referenced-resources.ts';
import type { ResourceRef } from './resource-ref.ts';
import { eventItemIds, MAX_RECORDED_ITEMS, outputItemIds, RESPONSE_ITEM } from './response-items.ts';
import { chatStreamToResponses, chatToResponses, responsesToChat } from './responses-bridge.ts';

/**
 * What an operation that is not billed (only) by tokens is billed by: images generated (by size and quality),
 * seconds of audio or video, characters of speech input, document pages, search units. Each provider adapter
 * reports the units it knows from the request or the answer; the price table says what one unit costs.
 */
export interface BilledUnits {
  images?: number;
  /** `1024x1024`, as the request asked or the provider answered. */
  image_size?: string;
  /** `standard`, `hd`, `low`, `medium`, `high`. */
  image_quality?: string;
  /** Seconds of audio input (transcription, translation) or output (speech, where the provider bills it so). */
  audio_seconds?: number;
  /** Characters of text input (speech). */
  characters?: number;
  /** Document pages (OCR). */
  pages?: number;
  /** Seconds of video generated. */
  video_seconds?: number;
  /** `1792x1024`: the video's size, as the request asked or the provider answered (prices differ by size). */
  video_size?: string;
  /** Rerank searches (Cohere's search units). */
  search_units?: number;
  /** Code-interpreter containers created, in 1 GB containers (a 4 GB container is 4: the price scales with memory). */
  containers?: number;
}

/**
 * The tokens of one modality (audio, image) inside a usage's counts (realtime, audio and image models price them
 * apart from text tokens): subsets of the totals, never in addition to them.
 */
export interface ModalityTokens {
  /** Tokens of the modality among `prompt_tokens`, cached ones included. */
  prompt_tokens?: number;
  /** Cached ones: among the modality's prompt tokens and among `prompt_tokens_details.cached_tokens`. */
  cached_read_tokens?: number;
  /** Tokens of the modality among `completion_tokens`. */
  completion_tokens?: number;
}

export type AudioTokens = ModalityTokens;
export type ImageTokens = ModalityTokens;

/**
 * Usage in the unified (OpenAI chat) shape, details included (cost depends on cached tokens), the audio and image
 * tokens among its counts (each absent when there are none), and the non-token units of operations billed otherwise.
 */
export type UsageSummary = Usage & { units?: BilledUnits; audio?: AudioTokens; image?: ImageTokens };

type Unary<Req, Res> = (a: ProviderAdapter) => ((req: Req, ctx: CallContext) => Promise<Res>) | undefined;
type Streaming<Req, Chunk> = (
  a: ProviderAdapter,
) => ((req: Req, ctx: CallContext) => Promise<AsyncIterable<Chunk>>) | undefined;

export interface OperationSpec<Req, Res, Chunk> {
  requestType: string;
  label: string;
  unary: Unary<Req, Res>;
  stream?: Streaming<Req, Chunk>;
  usage(res: Res): UsageSummary | undefined;
  chunkUsage?(chunk: Chunk): UsageSummary | undefined;
  /**
   * The units the request will be billed by, estimated from it before the call (images asked for and their size,
   * characters to speak, a default allowance of seconds, ...), for the budget reservation at admission. Absent:
   * the reservation counts tokens only.
   */
  estimateUnits?(req: Req): BilledUnits | undefined;
  /**
   * The provider-held files and containers the request names (engine/referenced-resources.ts); a virtual key must
   * own each at the provider an attempt goes to. Absent: the operation's requests name none.
   */
  references?(req: Req): readonly ResourceRef[] | undefined;
  /**
   * Which of `references` an attempt at `adapter` must own, where that depends on how the adapter serves the
   * request (stored response items are read by id only by a native Responses API). Absent: all of them.
   */
  referencesAt?(refs: readonly ResourceRef[], adapter: ProviderAdapter, stream: boolean): readonly ResourceRef[];
  /**
   * What a successful answer leaves stored at the provider for later requests to name (a stored Response, which
   * `previous_response_id` continues, and its items, which `item_reference` names): its owner is recorded when a
   * virtual key creates it (engine/created-resources.ts), so `references` can hold other keys off it. Absent: the
   * operation stores nothing.
   */
  creates?: Creates<Req, Res, Chunk>;
}

export interface Creates<Req, Res, Chunk> {
  /** The owner record's kind, as `references` names it. */
  kind: string;
  /** Whether the request, served by this adapter (natively, not through a bridge), stores what it creates. */
  stores(req: Req, adapter: ProviderAdapter, stream: boolean): boolean;
  /** The id of what a whole answer created. */
  answerId(res: Res): string | undefined;
  /** The id a stream event carries, if it is the one that announces what the stream creates. */
  chunkId(chunk: Chunk): string | undefined;
  /** What the stored resource holds that later requests name by their own ids (a stored response's output items). */
  parts?: {
    kind: string;
    /** The most recorded for one stored resource (those past it answer 404 to virtual keys: fail closed). */
    max: number;
    /** The ids in a whole answer (at most `max`). */
    answerIds(res: Res): readonly string[];
    /** The ids a stream event carries, if any. */
    chunkIds(chunk: Chunk): readonly string[] | undefined;
  };
}

/**
 * The summary of a chat usage block: its counts, its cache details (cached reads and writes are priced apart) and
 * its audio tokens (`prompt_tokens_details.audio_tokens`, `completion_tokens_details.audio_tokens`; chat reports
 * no cached audio count). A block without audio gets no `audio`, so its cost takes the text-only path.
 */
export function fromChatUsage(u: Usage | null | undefined): UsageSummary | undefined {
  if (!u) return undefined;
  const out: UsageSummary = {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
  };
  const prompt = u.prompt_tokens_details;
  if (prompt) {
    const cached = prompt.cached_tokens;
    const written = prompt.cache_creation_tokens;
    if (cached || written) out.prompt_tokens_details = { cached_tokens: cached, cache_creation_tokens: written };
  }
  const audioIn = prompt?.audio_tokens;
  const audioOut = u.completion_tokens_details?.audio_tokens;
  if (audioIn || audioOut) out.audio = { prompt_tokens: audioIn, completion_tokens: audioOut };
  return out;
}

function bind<Req, Res>(fn: ((req: Req, ctx: CallContext) => Promise<Res>) | undefined, self: ProviderAdapter) {
  return fn ? (req: Req, ctx: CallContext) => fn.call(self, req, ctx) : undefined;
}

export const chatOp: OperationSpec<ChatRequest, ChatResponse, ChatChunk> = {
  requestType: 'chat_completion',
  label: 'chat completions',
  unary: (a) => bind(a.chat, a),
  stream: (a) => bind(a.chatStream, a),
  usage: (r) => fromChatUsage(r.usage),
  chunkUsage: (c) => fromChatUsage(c.usage),
  references: chatReferences,
};

export const textCompletionOp: OperationSpec<TextCompletionRequest, TextCompletionResponse, TextCompletionResponse> = {
  requestType: 'text_completion',
  label: 'text completions',
  unary: (a) => bind(a.textCompletion, a),
  stream: (a) => bind(a.textCompletionStream, a),
  usage: (r) => fromChatUsage(r.usage),
  chunkUsage: (c) => fromChatUsage(c.usage),
};

export const embeddingsOp: OperationSpec<EmbeddingRequest, EmbeddingResponse, never> = {
  requestType: 'embedding',
  label: 'embeddings',
  unary: (a) => {
    const fn = bind(a.embeddings, a);
    return fn && (async (req, ctx) => encodeAsRequested(req, await fn(req, ctx)));
  },
  usage: (r) => ({ prompt_tokens: r.usage.prompt_tokens, completion_tokens: 0, total_tokens: r.usage.total_tokens }),
};

export const countTokensOp: OperationSpec<CountTokensRequest, CountTokensResponse, never> = {
  requestType: 'count_tokens',
  label: 'count tokens',
  unary: (a) => bind(a.countTokens, a),
  usage: () => undefined,
  references: chatReferences,
};

/** A Responses usage block as the unified summary: cached input tokens are kept, since they are priced apart. */
export function responsesUsage(r: ResponsesResponse): UsageSummary | undefined {
  const u = r.usage;
  if (!u) return undefined;
  const out: UsageSummary = {
    prompt_tokens: u.input_tokens,
    completion_tokens: u.output_tokens,
    total_tokens: u.total_tokens,
  };
  // Optional on the wire although the type says otherwise: some providers' Responses answers omit the details.
  const cached = (u.input_tokens_details as ResponsesUsage['input_tokens_details'] | undefined)?.cached_tokens;
  if (cached) out.prompt_tokens_details = { cached_tokens: cached };
  return out;
}

function bridgedChatRequest(req: ResponsesRequest, stream: boolean): ChatRequest {
  const r = responsesToChat(req);
  if (!r.ok) throw new ProviderError('invalid_request', r.error);
  const chat: ChatRequest = { ...r.value, stream };
  if (stream) chat.stream_options = { include_usage: true };
  return chat;
}

/** Native Responses API where the provider has one; otherwise served through its chat API. */
export const responsesOp: OperationSpec<ResponsesRequest, ResponsesResponse, ResponsesStreamEvent> = {
  requestType: 'responses',
  label: 'responses',
  unary: (a) => {
    if (a.responses) return bind(a.responses, a);
    const chat = bind(a.chat, a);
    if (!chat) return undefined;
    return async (req, ctx) => {
      const res = await chat(bridgedChatRequest(req, false), ctx);
      return chatToResponses(res, req, {
        responseId: `resp_${crypto.randomUUID().replaceAll('-', '')}`,
        now: nowSec(),
      });
    };
  },
  stream: (a) => {
    if (a.responsesStream) return bind(a.responsesStream, a);
    const chatStream = bind(a.chatStream, a);
    if (!chatStream) return undefined;
    return async (req, ctx) => {
      const chunks = await chatStream(bridgedChatRequest(req, true), ctx);
      return chatStreamToResponses(chunks, req, {
        responseId: `resp_${crypto.randomUUID().replaceAll('-', '')}`,
        now: nowSec(),
      });
    };
  },
  usage: responsesUsage,
  chunkUsage: (ev) => {
    if (ev.type !== 'response.completed' && ev.type !== 'response.incomplete') return undefined;
    const resp = ev['response'];
    // Terminal Responses events carry the whole response object (OpenAI stream contract).
    return resp && typeof resp === 'object' ? responsesUsage(resp as ResponsesResponse) : undefined;
  },
  references: responsesReferences,
  // The chat bridge drops reasoning items and ignores ids (and refuses item references and hosted tool calls
  // itself): only a native Responses API reads stored items by id.
  referencesAt: (refs, a, stream) =>
    nativeResponses(a, stream) ? refs : refs.filter((ref) => ref.kind !== RESPONSE_ITEM),
  creates: {
    kind: 'response',
    // `store` defaults to true (OpenAI); a bridged answer's id is the gateway's own and is stored nowhere.
    stores: (req, a, stream) => req.store !== false && nativeResponses(a, stream),
    answerId: (r) => nonEmpty(r.id),
    chunkId: (ev) =>
      ev.type === 'response.created' && isRecord(ev['response']) ? nonEmpty(ev['response']['id']) : undefined,
    parts: {
      kind: RESPONSE_ITEM,
      max: MAX_RECORDED_ITEMS,
      answerIds: (r) => outputItemIds(r.output),
      chunkIds: eventItemIds,
    },
  },
};

function nativeResponses(a: ProviderAdapter, stream: boolean): boolean {
  return (stream ? a.responsesStream : a.responses) !== undefined;
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function nowSec(): number {
  return Math.floor(Date.now() / 1000);
}
