// What an inference answer leaves stored at the provider for later requests to name (OperationSpec.creates: a
// stored Response, which `previous_response_id` continues, and its output items, which `item_reference` names).
// Its owner is recorded for the virtual key that created it, so the referenced-resources check holds other keys
// off it. Only virtual keys are checked, so only their requests are recorded: other callers' requests pay
// nothing. A failed write is logged by recordOwner; the resource then answers 404 to its creator too (fail
// closed).
import type { Runtime } from '../runtime.ts';
import type { ExecOutcome } from './execute.ts';
import type { Creates } from './operations.ts';
import { recordOwner, vkOwner } from './resource-owners.ts';
import type { ResourceRef } from './resource-ref.ts';

function stores<Req, Res, Chunk>(
  rt: Runtime,
  creates: Creates<Req, Res, Chunk>,
  req: Req,
  o: ExecOutcome,
  stream: boolean,
): boolean {
  const adapter = rt.adapters.get(o.provider);
  return adapter !== undefined && creates.stores(req, adapter, stream);
}

function record(rt: Runtime, vkId: string, o: ExecOutcome, refs: readonly ResourceRef[]): Promise<void> {
  return recordOwner(rt, { owner: vkOwner(vkId), vkId }, o.provider, refs, o.selectedKeyId);
}

/**
 * Records what a whole answer created, with the parts it holds under their own ids, in one write; awaited before
 * the answer is sent (the caller may follow up at once).
 */
export async function recordAnswer<Req, Res, Chunk>(
  rt: Runtime,
  creates: Creates<Req, Res, Chunk>,
  vkId: string,
  req: Req,
  res: Res,
  o: ExecOutcome,
): Promise<void> {
  if (!stores(rt, creates, req, o, false)) return;
  const id = creates.answerId(res);
  if (id === undefined) return;
  const refs: ResourceRef[] = [{ kind: creates.kind, id }];
  const parts = creates.parts;
  if (parts) for (const part of parts.answerIds(res)) refs.push({ kind: parts.kind, id: part });
  await record(rt, vkId, o, refs);
}

/**
 * The stream, recording what it creates when the event announcing it passes, and its parts as the events
 * carrying their ids pass. No event is held for a write; the stream's end is (the caller's follow-up usually
 * comes after it), so the records are in place by then.
 */
export function recordStream<Req, Res, Chunk>(
  rt: Runtime,
  creates: Creates<Req, Res, Chunk>,
  vkId: string,
  req: Req,
  o: ExecOutcome,
  chunks: AsyncIterable<Chunk>,
): AsyncIterable<Chunk> {
  return stores(rt, creates, req, o, true) ? watch(rt, creates, vkId, o, chunks) : chunks;
}

async function* watch<Req, Res, Chunk>(
  rt: Runtime,
  creates: Creates<Req, Res, Chunk>,
  vkId: string,
  o: ExecOutcome,
  chunks: AsyncIterable<Chunk>,
): AsyncGenerator<Chunk> {
  let written: Promise<void> | undefined;
  const spec = creates.parts;
  const parts = spec && new PartWriter(spec.kind, spec.max, (refs) => record(rt, vkId, o, refs));
  try {
    for await (const chunk of chunks) {
      if (written === undefined) {
        const id = creates.chunkId(chunk);
        if (id !== undefined) written = record(rt, vkId, o, [{ kind: creates.kind, id }]);
      }
      const ids = parts && spec?.chunkIds(chunk);
      if (ids) parts.add(ids);
      yield chunk;
    }
  } finally {
    // recordOwner never rejects (a failure is logged).
    if (written) await written;
    if (parts) await parts.settled();
  }
}

/**
 * Writes the part ids a stream announces, each once and at most `max`: the ids seen while a write is in flight go
 * together in the next one, so a stream costs a few statements, not one per event.
 */
class PartWriter {
  readonly #kind: string;
  readonly #max: number;
  readonly #write: (refs: readonly ResourceRef[]) => Promise<void>;
  readonly #seen = new Set<string>();
  #pending: string[] = [];
  #flight: Promise<void> | undefined;

  constructor(kind: string, max: number, write: (refs: readonly ResourceRef[]) => Promise<void>) {
    this.#kind = kind;
    this.#max = max;
    this.#write = write;
  }

  add(ids: readonly string[]): void {
    for (const id of ids) {
      if (this.#seen.has(id) || this.#seen.size >= this.#max) continue;
      this.#seen.add(id);
      this.#pending.push(id);
    }
    if (this.#flight === undefined && this.#pending.length > 0) this.#flight = this.#drain();
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const ids = this.#pending;
      this.#pending = [];
      await this.#write(ids.map((id) => ({ kind: this.#kind, id })));
    }
    this.#flight = undefined;
  }

  /** Resolves once every id added so far is written (or its failure logged). */
  async settled(): Promise<void> {
    while (this.#flight) await this.#flight;
  }
}
