// Request-log batches stored from the worker thread (the Postgres path): rows land exactly as the writer
// formatted them, a database that cannot be reached fails the write (the writer retries), and close ends the
// worker. Real Postgres from the test harness.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { freePort } from '../../../test/harness/ports.ts';
import { LogWriter } from '../../src/plugins/logging/writer.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import { timeOrderedId } from '../../src/state/ids.ts';
import type { RequestLog } from '../../src/state/services/log-rows.ts';
import { LogShipper } from '../../src/state/services/log-shipper.ts';

let url: string;
let db: Db;

beforeAll(async () => {
  url = await createTestDatabase();
  db = await openDb({ databaseUrl: url });
  await migrate(db);
});
afterAll(async () => {
  await db?.close();
});

function entry(id: string, note = 'ok'): RequestLog {
  return {
    id,
    created_at: Date.now(),
    request_type: 'chat_completion',
    provider: 'openai',
    original_model_requested: 'openai/gpt-4o-mini',
    resolved_model_used: 'gpt-4o-mini',
    status: 'success',
    status_code: 200,
    stream: false,
    latency_ms: 2.25,
    selected_key_id: 'k1',
    selected_key_name: note,
    attempt_trail: [{ provider: 'openai', attempt: 1, outcome: 'success' }],
    fallback_index: 0,
    prompt_tokens: 3,
    completion_tokens: 4,
    total_tokens: 7,
    error: null,
    virtual_key_id: null,
    team_id: null,
    customer_id: null,
    cost_nano: 42,
    routing_rule_id: null,
  };
}

describe('request log worker', () => {
  it('stores the writer batches from its own thread, chunk after chunk, reusing the writer chunk safely', async () => {
    const shipper = new LogShipper({ url });
    const writer = new LogWriter(shipper, { flushIntervalMs: 10_000, maxBatch: 50 });
    const ids = Array.from({ length: 120 }, () => timeOrderedId());
    // Rows of different lengths so a reused chunk holds different bytes each time.
    ids.forEach((id, i) => {
      writer.push(entry(id, `key-${'x'.repeat(i % 7)}\ttab`));
    });
    await writer.flush();
    for (const id of ids.slice(0, 10)) writer.push(entry(`${id}-again`, 'short'));
    await writer.close();
    await shipper.close();
    const { rows } = await db.query<{ id: string; selected_key_name: string; attempt_trail: unknown }>(
      'SELECT id, selected_key_name, attempt_trail FROM request_logs ORDER BY id',
    );
    expect(rows).toHaveLength(130);
    const byId = new Map(rows.map((r) => [r.id, r]));
    ids.forEach((id, i) => {
      expect(byId.get(id)?.selected_key_name).toBe(`key-${'x'.repeat(i % 7)}\ttab`);
    });
    expect(byId.get(`${ids[0]}-again`)).toMatchObject({
      selected_key_name: 'short',
      attempt_trail: [{ provider: 'openai', attempt: 1, outcome: 'success' }],
    });
  });

  it('fails a write while the database is unreachable, then stores it once the database is back', async () => {
    const port = await freePort();
    const down = new LogShipper({ url: `postgres://postgres@127.0.0.1:${port}/postgres` });
    const data = Buffer.from('not even a row\n');
    await expect(down.insertLines(data)).rejects.toThrow(/ECONNREFUSED|connect/i);
    // The same worker opens the database again on the next write (no connection was kept from the failure).
    await expect(down.insertLines(data)).rejects.toThrow(/ECONNREFUSED|connect/i);
    await down.close();

    const errors: string[] = [];
    const shipper = new LogShipper({ url });
    const writer = new LogWriter(shipper, { flushIntervalMs: 10_000, onError: (e) => errors.push(e.message) });
    const id = timeOrderedId();
    writer.push(entry(id));
    await writer.close();
    await shipper.close();
    expect(errors).toEqual([]);
    const { rows } = await db.query('SELECT id FROM request_logs WHERE id = $1', [id]);
    expect(rows).toHaveLength(1);
  });

  it('reports a write that Postgres rejects with its message, and stores nothing of that batch', async () => {
    const shipper = new LogShipper({ url });
    const id = timeOrderedId();
    const bad = Buffer.from(`${id}\tnot-a-time\tchat\n`);
    await expect(shipper.insertLines(bad)).rejects.toThrow(/timestamp|missing data|invalid input/i);
    await shipper.close();
    const { rows } = await db.query('SELECT id FROM request_logs WHERE id = $1', [id]);
    expect(rows).toEqual([]);
  });

  it('closes idle: nothing written, nothing started', async () => {
    const shipper = new LogShipper({ url });
    await shipper.close();
  });
});
