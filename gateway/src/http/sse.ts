// Writes server-sent events to the client, chunk by chunk, honouring backpressure.
import type { ServerResponse } from 'node:http';

/**
 * An event stream to one client. The status line and headers leave with the first event when it is written in
 * the same turn of the event loop (the usual case: an upstream sends its headers and first event together), so
 * the client gets both in one packet and wakes once; otherwise they are flushed on their own right after this
 * turn, so a caller whose first event is slow still learns at once that the stream started.
 */
export class SseWriter {
  private readonly res: ServerResponse;
  private bodyWritten = false;

  constructor(res: ServerResponse, headers: Record<string, string>) {
    this.res = res;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    setImmediate(() => {
      if (!this.bodyWritten && !res.destroyed && !res.writableEnded) res.flushHeaders();
    });
  }

  /** Resolves false when the client went away. */
  write(payload: string, event?: string): Promise<boolean> | boolean {
    const res = this.res;
    if (res.destroyed || res.writableEnded) return false;
    this.bodyWritten = true;
    const ok = res.write(event ? `event: ${event}\ndata: ${payload}\n\n` : `data: ${payload}\n\n`);
    if (ok) return true;
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(v);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      res.on('drain', onDrain);
      res.on('close', onClose);
    });
  }

  end(): void {
    this.res.end();
  }
}
