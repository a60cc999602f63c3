import { describe, expect, it } from 'vitest';
import { type BodySource, UpstreamBodyQueue } from '../../../src/providers/shared/upstream-body.ts';

function source() {
  const calls: string[] = [];
  const s: BodySource = {
    pause: () => calls.push('pause'),
    resume: () => calls.push('resume'),
    abort: (reason) => calls.push(`abort: ${reason.message}`),
  };
  return { s, calls };
}

const KB = 1024;

describe('UpstreamBodyQueue', () => {
  it('hands chunks to a waiting reader at once and ends the iteration when the body ends', async () => {
    const { s } = source();
    const body = new UpstreamBodyQueue(s);
    const first = body.next();
    body.push(Buffer.from('a'));
    expect(await first).toEqual({ value: Buffer.from('a'), done: false });
    body.push(Buffer.from('b'));
    body.end();
    const read: string[] = [];
    for await (const chunk of body) read.push(Buffer.from(chunk).toString());
    expect(read).toEqual(['b']);
    expect(body.readableEnded).toBe(true);
  });

  it('pauses the upstream while more than 64 KB wait for the reader and resumes it once half is read', async () => {
    const { s, calls } = source();
    const body = new UpstreamBodyQueue(s);
    for (let i = 0; i < 64; i++) body.push(Buffer.alloc(KB));
    expect(calls).toEqual([]);
    body.push(Buffer.alloc(KB));
    expect(calls).toEqual(['pause']);
    for (let i = 0; i < 32; i++) await body.next();
    expect(calls).toEqual(['pause']);
    await body.next();
    expect(calls).toEqual(['pause', 'resume']);
  });

  it('fails a waiting reader with the error that cut the body off', async () => {
    const { s } = source();
    const body = new UpstreamBodyQueue(s);
    const pending = body.next();
    body.fail(new Error('socket hang up'));
    await expect(pending).rejects.toThrow('socket hang up');
    await expect(body.next()).rejects.toThrow('socket hang up');
    expect(body.readableEnded).toBe(false);
  });

  it('aborts the upstream when the reader stops before the end, and not after the end', async () => {
    const early = source();
    const body = new UpstreamBodyQueue(early.s);
    body.push(Buffer.from('a'));
    body.push(Buffer.from('b'));
    for await (const _chunk of body) break;
    expect(early.calls).toEqual(['abort: upstream body no longer read']);
    expect(await body.next()).toEqual({ value: undefined, done: true });

    const late = source();
    const ended = new UpstreamBodyQueue(late.s);
    ended.push(Buffer.from('a'));
    ended.end();
    ended.destroy();
    expect(late.calls).toEqual([]);
  });

  it('reads a whole body as text and as JSON', async () => {
    const { s } = source();
    const body = new UpstreamBodyQueue(s);
    body.push(Buffer.from('{"a":'));
    body.push(Buffer.from('"é"}'));
    body.end();
    expect(await body.json()).toEqual({ a: 'é' });
    const other = new UpstreamBodyQueue(s);
    other.push(Buffer.from('plain'));
    other.end();
    expect(await other.text()).toBe('plain');
  });
});
