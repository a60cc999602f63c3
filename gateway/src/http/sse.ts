// Writes an async iterable to the client as server-sent events, chunk by chunk, honouring backpressure.
import type { ServerResponse } from 'node:http';

export function startSse(res: ServerResponse, headers: Record<string, string>): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...headers,
  });
  res.flushHeaders();
}

/** Resolves false when the client went away. */
export function writeEvent(res: ServerResponse, payload: string, event?: string): Promise<boolean> | boolean {
  if (res.destroyed || res.writableEnded) return false;
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
