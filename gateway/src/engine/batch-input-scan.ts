// Gemini batch input files, checked where the gateway sees their bytes: the upload. Gemini runs an input file's
// lines (`{key, request}`) but serves an uploaded file back to nobody, so a batch cannot be read when it is
// created. Instead, a virtual key's JSONL upload to Gemini is read line by line as it streams through (one line
// held at most, within a byte bound), each line's request walked as an inline batch request is, and the files
// they name must be the key's own before the upload is finalized; a file that passes gets a `batch_input` owner
// row beside its `file` row, and a key's batch from an input file needs that row (routes/v1/batches.ts).
import type { Principal } from '../http/auth.ts';
import { GatewayError } from '../http/errors.ts';
import type { CallContext, ProviderAdapter } from '../providers/types.ts';
import type { Runtime } from '../runtime.ts';
import type { FileUpload } from '../schemas/files.ts';
import { isRecord } from '../util/records.ts';
import { BatchReferences, batchDialect, checkBatchReferences, geminiRequestReferences } from './batch-references.ts';
import { BATCH_INPUT, callerOwner, firstUnowned, recordedId } from './resource-owners.ts';
import type { ResourceRef } from './resource-ref.ts';

/** Media types of JSON Lines: Google's own examples upload batch input as `jsonl`. */
const JSONL_TYPES = new Set([
  'jsonl',
  'application/jsonl',
  'application/x-jsonl',
  'application/jsonlines',
  'application/x-jsonlines',
  'application/json-lines',
  'application/ndjson',
  'application/x-ndjson',
  'text/jsonl',
]);
const JSONL_NAME = /\.(jsonl|ndjson|jsonlines)$/i;

/** Pure: whether an upload is read as a batch input: a JSON Lines media type, or a `.jsonl` name (any type). */
export function scansAsBatchInput(filename: string, mimetype: string): boolean {
  const type = mimetype.split(';')[0]?.trim().toLowerCase() ?? '';
  return JSONL_TYPES.has(type) || JSONL_NAME.test(filename);
}

/** The `batch_input` owner row of a Gemini file (`files/abc` or `abc`), under the file's recorded id. */
export function batchInputRef(fileId: string): ResourceRef {
  return { kind: BATCH_INPUT, id: recordedId({ kind: 'file', id: fileId }) };
}

type Json = Record<string, unknown>;

/**
 * Pure: the lines of a batch input as its bytes arrive (`push`, then `end`). A line is `{key, request}` (or a
 * bare GenerateContentRequest, as Google's REST example writes them); the files each request names are
 * collected. The first line that is not JSON or not a request ends the reading: the file is then no batch
 * input, and the rest passes unread. While it is one, a line longer than `maxLineBytes` is refused (400), as
 * are more than MAX_BATCH_REFS distinct files.
 */
export class BatchInputLines {
  readonly refs = new BatchReferences('file');
  readonly #maxLineBytes: number;
  /** The start of the line being read, copied out of the chunks it came in. */
  #held: Buffer[] = [];
  #heldBytes = 0;
  #line = 0;
  #requests = 0;
  #batch = true;

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  push(chunk: Uint8Array): void {
    if (!this.#batch) return;
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let nl = buf.indexOf(10); nl >= 0 && this.#batch; nl = buf.indexOf(10, start)) {
      const piece = buf.subarray(start, nl);
      start = nl + 1;
      this.#bound(piece.length);
      if (this.#heldBytes === 0) this.#take(piece);
      else {
        this.#held.push(piece);
        this.#take(Buffer.concat(this.#held));
      }
      this.#held = [];
      this.#heldBytes = 0;
    }
    if (this.#batch && start < buf.length) {
      const rest = buf.subarray(start);
      this.#bound(rest.length);
      this.#held.push(Buffer.from(rest));
      this.#heldBytes += rest.length;
    }
  }

  /** The files the requests name, or undefined when the bytes were not a batch input (or held no request). */
  end(): BatchReferences | undefined {
    if (this.#batch && this.#heldBytes > 0) this.#take(Buffer.concat(this.#held));
    this.#held = [];
    return this.#batch && this.#requests > 0 ? this.refs : undefined;
  }

  #bound(more: number): void {
    if (this.#heldBytes + more <= this.#maxLineBytes) return;
    throw new GatewayError(
      'invalid_request',
      `file: line ${this.#line + 1} of this JSONL file is longer than ${this.#maxLineBytes} bytes, the most a line of a Gemini batch input may be (network_config.max_response_size_mb), so its requests cannot be checked`,
      { param: 'file' },
    );
  }

  #take(bytes: Buffer): void {
    const n = ++this.#line;
    const text = bytes.toString('utf8').trim();
    if (text === '') return;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      v = undefined;
    }
    const request = isRecord(v) ? v['request'] : undefined;
    const body = isRecord(request) ? request : isRecord(v) && Array.isArray(v['contents']) ? v : undefined;
    if (!body || !isRecord(v)) {
      this.#batch = false;
      return;
    }
    this.#requests++;
    this.refs.addAt(() => lineLabel(v, n), geminiRequestReferences(body));
  }
}

/** Where a request sits in the file, for messages: `line 3 (key "b")`. */
function lineLabel(line: Json, n: number): string {
  const key = line['key'];
  return typeof key === 'string' ? `line ${n} (key ${JSON.stringify(key.slice(0, 200))})` : `line ${n}`;
}

/** An upload read as a batch input on its way through. */
export interface BatchInputScan {
  upload: FileUpload;
  /** Whether the bytes were a batch input naming only the key's own files: the file is then recorded as one. */
  passed(): boolean;
}

/**
 * A virtual key's JSONL upload to a provider whose batches run Gemini requests, read as it passes: its bytes
 * are the caller's, unchanged, and when they end as a batch input, the key must own every file its lines name
 * at the provider (404 naming the line; 503 when the owner records cannot be read) before the provider's
 * upload gets its last chunk, so a refused file is never finalized. Undefined when nothing is to be read:
 * gateway tokens, admins and keyless callers, other providers and other media types.
 */
export function scanBatchInput(
  rt: Runtime,
  principal: Principal | null,
  adapter: ProviderAdapter,
  ctx: CallContext,
  up: FileUpload,
): BatchInputScan | undefined {
  const vkId = callerOwner(principal).vkId;
  if (vkId === undefined || !adapter.batches?.create || batchDialect(adapter) !== 'genai') return undefined;
  if (!scansAsBatchInput(up.filename, up.mimetype)) return undefined;
  const key: string = vkId;
  const lines = new BatchInputLines(ctx.network.max_response_bytes);
  let passed = false;
  async function* data(): AsyncIterable<Uint8Array> {
    for await (const chunk of up.data) {
      lines.push(chunk);
      yield chunk;
    }
    const refs = lines.end();
    if (!refs) return;
    await checkBatchReferences(rt, key, ctx.provider, refs);
    passed = true;
  }
  return { upload: { ...up, data: data() }, passed: () => passed };
}

/**
 * A virtual key's batch from an input file at a Gemini-speaking provider: the file must have been checked as
 * the key's batch input when it was uploaded. One that was not (uploaded before the check existed, not JSONL
 * of requests, or not the key's) is refused with 400 saying so; 503 when the record cannot be read.
 */
export async function requireBatchInput(rt: Runtime, vkId: string, provider: string, fileId: string): Promise<void> {
  if (!(await firstUnowned(rt, vkId, provider, [batchInputRef(fileId)]))) return;
  throw new GatewayError(
    'invalid_request',
    `input_file_id: file ${fileId.slice(0, 200)} was not checked as a batch input when it was uploaded, so a virtual key cannot run it; upload it again through the gateway as JSON Lines (a .jsonl name or the jsonl media type) of {key, request} lines`,
    { param: 'input_file_id' },
  );
}
