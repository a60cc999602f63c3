// The contract every upstream provider implements. Providers are pure translators around one HTTP call:
// they never pick keys, retry, fall back or log (the engine does that).
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type {
  SpeechAudio,
  SpeechRequest,
  SpeechStreamEvent,
  TranscriptionRequest,
  TranscriptionResult,
  TranscriptionStreamEvent,
} from '../schemas/audio.ts';
import type { Batch, BatchCreateRequest, BatchList, BatchListQuery, BatchResultStream } from '../schemas/batches.ts';
import type { ChatChunk, ChatRequest, ChatResponse } from '../schemas/chat.ts';
import type { TextCompletionRequest, TextCompletionResponse } from '../schemas/completions.ts';
import type {
  ContainerCreateRequest,
  ContainerDeleted,
  ContainerFileDeleted,
  ContainerFileList,
  ContainerFileObject,
  ContainerFileSource,
  ContainerList,
  ContainerListQuery,
  ContainerObject,
} from '../schemas/containers.ts';
import type { CountTokensRequest, CountTokensResponse } from '../schemas/count-tokens.ts';
import type { EmbeddingRequest, EmbeddingResponse } from '../schemas/embeddings.ts';
import type { FileDeleted, FileList, FileListQuery, FileObject, FileUpload } from '../schemas/files.ts';
import type {
  ImageEditRequest,
  ImageGenerationRequest,
  ImageStreamEvent,
  ImagesResponse,
  ImageVariationRequest,
} from '../schemas/images.ts';
import type { ModelInfo } from '../schemas/models.ts';
import type { OcrRequest, OcrResponse } from '../schemas/ocr.ts';
import type { RerankRequest, RerankResponse } from '../schemas/rerank.ts';
import type { ResponsesRequest, ResponsesResponse, ResponsesStreamEvent } from '../schemas/responses.ts';
import type {
  VideoCreateRequest,
  VideoDeleted,
  VideoJob,
  VideoList,
  VideoListQuery,
  VideoRemixBody,
} from '../schemas/videos.ts';
import type { BinaryBody } from './shared/binary.ts';

export type Operation =
  | 'list_models'
  | 'chat'
  | 'chat_stream'
  | 'text_completion'
  | 'text_completion_stream'
  | 'embeddings'
  | 'responses'
  | 'responses_stream'
  | 'count_tokens'
  | 'speech'
  | 'speech_stream'
  | 'transcription'
  | 'transcription_stream'
  | 'translation'
  | 'rerank'
  | 'ocr'
  | 'image_generation'
  | 'image_generation_stream'
  | 'image_edit'
  | 'image_edit_stream'
  | 'image_variation';

/** A provider key as the engine hands it to a provider: secret values resolved. Never log this object. */
export interface ProviderKey {
  id: string;
  name: string;
  /** API key / token. Empty for keys that authenticate otherwise (bedrock credentials, vertex service account). */
  value: string;
  models: string[];
  weight: number;
  aliases: Record<string, string>;
  azure_key_config?: { endpoint: string; api_version?: string };
  /** Without access_key and secret_key the AWS default credential chain supplies the credentials. */
  bedrock_key_config?: { access_key?: string; secret_key?: string; region: string; session_token?: string };
  vertex_key_config?: { project_id: string; region: string; auth_credentials?: string };
  replicate_key_config?: { use_deployments_endpoint: boolean };
}

export interface NetworkConfig {
  /** Overrides the provider's default base URL (how tests point a provider at a fake). No trailing slash. */
  base_url?: string;
  timeout_ms: number;
  extra_headers: Record<string, string>;
  max_retries: number;
  retry_backoff_initial_ms: number;
  retry_backoff_max_ms: number;
  /** Bound on an upstream answer read whole, and on one event of a stream (network_config.max_response_size_mb). */
  max_response_bytes: number;
}

export interface CallContext {
  /** Configured provider name, e.g. `groq` (several names may share one implementation). */
  provider: string;
  /** Upstream model identifier after alias resolution. */
  model: string;
  key: ProviderKey;
  network: NetworkConfig;
  /** Aborts the upstream call (client went away, or the gateway timed out). */
  signal: AbortSignal;
  /** Shared keep-alive connection pool. */
  dispatcher: Dispatcher;
  /** Caller headers a virtual key allows through (`allowed_extra_headers`); never credentials. */
  forward_headers?: Record<string, string>;
}

/** A JSON object as a native API sends it; the gateway reads only the fields it needs and keeps the rest. */
export type JsonObject = Record<string, unknown>;

/** One event of a native stream: its SSE `event:` name (or AWS `:event-type`) and JSON payload. */
export interface NativeEvent {
  event?: string | undefined;
  data: JsonObject;
}

/**
 * Same-format pass-through calls, named `<inbound format>.<operation>`: the caller's native body (unknown fields
 * kept) goes upstream with only the model (and alias) rewritten to `ctx.model`, and the upstream's native answer
 * comes back as it was. A provider implements the ones its own API speaks; the engine translates through the
 * unified schema for the others.
 */
export type NativeOperation =
  | 'anthropic.messages'
  | 'anthropic.count_tokens'
  | 'genai.generate_content'
  | 'genai.embed_content'
  | 'genai.batch_embed_contents'
  | 'genai.count_tokens'
  | 'converse.converse'
  | 'converse.invoke'
  | 'converse.count_tokens'
  | 'cohere.chat'
  | 'cohere.embed'
  | 'cohere.rerank'
  | 'cohere.tokenize';

export type NativeUnary = (body: JsonObject, ctx: CallContext) => Promise<JsonObject>;
/** Resolves once the upstream answered with a success status (like the unified streaming methods). */
export type NativeStream = (body: JsonObject, ctx: CallContext) => Promise<AsyncIterable<NativeEvent>>;

export interface NativeCalls {
  unary?: Partial<Record<NativeOperation, NativeUnary>>;
  stream?: Partial<Record<NativeOperation, NativeStream>>;
}

/**
 * Streaming operations resolve once the upstream answered with a success status, so the engine can still
 * retry or fall back before the first byte reaches the client; the iterable then yields chunk by chunk.
 */
export interface ProviderAdapter {
  readonly name: string;
  listModels?(ctx: Omit<CallContext, 'model'>): Promise<ModelInfo[]>;
  chat?(req: ChatRequest, ctx: CallContext): Promise<ChatResponse>;
  chatStream?(req: ChatRequest, ctx: CallContext): Promise<AsyncIterable<ChatChunk>>;
  textCompletion?(req: TextCompletionRequest, ctx: CallContext): Promise<TextCompletionResponse>;
  textCompletionStream?(req: TextCompletionRequest, ctx: CallContext): Promise<AsyncIterable<TextCompletionResponse>>;
  embeddings?(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResponse>;
  /** Native Responses API only; the engine serves Responses through `chat` when this is absent. */
  responses?(req: ResponsesRequest, ctx: CallContext): Promise<ResponsesResponse>;
  responsesStream?(req: ResponsesRequest, ctx: CallContext): Promise<AsyncIterable<ResponsesStreamEvent>>;
  countTokens?(req: CountTokensRequest, ctx: CallContext): Promise<CountTokensResponse>;
  /** Resolves once the upstream answered 2xx; the audio bytes then arrive through `body`. */
  speech?(req: SpeechRequest, ctx: CallContext): Promise<SpeechAudio>;
  speechStream?(req: SpeechRequest, ctx: CallContext): Promise<AsyncIterable<SpeechStreamEvent>>;
  transcription?(req: TranscriptionRequest, ctx: CallContext): Promise<TranscriptionResult>;
  transcriptionStream?(req: TranscriptionRequest, ctx: CallContext): Promise<AsyncIterable<TranscriptionStreamEvent>>;
  translation?(req: TranscriptionRequest, ctx: CallContext): Promise<TranscriptionResult>;
  rerank?(req: RerankRequest, ctx: CallContext): Promise<RerankResponse>;
  ocr?(req: OcrRequest, ctx: CallContext): Promise<OcrResponse>;
  imageGeneration?(req: ImageGenerationRequest, ctx: CallContext): Promise<ImagesResponse>;
  imageGenerationStream?(req: ImageGenerationRequest, ctx: CallContext): Promise<AsyncIterable<ImageStreamEvent>>;
  imageEdit?(req: ImageEditRequest, ctx: CallContext): Promise<ImagesResponse>;
  imageEditStream?(req: ImageEditRequest, ctx: CallContext): Promise<AsyncIterable<ImageStreamEvent>>;
  imageVariation?(req: ImageVariationRequest, ctx: CallContext): Promise<ImagesResponse>;
  /** Same-format pass-through for the inbound wire formats this provider's API speaks (see NativeOperation). */
  native?: NativeCalls;
  /** Video generation jobs (OpenAI's `/v1/videos` shape); ids here are the provider's own. */
  videos?: VideoCalls;
  /** Files (OpenAI's `/v1/files` shape); ids here are the provider's own. */
  files?: FileCalls;
  /** Batch jobs (OpenAI's `/v1/batches` shape); ids here are the provider's own. */
  batches?: BatchCalls;
  /** Code-interpreter containers and their files (OpenAI's `/v1/containers` shape); ids are the provider's own. */
  containers?: ContainerCalls;
}

/** A provider's file calls; one left out is `unsupported_operation`. Model-less: `ctx.model` is empty. */
export interface FileCalls {
  upload?(up: FileUpload, ctx: CallContext): Promise<FileObject>;
  list?(query: FileListQuery, ctx: CallContext): Promise<FileList>;
  retrieve?(id: string, ctx: CallContext): Promise<FileObject>;
  delete?(id: string, ctx: CallContext): Promise<FileDeleted>;
  content?(id: string, ctx: CallContext): Promise<BinaryBody>;
  /** The Gemini API's file calls in Google's own shapes, for `/genai` (routes/native/genai-files.ts). */
  genai?: GenaiFileCalls;
}

/** A Gemini File resource or answer, as Google writes it. */
export type GoogleJson = Record<string, unknown>;

/** Gemini's Files API in its own wire shapes; upload sessions are Google's resumable protocol. */
export interface GenaiFileCalls {
  /** A whole upload in one call; `beforeFinalize` runs once the bytes have ended (a throw cancels). `{file}`. */
  upload(
    start: { metadata: GoogleJson; mimetype: string; length?: number | undefined },
    data: AsyncIterable<Uint8Array>,
    beforeFinalize: () => void,
    ctx: CallContext,
  ): Promise<GoogleJson>;
  /** Opens a session for bytes that come in several requests: Google's session URL (never shown to callers). */
  open(
    start: { metadata: GoogleJson; mimetype: string; length?: number | undefined },
    ctx: CallContext,
  ): Promise<string>;
  /** One request of bytes into a session; `json` is Google's `{file}` after the finalize. */
  chunk(
    session: string,
    chunk: { command: 'upload' | 'upload, finalize'; offset: number; body: Uint8Array | Readable },
    ctx: CallContext,
  ): Promise<{ status: string; json: GoogleJson | undefined }>;
  /** Best effort: drops a session that will not be finalized. */
  cancel(session: string, ctx: CallContext): Promise<void>;
  /** One page: Google's files, with `id` (their name) for the owner filter. */
  list(
    query: { limit?: number | undefined; after?: string | undefined },
    ctx: CallContext,
  ): Promise<{ data: { id: string; file: GoogleJson }[]; has_more: boolean; next_page_token: string | null }>;
  get(id: string, ctx: CallContext): Promise<GoogleJson>;
  delete(id: string, ctx: CallContext): Promise<GoogleJson>;
}

/** A provider's batch calls; `ctx.model` is the batch's model when the caller named one, else empty. */
export interface BatchCalls {
  /** Every request of a batch runs the batch's own `model` (Gemini): checking that model checks them all. */
  oneModel?: boolean;
  create?(req: BatchCreateRequest, ctx: CallContext): Promise<Batch>;
  retrieve?(id: string, ctx: CallContext): Promise<Batch>;
  list?(query: BatchListQuery, ctx: CallContext): Promise<BatchList>;
  cancel?(id: string, ctx: CallContext): Promise<Batch>;
  /** Resolves once the results are readable (the batch ended); they then arrive as they are read. */
  results?(id: string, ctx: CallContext): Promise<BatchResultStream>;
}

/** A provider's container calls; one left out is `unsupported_operation`. Model-less: `ctx.model` is empty. */
export interface ContainerCalls {
  create?(req: ContainerCreateRequest, ctx: CallContext): Promise<ContainerObject>;
  list?(query: ContainerListQuery, ctx: CallContext): Promise<ContainerList>;
  retrieve?(id: string, ctx: CallContext): Promise<ContainerObject>;
  delete?(id: string, ctx: CallContext): Promise<ContainerDeleted>;
  createFile?(containerId: string, file: ContainerFileSource, ctx: CallContext): Promise<ContainerFileObject>;
  listFiles?(containerId: string, query: ContainerListQuery, ctx: CallContext): Promise<ContainerFileList>;
  retrieveFile?(containerId: string, fileId: string, ctx: CallContext): Promise<ContainerFileObject>;
  deleteFile?(containerId: string, fileId: string, ctx: CallContext): Promise<ContainerFileDeleted>;
  /** Resolves once the upstream answered 2xx; the bytes then arrive as they are read. */
  fileContent?(containerId: string, fileId: string, ctx: CallContext): Promise<BinaryBody>;
}

/** A provider's video calls; one left out is `unsupported_operation`. Model-less calls get `ctx.model` empty. */
export interface VideoCalls {
  create?(req: VideoCreateRequest, ctx: CallContext): Promise<VideoJob>;
  retrieve?(id: string, ctx: CallContext): Promise<VideoJob>;
  list?(query: VideoListQuery, ctx: CallContext): Promise<VideoList>;
  delete?(id: string, ctx: CallContext): Promise<VideoDeleted>;
  remix?(id: string, body: VideoRemixBody, ctx: CallContext): Promise<VideoJob>;
  content?(id: string, variant: string | undefined, ctx: CallContext): Promise<BinaryBody>;
}
