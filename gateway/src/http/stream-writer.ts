// Writes a streamed answer to the client frame by frame (SSE events, AWS event-stream messages, JSON-array
// elements: the format frames them), honouring backpressure.
import type { ServerResponse } from 'node:http';

/**
 * A stream to one client. The status line and headers leave with the first frame when it is written in the same
 * turn of the event loop (the usual case: an upstream sends its headers and first event together), so the client
 * gets both in one packet and wakes once; otherwise they are flushed on their own right after this turn, so a
 * caller whose first event is slow still learns at once that the stream started.
 */
export class StreamWriter {
  private readonly res: ServerResponse;
  private bodyWritten = false;

  constructor(res: ServerResponse, contentType: string, headers: Record<string, string>) {
    this.res = res;
    res.writeHead(200, {
      'content-type': contentType,
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      ...headers,
    });
    setImmediate(() => {
      if (!this.bodyWritten && !res.destroyed && !res.writableEnded) res.flushHeaders();
    });
  }

  /** Resolves false when the client went away. */
  write(frame: string | Uint8Array): Promise<boolean> | boolean {
    const res = this.res;
    if (res.destroyed || res.writableEnded) return false;
    this.bodyWritten = true;
    const ok = res.write(frame);
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

/** One server-sent event: `event:` when named, then the data line. */
export function sseFrame(data: string, event?: string): string {
  return event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
}

export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';
