// The hooks the engine calls plugins through (ARCHITECTURE: "called through pre and post hooks that the engine
// declares"). Only hooks a plugin uses are declared; a plugin adds its own here (the semantic cache: a lookup that
// may answer before the call, and a store after it; telemetry: spans around the request).
import type { RequestLog } from '../state/services/log-rows.ts';
import type { OperationSpec } from './operations.ts';

/** Sees each chunk of a stream as it is sent; never holds the chunks. */
export interface StreamContent {
  add(chunk: unknown): void;
  /** The streamed answer as the log stores it (undefined when nothing was understood). */
  result(): unknown;
}

export interface EngineHooks {
  /**
   * Before routing: the operation this request runs. A plugin may wrap it; the wrapper sees each attempt's
   * provider and model (compat: convert a text completion to chat, chat to the Responses API, drop parameters).
   */
  operation<Req, Res, Chunk>(spec: OperationSpec<Req, Res, Chunk>): OperationSpec<Req, Res, Chunk>;
  /** Whether the finish hook wants the request and response bodies (content logging); read once per request. */
  wantsContent(): boolean;
  /** When content is wanted: what a stream's chunks pass through on their way out (pieces the answer together). */
  streamContent(): StreamContent | undefined;
  /** After the answer left or the request failed: its log row (cost, tokens, latency, content when wanted). */
  finished(entry: RequestLog): void;
}
