// The provider-held resources (files, containers, stored responses and their items) the requests of a batch name. The provider
// runs a batch behind the gateway's key, so a request naming another tenant's file would have it read into the
// batch's output file, which the batch's creator downloads. Each request is read with the walker the inference
// path uses for what the provider will run (referenced-resources.ts), the ids are collected once across all
// requests, and a virtual key must own them all at the batch's provider before the batch is created (a Gemini
// input file's lines when it is uploaded: batch-input-scan.ts).
import { GatewayError } from '../http/errors.ts';
import type { ProviderAdapter } from '../providers/types.ts';
import type { Runtime } from '../runtime.ts';
import { isRecord } from '../util/records.ts';
import { chatReferences, genaiReferences, messagesReferences, responsesReferences } from './referenced-resources.ts';
import { firstUnowned, notFound, recordedId } from './resource-owners.ts';
import type { ResourceRef } from './resource-ref.ts';

/**
 * The most distinct resources one batch may name. Their owners are read in one query per kind, so this bounds
 * that query and the memory the ids take while the input is read; a larger batch is split by its caller.
 */
export const MAX_BATCH_REFS = 10_000;

/**
 * What a provider runs a batch's lines as, beside OpenAI's `{custom_id, url, body}` lines: `anthropic` sends
 * `{custom_id, params}` (and bodies at /v1/messages) as Messages requests, and OpenAI chat bodies translated;
 * `genai` sends `params` (and an input file's `{key, request}` lines) as GenerateContentRequests, and OpenAI chat
 * bodies translated. `openai` runs each line's body at its url (or the batch's endpoint).
 */
export type BatchDialect = 'openai' | 'anthropic' | 'genai';

type Json = Record<string, unknown>;
type Refs = readonly ResourceRef[] | undefined;

/** Pure: the resources one request of a batch names, read as `dialect` runs it. */
export function lineReferences(line: Json, endpoint: string, dialect: BatchDialect): Refs {
  const url = typeof line['url'] === 'string' ? line['url'] : endpoint;
  const params = isRecord(line['params']) ? line['params'] : undefined;
  const body = isRecord(line['body']) ? line['body'] : undefined;
  switch (dialect) {
    case 'anthropic': {
      // As the adapter's paramsOf decides: Anthropic's own params, or an OpenAI chat body it translates.
      const given = params ?? body;
      if (!given) return undefined;
      return line['params'] !== undefined || url === '/v1/messages' ? messages(given) : chat(given);
    }
    case 'genai': {
      const native = params ?? (isRecord(line['request']) ? line['request'] : undefined);
      if (native) return geminiRequestReferences(native);
      return body && chat(body);
    }
    case 'openai': {
      const given = body ?? params;
      if (!given) return undefined;
      // A line's url should be the batch's endpoint; when it is not, both are read, whichever the provider runs.
      const at = atEndpoint(url, given);
      return url === endpoint ? at : concat(at, atEndpoint(endpoint, given));
    }
  }
}

/** How a provider runs batch lines beside OpenAI's shape: as requests of the native API it speaks, if any. */
export function batchDialect(a: ProviderAdapter): BatchDialect {
  const native = a.native?.unary;
  if (native?.['anthropic.messages']) return 'anthropic';
  if (native?.['genai.generate_content']) return 'genai';
  return 'openai';
}

/**
 * Pure: the files a Gemini request of a batch names, as a GenerateContentRequest (or an EmbedContentRequest's
 * `content`). The /genai decoder renames proto names before its walker reads a body; a batch's requests reach
 * Google as the caller wrote them, and protobuf JSON takes a field by its JSON name (`fileData`) or its proto
 * name (`file_data`), so the Gemini walker reads the body under each spelling (a field given under both is read
 * both ways, whichever Google keeps).
 */
export function geminiRequestReferences(req: Json): Refs {
  const views = spellings(req);
  if (views.length === 1) {
    const body = views[0]!; // one view, just made
    const gen = genaiReferences({ action: 'generateContent', body });
    const embed = genaiReferences({ action: 'embedContent', body });
    return gen && embed ? [...gen, ...embed] : (gen ?? embed);
  }
  // Two views name mostly the same files: each once.
  const seen = new Map<string, ResourceRef>();
  for (const body of views) {
    for (const action of ['generateContent', 'embedContent']) {
      for (const ref of genaiReferences({ action, body }) ?? []) seen.set(`${ref.kind}\u0000${ref.id}`, ref);
    }
  }
  return seen.size > 0 ? [...seen.values()] : undefined;
}

/** The places the Gemini walker reads, in JSON names, once per spelling the caller used (usually one view). */
function spellings(req: Json): Json[] {
  if (!hasProtoName(req)) return [req];
  return [protoView(req, 'json'), protoView(req, 'proto')];
}

const PROTO_NAMES: Record<string, string> = {
  system_instruction: 'systemInstruction',
  file_data: 'fileData',
  file_uri: 'fileUri',
};

/** Whether a proto-named field the walker reads appears anywhere in the request (a cheap scan of its keys). */
function hasProtoName(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasProtoName);
  if (!isRecord(v)) return false;
  for (const [k, inner] of Object.entries(v)) if (k in PROTO_NAMES || hasProtoName(inner)) return true;
  return false;
}

/**
 * The request with the walker's proto-named fields under their JSON names: where a field is given under both,
 * `prefer` says which spelling wins, so reading both views reads both values.
 */
function protoView(v: unknown, prefer: 'json' | 'proto'): Json {
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk);
    if (!isRecord(x)) return x;
    const out: Json = {};
    for (const [k, inner] of Object.entries(x)) {
      const name = PROTO_NAMES[k];
      if (name === undefined) {
        if (!(k in out)) out[k] = walk(inner);
      } else if (prefer === 'proto' || !(name in x)) out[name] = walk(inner);
    }
    return out;
  };
  return walk(v) as Json;
}

/** The walker of an inference endpoint; endpoints without one (embeddings, completions) name nothing. */
function atEndpoint(endpoint: string, body: Json): Refs {
  switch (endpoint) {
    case '/v1/chat/completions':
      return chat(body);
    case '/v1/responses':
      return responsesReferences(body);
    case '/v1/messages':
      return messages(body);
    default:
      return undefined;
  }
}

// The walkers take decoded bodies; a batch line is any JSON, so its messages are kept to objects first.

function chat(body: Json): Refs {
  const list = body['messages'];
  return Array.isArray(list) ? chatReferences({ messages: list.filter(isRecord) }) : undefined;
}

function messages(body: Json): Refs {
  const list = body['messages'];
  return messagesReferences({
    messages: Array.isArray(list) ? list.filter(isRecord) : [],
    container: body['container'],
  });
}

function concat(a: Refs, b: Refs): Refs {
  return a && b ? [...a, ...b] : (a ?? b);
}

/** Where a request sits in the batch, for messages: `request 3 (custom_id "x")`. */
export function requestLabel(line: Json, n: number): string {
  const id = typeof line['custom_id'] === 'string' ? ` (custom_id ${JSON.stringify(line['custom_id'])})` : '';
  return `request ${n}${id}`;
}

/** The distinct resources a batch names (as recorded: `files/abc` and `abc` are one), each with the first request naming it. */
export class BatchReferences {
  private readonly first = new Map<string, { ref: ResourceRef; where: string }>();

  /** What a refusal points at (`requests` or `input_file_id`). */
  readonly param: string;

  constructor(param: string) {
    this.param = param;
  }

  /** Adds request `n`'s resources; past MAX_BATCH_REFS distinct ones the batch is refused (400). */
  add(line: Json, n: number, refs: Refs): void {
    if (refs) this.addAt(() => requestLabel(line, n), refs);
  }

  /** Adds the resources of the request `where` names (`line 3 (key "b")`), as `add` does. */
  addAt(where: () => string, refs: Refs): void {
    if (!refs) return;
    let label: string | undefined;
    for (const ref of refs) {
      const key = `${ref.kind}\u0000${recordedId(ref)}`;
      if (this.first.has(key)) continue;
      label ??= where();
      if (this.first.size >= MAX_BATCH_REFS) {
        throw new GatewayError(
          'invalid_request',
          `${label}: the batch names more than ${MAX_BATCH_REFS} distinct files, containers, stored responses and stored response items, the most one batch may name; split it into smaller batches`,
          { param: this.param },
        );
      }
      this.first.set(key, { ref, where: label });
    }
  }

  get size(): number {
    return this.first.size;
  }

  /** The resources, in the order the requests first name them. */
  entries(): readonly { ref: ResourceRef; where: string }[] {
    return [...this.first.values()];
  }
}

/**
 * A virtual key's proof that it owns every resource its batch names at `provider` (firstUnowned: one query per
 * kind). One it cannot prove answers 404 naming the first request that names it; unreadable records answer 503.
 */
export async function checkBatchReferences(
  rt: Runtime,
  vkId: string,
  provider: string,
  refs: BatchReferences,
): Promise<void> {
  if (refs.size === 0) return;
  const entries = refs.entries();
  const missing = await firstUnowned(
    rt,
    vkId,
    provider,
    entries.map((e) => e.ref),
  );
  if (!missing) return;
  const where = entries.find((e) => e.ref === missing)?.where;
  const message = notFound(missing).message;
  throw new GatewayError('not_found', where ? `${where}: ${message}` : message, { param: refs.param });
}
