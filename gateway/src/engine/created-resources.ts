// What an inference answer leaves stored at the provider for later requests to name (OperationSpec.creates: a
// stored Response, which `previous_response_id` continues). Its owner is recorded for the virtual key that
// created it, so the referenced-resources check holds other keys off it. Only virtual keys are checked, so only
// their requests are recorded: other callers' requests pay nothing. A failed write is logged by recordOwner; the
// resource then answers 404 to its creator too (fail closed).
import type { Runtime } from '../runtime.ts';
import type { ExecOutcome } from './execute.ts';
import type { Creates } from './operations.ts';
import { recordOwner, vkOwner } from './resource-owners.ts';

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

function record(rt: Runtime, kind: string, vkId: string, o: ExecOutcome, id: string): Promise<void> {
  return recordOwner(rt, { owner: vkOwner(vkId), vkId }, o.provider, [{ kind, id }], o.selectedKeyId);
}

/** Records what a whole answer created; awaited before the answer is sent (the caller may follow up at once). */
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
  if (id !== undefined) await record(rt, creates.kind, vkId, o, id);
}

/**
 * The stream, recording what it creates when the event announcing it passes. The event is not held for the
 * write; the stream's end is (the caller's follow-up usually comes after it), so a record is in place by then.
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
  try {
    for await (const chunk of chunks) {
      if (written === undefined) {
        const id = creates.chunkId(chunk);
        if (id !== undefined) written = record(rt, creates.kind, vkId, o, id);
      }
      yield chunk;
    }
  } finally {
    // recordOwner never rejects (a failure is logged).
    if (written) await written;
  }
}
