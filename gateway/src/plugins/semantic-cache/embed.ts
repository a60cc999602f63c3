// The semantic layer's embedding call, run through the engine like any embeddings request: routed, governed
// (charged to the caller's virtual key), keyed, retried, logged under its own request id. Bounded in time.

import {
  causeOf,
  finish,
  type InferenceInput,
  outcomeOfError,
  type Prepared,
  prepare,
  runUnary,
} from '../../engine/inference.ts';
import { embeddingsOp } from '../../engine/operations.ts';
import type { Owners } from '../../governance/limits.ts';
import { toEnvelope } from '../../http/errors.ts';
import type { Runtime } from '../../runtime.ts';
import type { EmbeddingRequest, EmbeddingResponse } from '../../schemas/embeddings.ts';
import { timeOrderedId } from '../../state/ids.ts';

/** How long the embedding call may take before the request goes on as a miss. */
export const EMBEDDING_TIMEOUT_MS = 10_000;

export interface EmbedRequest {
  /** `<provider>/<model>`. */
  model: string;
  text: string;
  dimensions: number | undefined;
  owners: Owners;
  /** The caller's request: its end aborts the embedding call too. */
  signal: AbortSignal;
}

export interface Embedded {
  vector: number[];
  provider: string;
  model: string;
  inputTokens: number;
}

export type Embedder = (r: EmbedRequest) => Promise<Embedded>;

/** An embedder over the engine of this runtime. */
export function engineEmbedder(rt: Runtime, timeoutMs = EMBEDDING_TIMEOUT_MS): Embedder {
  return async (r) => {
    const id = timeOrderedId();
    const body: EmbeddingRequest = {
      model: r.model,
      input: r.text,
      encoding_format: 'float',
      ...(r.dimensions ? { dimensions: r.dimensions } : {}),
    };
    const input: InferenceInput<EmbeddingRequest> = {
      id,
      body,
      model: r.model,
      fallbacks: undefined,
      headers: {},
      owners: r.owners,
      signal: AbortSignal.any([r.signal, AbortSignal.timeout(timeoutMs)]),
      startedAt: rt.now(),
    };
    const log = {
      id,
      requestType: 'embedding',
      model: r.model,
      stream: false,
      startedAt: input.startedAt,
      owners: r.owners,
    };
    let prepared: Prepared | undefined;
    try {
      prepared = prepare(rt, input);
      const { value, outcome } = await runUnary(rt, embeddingsOp, input, prepared);
      const usage = embeddingsOp.usage(value);
      finish(rt, {
        ...log,
        outcome,
        statusCode: 200,
        usage,
        error: undefined,
        prepared,
        started: true,
        input: body,
        output: value,
      });
      return {
        vector: vectorOf(value),
        provider: outcome.provider,
        model: outcome.resolvedModel,
        inputTokens: usage?.prompt_tokens ?? 0,
      };
    } catch (err) {
      if (err instanceof EmbeddingShapeError) throw err;
      const env = toEnvelope(causeOf(err), id);
      finish(rt, {
        ...log,
        outcome: outcomeOfError(err),
        statusCode: env.status_code,
        usage: undefined,
        error: env.error,
        prepared,
        started: false,
        input: body,
      });
      throw err;
    }
  };
}

export class EmbeddingShapeError extends Error {
  override readonly name = 'EmbeddingShapeError';
}

/** The one vector of the answer, every value finite (anything else is not stored or compared). */
export function vectorOf(res: EmbeddingResponse): number[] {
  const e = res.data?.[0]?.embedding;
  if (!Array.isArray(e) || e.length === 0) throw new EmbeddingShapeError('the embedding answer holds no float vector');
  for (const x of e)
    if (typeof x !== 'number' || !Number.isFinite(x))
      throw new EmbeddingShapeError('the embedding holds a value that is not a finite number');
  return e;
}
