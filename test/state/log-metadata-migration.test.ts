// Migration 020 (log metadata) on real Postgres: adding the column does not rewrite request_logs or mcp_tool_logs
// (same relfilenode), old rows read as metadata null, and rows spooled by the previous release (lines without the
// new column) are still stored when written back after the upgrade.
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, migrate } from '../../gateway/src/state/db/migrate.ts';
import { openDb } from '../../gateway/src/state/db/open.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { copyLine, LOG_COLUMNS } from '../../gateway/src/state/services/log-rows.ts';
import { LogStore } from '../../gateway/src/state/services/logs.ts';
import { MCP_LOG_COLUMNS, type McpToolLog, mcpCopyLine } from '../../gateway/src/state/services/mcp-log-rows.ts';
import { McpLogStore } from '../../gateway/src/state/services/mcp-logs.ts';
import { logEntry } from '../../gateway/test/plugins/log-entry.ts';
import { createTestDatabase } from '../harness/db.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';

let db: Db;
let dir: TempDir;

/** A line as the previous release wrote it: the same fields without the last one (metadata). */
const withoutLast = (line: string) => `${line.slice(0, line.lastIndexOf('\t'))}\n`;
const oldColumns = (cols: readonly string[]) => cols.filter((c) => c !== 'metadata').join(', ');

function toolRow(id: string, metadata: Record<string, string> | null = null): McpToolLog {
  return {
    id,
    created_at: Date.now(),
    llm_request_id: null,
    tool_name: 'read',
    server_label: 'files',
    virtual_key_id: null,
    virtual_key_name: null,
    arguments: null,
    result: null,
    error: null,
    status: 'success',
    latency_ms: 1,
    cost_nano: null,
    metadata,
  };
}

const relfilenodes = async () =>
  (
    await db.query<{ relname: string; relfilenode: number }>(
      `SELECT relname, relfilenode FROM pg_class WHERE relname IN ('request_logs', 'mcp_tool_logs') ORDER BY relname`,
    )
  ).rows;

beforeAll(async () => {
  dir = await tempDir('gw-migrations-019-');
  db = await openDb({ databaseUrl: await createTestDatabase() });
  // The schema as the previous release left it: every migration before 020.
  await mkdir(dir.path, { recursive: true });
  for (const f of await readdir(MIGRATIONS_DIR)) {
    if (f.endsWith('.sql') && Number.parseInt(f, 10) < 20) await copyFile(join(MIGRATIONS_DIR, f), join(dir.path, f));
  }
  await migrate(db, dir.path);
  await db.copyFrom(
    `COPY request_logs (${oldColumns(LOG_COLUMNS)}) FROM STDIN`,
    withoutLast(copyLine(logEntry('old-request'))),
  );
  await db.copyFrom(
    `COPY mcp_tool_logs (${oldColumns(MCP_LOG_COLUMNS)}) FROM STDIN`,
    withoutLast(mcpCopyLine(toolRow('old-tool'))),
  );
}, 60_000);

afterAll(async () => {
  await db?.close();
  await dir?.remove();
});

describe('migration 020: log metadata', () => {
  it('adds the column without rewriting either table; existing rows read as null', async () => {
    const before = await relfilenodes();
    expect(before).toHaveLength(2);
    await migrate(db);
    expect(await relfilenodes()).toEqual(before);
    expect((await new LogStore(db).get('old-request'))['metadata']).toBeNull();
    const tools = await new McpLogStore(db).byIds(['old-tool'], { maxContentChars: 1000 });
    expect(tools[0]?.['metadata']).toBeNull();
  });

  it('stores rows with metadata, and rows spooled by the previous release (one column short)', async () => {
    const logs = new LogStore(db);
    const fresh = { ...logEntry('new-request'), metadata: { 'x-team': 'blue', run: 'tab\there' } };
    expect(await logs.insertLines(Buffer.from(copyLine(fresh)))).toBe(0);
    expect((await logs.get('new-request'))['metadata']).toEqual({ 'x-team': 'blue', run: 'tab\there' });
    const spooled = withoutLast(copyLine(logEntry('spooled-request')));
    expect(await logs.insertLines(Buffer.from(spooled), { retry: true })).toBe(0);
    expect((await logs.get('spooled-request'))['metadata']).toBeNull();

    const tools = new McpLogStore(db);
    const lines = mcpCopyLine(toolRow('new-tool', { run: 'r1' })) + withoutLast(mcpCopyLine(toolRow('spooled-tool')));
    expect(await tools.insertLines(Buffer.from(lines), { retry: true })).toBe(0);
    const rows = await tools.byIds(['new-tool', 'spooled-tool'], { maxContentChars: 1000 });
    expect(rows.map((r) => r['metadata'])).toEqual([{ run: 'r1' }, null]);
  });
});
