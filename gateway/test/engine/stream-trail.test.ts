// A stream's attempt is recorded as a success when its status line arrives; when the stream fails afterwards,
// the trail's last attempt is rewritten to say so, and the upstream's error text is redacted on the way out.
import { describe, expect, it } from 'vitest';
import type { Attempt, ExecOutcome } from '../../src/engine/execute.ts';
import { markStreamFailureFrom, WatchedStream } from '../../src/engine/stream-trail.ts';
import { ProviderError } from '../../src/providers/errors.ts';

function outcome(): ExecOutcome {
  const attempt: Attempt = {
    provider: 'openai',
    model: 'gpt-4o-mini',
    key_id: 'k1',
    key_name: 'main',
    attempt: 1,
    status: 200,
    outcome: 'success',
    latency_ms: 12,
  };
  return {
    trail: [attempt],
    candidateIndex: 0,
    provider: 'openai',
    resolvedModel: 'gpt-4o-mini',
    selectedKeyId: 'k1',
    selectedKeyName: 'main',
  };
}

async function* chunks(fail: unknown): AsyncGenerator<number> {
  yield 1;
  yield 2;
  throw fail;
}

async function drain(it: AsyncIterable<number>): Promise<{ seen: number[]; err: unknown }> {
  const seen: number[] = [];
  try {
    for await (const c of it) seen.push(c);
  } catch (err) {
    return { seen, err };
  }
  return { seen, err: undefined };
}

describe('a stream that fails after it started', () => {
  it('marks the last attempt failed in its stream and rethrows the error redacted', async () => {
    const o = outcome();
    const fail = new ProviderError('upstream', 'overloaded, key sk-secret-key-123 throttled', {
      status: 529,
      type: 'overloaded_error',
    });
    const { seen, err } = await drain(
      new WatchedStream(chunks(fail), o, () => ['sk-secret-key-123'], new AbortController().signal),
    );
    expect(seen).toEqual([1, 2]);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).message).toBe('overloaded, key [REDACTED] throttled');
    expect(o.trail[0]).toMatchObject({
      outcome: 'error',
      phase: 'stream',
      next: 'fail',
      status: 529,
      error_type: 'overloaded_error',
      error: 'overloaded, key [REDACTED] throttled',
    });
  });

  it('a cut connection has no upstream status', async () => {
    const o = outcome();
    await drain(
      new WatchedStream(
        chunks(new ProviderError('network', 'upstream unreachable: other side closed')),
        o,
        () => [],
        new AbortController().signal,
      ),
    );
    expect(o.trail[0]).toMatchObject({ outcome: 'error', status: null, error_type: 'network', phase: 'stream' });
  });

  it('the caller going away is recorded as client_closed', async () => {
    const o = outcome();
    const ac = new AbortController();
    ac.abort();
    const { err } = await drain(new WatchedStream(chunks(new Error('aborted')), o, () => [], ac.signal));
    expect(err).toBeInstanceOf(Error);
    expect(o.trail[0]).toMatchObject({ outcome: 'error', error_type: 'client_closed', phase: 'stream' });
  });

  it('a failure the route reports is recorded once, the first report winning', () => {
    const o = outcome();
    markStreamFailureFrom(o, { type: 'client_closed', message: 'client closed the stream' });
    markStreamFailureFrom(o, { type: 'x', code: 'other', message: 'later' });
    expect(o.trail[0]).toMatchObject({
      outcome: 'error',
      error_type: 'client_closed',
      error: 'client closed the stream',
    });
  });

  it('a stream that ends normally leaves the trail as it was', async () => {
    const o = outcome();
    async function* ok(): AsyncGenerator<number> {
      yield 1;
    }
    const { seen, err } = await drain(new WatchedStream(ok(), o, () => [], new AbortController().signal));
    expect(seen).toEqual([1]);
    expect(err).toBeUndefined();
    expect(o.trail[0]).toMatchObject({ outcome: 'success', status: 200 });
    expect(o.trail[0]?.phase).toBeUndefined();
  });
});
