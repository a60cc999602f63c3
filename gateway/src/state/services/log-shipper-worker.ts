// The log worker's thread: one Postgres connection that stores the batches of COPY lines the main thread
// posts, and answers each with its outcome. See log-shipper.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { openPostgres, type PostgresOptions } from '../db/postgres.ts';
import type { Db } from '../db/types.ts';
import { writeLogLines } from './log-rows.ts';
import type { ShipperReply, ShipperRequest } from './log-shipper.ts';

const port = parentPort;
if (!port) throw new Error('log-shipper-worker.ts runs only as a worker thread');
const options = workerData as PostgresOptions;

let db: Promise<Db> | undefined;
/** Opened on the first batch and again after a failed open, so a database that was down is retried. */
function database(): Promise<Db> {
  db ??= openPostgres({ ...options, maxConnections: 1 }).catch((err: unknown) => {
    db = undefined;
    throw err;
  });
  return db;
}

// One batch at a time: the main thread sends the next only after this one's answer.
port.on('message', (msg: ShipperRequest) => {
  if (msg.type === 'close') {
    void (db ?? Promise.resolve(undefined))
      .then((open) => open?.close())
      .catch(() => undefined)
      .finally(() => port.close());
    return;
  }
  database()
    .then((open) => writeLogLines(open, msg.data, { retry: msg.retry }))
    .then(
      () => port.postMessage({ id: msg.id, ok: true } satisfies ShipperReply),
      (err: unknown) =>
        port.postMessage({
          id: msg.id,
          ok: false,
          error: err instanceof Error ? err.message : String(err),
        } satisfies ShipperReply),
    );
});
