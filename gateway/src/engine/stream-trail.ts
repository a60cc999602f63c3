// A stream's attempt is recorded when its success status arrives; if the stream then fails, the trail's last
// attempt must say so (the log row says `error`), and the upstream's words reach the caller without key secrets.
import { ProviderError } from '../providers/errors.ts';
import { boundText, redactError } from '../providers/shared/redact.ts';
import { messageOf } from '../util/errors.ts';
import { type Attempt, attemptError, type ExecOutcome } from './execute.ts';

/** Marks the trail's last attempt as failed in its stream, once (a later report of the same failure is ignored). */
export function markStreamFailure(
  outcome: ExecOutcome,
  failure: Pick<Attempt, 'status' | 'error_type' | 'error'>,
): void {
  const last = outcome.trail.at(-1);
  if (!last || last.phase === 'stream') return;
  last.outcome = 'error';
  last.phase = 'stream';
  last.next = 'fail';
  last.status = failure.status;
  if (failure.error_type !== undefined) last.error_type = failure.error_type;
  if (failure.error !== undefined) last.error = boundText(failure.error, [], 500);
}

/**
 * The chunks as the route reads them: a failure while reading is recorded on the trail (`client_closed` when the
 * caller went away) and a ProviderError is rethrown redacted. One extra promise per chunk, no generator.
 */
export class WatchedStream<C> implements AsyncIterableIterator<C> {
  private readonly inner: AsyncIterator<C>;
  private readonly outcome: ExecOutcome;
  private readonly secrets: () => readonly string[];
  private readonly clientGone: AbortSignal;

  constructor(
    chunks: AsyncIterable<C>,
    outcome: ExecOutcome,
    secrets: () => readonly string[],
    clientGone: AbortSignal,
  ) {
    this.inner = chunks[Symbol.asyncIterator]();
    this.outcome = outcome;
    this.secrets = secrets;
    this.clientGone = clientGone;
  }

  next(): Promise<IteratorResult<C>> {
    return this.inner.next().then(undefined, (err: unknown) => {
      throw this.failed(err);
    });
  }

  return(value?: unknown): Promise<IteratorResult<C>> {
    return this.inner.return ? this.inner.return(value) : Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private failed(err: unknown): unknown {
    if (this.clientGone.aborted) {
      markStreamFailure(this.outcome, { status: null, error_type: 'client_closed', error: 'client closed the stream' });
      return err;
    }
    if (err instanceof ProviderError) {
      const clean = redactError(err, this.secrets());
      markStreamFailure(this.outcome, attemptError(clean));
      return clean;
    }
    markStreamFailure(this.outcome, { status: null, error_type: 'internal_error', error: messageOf(err) });
    return err;
  }
}

/**
 * For a stream reported failed by its route (e.g. stopped because the client went away while a chunk was being
 * written): the trail says so too, from the logged error (`{type, code, message}` when it has that shape).
 */
export function markStreamFailureFrom(outcome: ExecOutcome, error: unknown): void {
  const e = error && typeof error === 'object' ? error : {};
  const text = (name: string): string | undefined => {
    const v: unknown = Reflect.get(e, name);
    return typeof v === 'string' ? v : undefined;
  };
  markStreamFailure(outcome, {
    status: null,
    error_type: text('code') ?? text('type') ?? 'stream_error',
    error: text('message') ?? 'the stream failed after it started',
  });
}
