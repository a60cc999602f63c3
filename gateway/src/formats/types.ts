// The contract of an inbound wire format (what a caller's SDK speaks), beside the outbound `providers/`.
// A format is a set of operations; each operation decodes the caller's request, names the engine operation
// that serves it (a same-format pass-through where the chosen provider speaks the format, a translation
// through the unified schema otherwise), and encodes the answer, the stream and errors back into the format.
// The inference core (routes/inference-route.ts) runs resolve, admit, key selection, the call, settlement and
// the log the same way for every format; a route only joins a path to one operation.
import type { OperationSpec, UsageSummary } from '../engine/operations.ts';
import type { ErrorEnvelope, ExtraFields } from '../http/errors.ts';
import type { Form, FormLimits } from '../http/multipart.ts';
import type { RouteDoc } from '../http/openapi.ts';

type Headers = Record<string, string | string[] | undefined>;

/** An error as the format's clients read it. */
export interface EncodedError {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface WireFormat {
  /** `openai`, `anthropic`, `genai`, `converse`, `cohere`. */
  readonly name: string;
  /**
   * The provider that serves a model named without `<provider>/` on this format's routes (`claude-sonnet-4-5`
   * on /anthropic goes to `anthropic`). Undefined: the format has no own provider (the unified `/v1` rule).
   */
  readonly defaultProvider: string | undefined;
  /** Every error of the format's routes (authentication, validation, governance, upstream) in its own shape. */
  error(env: ErrorEnvelope): EncodedError;
}

/** What a route hands the decoder. */
export interface RequestParts {
  /** The parsed JSON body, or the read form on an operation that takes `multipart/form-data` (see `multipart`). */
  body: unknown | Form;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  headers: Headers;
}

/** A request as the engine runs it. */
export interface Decoded<Req> {
  /** The body as the operation's spec takes it (the native body for a native operation). */
  body: Req;
  /** The model as the caller named it; logged as `original_model_requested`. */
  model: string;
  fallbacks?: readonly string[] | undefined;
  stream: boolean;
  /** Overrides the format's default provider for this route (Azure deployment paths go to `azure`). */
  defaultProvider?: string | undefined;
  /**
   * Overrides the operation's request type in logs and metrics, for a route that serves several operations
   * (Gemini's `{model}:{method}`: `embedding` for `:embedContent`).
   */
  requestType?: string | undefined;
}

/** Bytes of one framed stream piece (an SSE event, an AWS event-stream message, a JSON-array element). */
export type Frame = string | Uint8Array;

/** Encodes one streamed answer; created per request. */
export interface StreamEncoder<Chunk> {
  /** Overrides the codec's content type for this stream (Gemini's JSON-array stream is `application/json`). */
  readonly contentType?: string;
  /** The frame(s) for one chunk; undefined drops the chunk (e.g. a usage-only chunk the caller did not ask for). */
  chunk(chunk: Chunk, extra: () => ExtraFields): Frame | undefined;
  /** Usage carried by this chunk, if any (read for budgets and the log before `chunk` is called). */
  usage(chunk: Chunk): UsageSummary | undefined;
  /** The closing frame after the last chunk (`data: [DONE]`, `]`), if the format has one. */
  end(): Frame | undefined;
  /** A failure after the stream started, as the format's last frame. */
  error(env: ErrorEnvelope): Frame;
}

export interface StreamCodec<Req, Chunk> {
  /** `text/event-stream`, `application/vnd.amazon.eventstream`, `application/json` (a JSON-array stream). */
  readonly contentType: string;
  /**
   * Called before the engine runs a streamed request. `governed`: the request is charged by its usage, so the
   * encoder may ask the upstream for usage the caller did not request (and then drop it from the answer).
   */
  open(body: Req, governed: boolean): StreamEncoder<Chunk>;
}

/** One operation of a wire format. */
export interface FormatOperation<Req, Res, Chunk> {
  readonly format: WireFormat;
  /** How each provider serves it: natively (same format) or through the unified schema. */
  readonly spec: OperationSpec<Req, Res, Chunk>;
  /** Validates and decodes; throws GatewayError (400, naming the field) on bad input. */
  decode(parts: RequestParts): Decoded<Req>;
  /**
   * The unary answer as sent, with the gateway's additions (e.g. `extra_fields`); a `BinaryBody`
   * (providers/shared/binary.ts) is sent as bytes as they arrive.
   */
  respond(res: Res, extra: ExtraFields): unknown;
  /** Present: the operation also takes `multipart/form-data` bodies, read whole within these bounds. */
  readonly multipart?: FormLimits;
  /** Absent: the operation does not stream. */
  readonly stream?: StreamCodec<Req, Chunk>;
  /** Absent: the operation takes no function tools (no MCP tool injection, no auto-execution). */
  readonly tools?: ToolCodec<Req, Res>;
  /** The route's entry in /openapi.json. */
  readonly doc: RouteDoc;
}

/** A function tool as the gateway adds it to a request (an MCP tool under its `<client>-<tool>` name). */
export interface ToolDefinition {
  name: string;
  description?: string | undefined;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

/** One function call in a model's answer. */
export interface ToolCallOut {
  /** The call's id (chat `tool_calls[].id`, Responses `call_id`). */
  id: string;
  name: string;
  /** The arguments as the model wrote them: a JSON text, not yet parsed. */
  arguments: string;
}

/** A tool's result, as text for the model. */
export interface ToolOutput {
  id: string;
  name: string;
  output: string;
}

/** How an operation's requests carry function tools and its answers call them (the MCP tool loop's view). */
export interface ToolCodec<Req, Res> {
  /**
   * Names of the function tools the request already declares (the caller's own win over MCP tools); undefined
   * when this request takes no function tools (an embedding call on a route that serves several methods).
   */
  declared(body: Req): ReadonlySet<string> | undefined;
  /** Appends these tools to the request, after the caller's own (in place: the body is this request's own). */
  addTools(body: Req, tools: readonly ToolDefinition[]): void;
  /** The function calls the answer stops for; empty when the answer is final (or has several choices). */
  calls(res: Res): ToolCallOut[];
  /** The next request: the conversation with the answer's turn and the tools' outputs appended. */
  next(body: Req, res: Res, outputs: readonly ToolOutput[]): Req;
}
