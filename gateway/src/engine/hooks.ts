// The hooks the engine calls plugins through (ARCHITECTURE: "called through pre and post hooks that the engine
// declares"). Only hooks a plugin uses are declared; a plugin adds its own here (the semantic cache: a lookup that
// may answer before the call, and a store after it; telemetry: spans around the request).
import type { Principal } from '../http/auth.ts';
import type { RequestLog } from '../state/services/log-rows.ts';
import type { ExecOutcome } from './execute.ts';
import type { InferenceInput } from './inference.ts';
import type { OperationSpec } from './operations.ts';

/** Sees each chunk of a stream as it is sent; never holds the chunks. */
export interface StreamContent {
  add(chunk: unknown): void;
  /** The streamed answer as the log stores it (undefined when nothing was understood). */
  result(): unknown;
}

/** What the cache lookup sees of a request, before routing. */
export interface CacheRequest {
  /** The request as the engine will run it (body as decoded, before a stream encoder or the engine touch it). */
  input: InferenceInput<unknown>;
  /** The caller's wire format (`openai`, `anthropic`, ...): a stored answer is replayed in the same format. */
  format: string;
  requestType: string;
  stream: boolean;
  /** Whose answer it is: entries are never shared between virtual keys (or other credentials). */
  principal: Principal | null;
}

/** `extra_fields.cache_debug` (spec: semantic cache debug record), on hits and misses. */
export interface CacheDebug {
  cache_hit: boolean;
  /** The entry served (a hit), or the id this request's answer is stored under (a miss). */
  cache_id: string;
  /** `direct` or `semantic`, on hits. */
  hit_type?: 'direct' | 'semantic';
  /** Only when the semantic search ran (the embedding model was called). */
  provider_used?: string;
  model_used?: string;
  input_tokens?: number;
  threshold?: number;
  /** The served entry's cosine similarity (semantic hits). */
  similarity?: number;
}

/** A stored answer: a unary answer, or a stream's chunks, as the engine produced them. */
export interface CacheHit {
  provider: string;
  model: string;
  stream: boolean;
  answer: unknown;
}

/** One request's cache: what was found, and how the answer is stored when nothing was. */
export interface CacheLookup {
  readonly debug: CacheDebug;
  readonly hit: CacheHit | undefined;
  /** A successful unary answer (read at once, stored in the background; not when no-store or too large). */
  store(value: unknown, outcome: ExecOutcome): void;
  /** Passes a stream through and stores its chunks only when it ends normally (never a failed or cut stream). */
  record<C>(chunks: AsyncIterable<C>, outcome: ExecOutcome): AsyncIterable<C>;
}

export interface EngineHooks {
  /**
   * Before routing: the operation this request runs. A plugin may wrap it; the wrapper sees each attempt's
   * provider and model (compat: convert a text completion to chat, chat to the Responses API, drop parameters).
   */
  operation<Req, Res, Chunk>(spec: OperationSpec<Req, Res, Chunk>): OperationSpec<Req, Res, Chunk>;
  /**
   * Before routing: the semantic cache's lookup. Undefined (synchronously, nothing allocated) while the cache is
   * off; resolves undefined when it does not apply to the request; throws a 400 GatewayError for a bad cache header.
   */
  cacheLookup(
    input: InferenceInput<unknown>,
    format: string,
    requestType: string,
    stream: boolean,
    principal: Principal | null,
  ): Promise<CacheLookup | undefined> | undefined;
  /** Whether the finish hook wants the request and response bodies (content logging); read once per request. */
  wantsContent(): boolean;
  /** When content is wanted: what a stream's chunks pass through on their way out (pieces the answer together). */
  streamContent(): StreamContent | undefined;
  /** After the answer left or the request failed: its log row (cost, tokens, latency, content when wanted). */
  finished(entry: RequestLog): void;
}
