// The MCP tool-log store on Postgres and on PGlite: rows written through the batching writer (COPY), the
// listing's filters, sorting and paging, stats, filter data, deletion by ids and by filters, the live read, and
// retention in the shared round. Bad input is refused naming the field, and nothing is deleted.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startToolCall, type ToolCallOutcome, toolLogEntry, upstreamFailure } from '../../gateway/src/mcp/tool-log.ts';
import type { McpClientRecord } from '../../gateway/src/mcp/types.ts';
import { effectivePlugins } from '../../gateway/src/plugins/host.ts';
import { McpToolLogger } from '../../gateway/src/plugins/logging/mcp-tool-log.ts';
import { retentionRound } from '../../gateway/src/plugins/logging/retention.ts';
import { openCoordinator } from '../../gateway/src/state/coord/open.ts';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { timeOrderedId } from '../../gateway/src/state/ids.ts';
import { LogStore } from '../../gateway/src/state/services/logs.ts';
import type { McpToolLog } from '../../gateway/src/state/services/mcp-log-rows.ts';
import { McpLogStore } from '../../gateway/src/state/services/mcp-logs.ts';
import type { PluginRow } from '../../gateway/src/state/services/plugins/index.ts';
import { dbBackends } from '../harness/db-backends.ts';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-03-01T12:00:00Z');

function client(name: string, pricing: Record<string, number> = {}): McpClientRecord {
  return {
    id: `c-${name}`,
    name,
    connection_type: 'http',
    connection_string: 'http://127.0.0.1:1/mcp',
    auth_type: 'none',
    headers: {},
    oauth_config_id: null,
    flow_mode: null,
    tools_to_execute: ['*'],
    tools_to_auto_execute: [],
    tool_pricing: pricing,
    is_ping_available: true,
    disabled: false,
  };
}

const vk = (id: string, name: string) =>
  ({ kind: 'virtual_key', vk: { id, name } }) as unknown as Parameters<typeof startToolCall>[1]['principal']; // only id and name are read

/** One row as a call site builds it: `at` ms after NOW - 10 h, `ms` of latency. */
function row(o: {
  at: number;
  ms: number;
  tool?: string;
  server?: string;
  vkId?: string;
  llm?: string | null;
  fail?: boolean;
  args?: Record<string, unknown>;
  price?: number;
}): McpToolLog {
  const c = client(o.server ?? 'files', o.price === undefined ? {} : { [o.tool ?? 'read']: o.price });
  const start = startToolCall(NOW - 10 * HOUR + o.at, {
    llmRequestId: o.llm ?? null,
    principal: o.vkId ? vk(o.vkId, `name-${o.vkId}`) : null,
    client: c,
    tool: o.tool ?? 'read',
    args: o.args ?? { text: 'hello' },
  });
  const outcome: ToolCallOutcome = o.fail
    ? upstreamFailure('disk on fire')
    : { kind: 'result', result: { content: [{ type: 'text', text: `out:${o.tool ?? 'read'}` }] } };
  return toolLogEntry(start, outcome, start.startedAt + o.ms, true);
}

function loggingRows(enabled: boolean, disableContent = false): ReadonlyMap<string, PluginRow> {
  const r = { name: 'logging', enabled, config: { disable_content_logging: disableContent } };
  return new Map([['logging', r as unknown as PluginRow]]); // effectivePlugins reads enabled and config only
}

for (const backend of dbBackends('gw-mcp-logs-pglite-')) {
  describe(`MCP tool logs on ${backend.name}`, () => {
    let db: Db;
    let close: () => Promise<void>;
    let store: McpLogStore;

    beforeAll(async () => {
      ({ db, close } = await backend.open());
      await migrate(db);
      store = new McpLogStore(db);
    }, 60_000);
    afterAll(async () => {
      await close?.();
    });
    beforeEach(async () => {
      await db.query('DELETE FROM mcp_tool_logs');
    });

    /** Writes rows through the logger (as call sites do), with the logging plugin's switches as given. */
    async function write(rows: McpToolLog[], logging = loggingRows(true)): Promise<McpToolLogger> {
      const logger = new McpToolLogger(store, () => effectivePlugins(logging, {}).logging, {
        flushIntervalMs: 60_000,
      });
      for (const r of rows) logger.push(r);
      await logger.writer.flush();
      return logger;
    }

    it('stores every column through the writer and lists it in the reference shape', async () => {
      const r = { ...row({ at: 0, ms: 12, vkId: 'vk1', llm: 'req-1', price: 0.002 }), metadata: { 'x-team': 'blue' } };
      await write([r]);
      const page = await store.list({});
      expect(page.logs).toEqual([
        {
          id: r.id,
          llm_request_id: 'req-1',
          timestamp: new Date(r.created_at).toISOString(),
          tool_name: 'read',
          server_label: 'files',
          virtual_key_id: 'vk1',
          virtual_key_name: 'name-vk1',
          arguments: { text: 'hello' },
          result: { content: [{ type: 'text', text: 'out:read' }] },
          error_details: null,
          latency: 12,
          cost: 0.002,
          status: 'success',
          metadata: { 'x-team': 'blue' },
          created_at: new Date(r.created_at).toISOString(),
        },
      ]);
      expect(page.pagination).toEqual({ limit: 50, offset: 0, sort_by: 'timestamp', order: 'desc', total_count: 1 });
      expect(page.stats).toEqual({ total_executions: 1, success_rate: 100, average_latency: 12, total_cost: 0.002 });
      expect(page.has_logs).toBe(true);
    });

    it('follows the logging plugin: nothing while it is off, no arguments or result while content is off', async () => {
      const off = new McpToolLogger(store, () => effectivePlugins(loggingRows(false), {}).logging);
      expect(off.mode()).toBe('off');
      const meta = new McpToolLogger(store, () => effectivePlugins(loggingRows(true, true), {}).logging);
      expect(meta.mode()).toBe('metadata');
      const start = startToolCall(NOW, {
        llmRequestId: null,
        principal: null,
        client: client('files'),
        tool: 'fail',
        args: { secret: 'x' },
      });
      const failed = toolLogEntry(
        start,
        { kind: 'result', result: { content: [{ type: 'text', text: 'secret text' }], isError: true } },
        NOW + 3,
        false,
      );
      expect(failed).toMatchObject({ arguments: null, result: null, status: 'error', cost_nano: null });
      expect(JSON.stringify(failed.error)).not.toContain('secret');
      await write([failed]);
      const [listed] = (await store.list({})).logs;
      expect(listed).toMatchObject({
        arguments: null,
        result: null,
        status: 'error',
        error_details: { error: { type: 'tool_error' } },
      });
    });

    it('filters by tool (as listed or as models see it), server, status, key, request, time, latency and content', async () => {
      const a = row({ at: 0, ms: 10, tool: 'read', vkId: 'vk1', llm: 'req-1', args: { text: 'apples' } });
      const b = row({ at: HOUR, ms: 50, tool: 'write', vkId: 'vk2', args: { text: 'pears' } });
      const c = row({ at: 2 * HOUR, ms: 90, tool: 'search', server: 'web', fail: true });
      await write([a, b, c]);
      const ids = async (q: Record<string, unknown>) => (await store.list(q)).logs.map((l) => l['id']);
      expect(await ids({ tool_names: 'read' })).toEqual([a.id]);
      expect(await ids({ tool_names: 'files-write,web-search' })).toEqual([c.id, b.id]);
      expect(await ids({ server_labels: 'web' })).toEqual([c.id]);
      expect(await ids({ status: 'error' })).toEqual([c.id]);
      expect(await ids({ status: 'processing' })).toEqual([]);
      expect(await ids({ virtual_key_ids: ['vk1', 'vk2'] })).toEqual([b.id, a.id]);
      expect(await ids({ llm_request_ids: 'req-1' })).toEqual([a.id]);
      const t = (ms: number) => new Date(NOW - 10 * HOUR + ms).toISOString();
      expect(await ids({ start_time: t(HOUR), end_time: t(HOUR) })).toEqual([b.id]);
      expect(await ids({ min_latency: 20, max_latency: 60 })).toEqual([b.id]);
      expect(await ids({ content_search: 'PEARS' })).toEqual([b.id]);
      expect(await ids({ content_search: 'disk on fire' })).toEqual([c.id]);
      expect(await ids({ content_search: '%' })).toEqual([]);
      // Sorting and paging.
      expect(await ids({ sort_by: 'latency', order: 'asc' })).toEqual([a.id, b.id, c.id]);
      expect(await ids({ sort_by: 'latency', limit: 1, offset: 1 })).toEqual([b.id]);
      expect(await store.stats({ server_labels: 'files' })).toEqual({
        total_executions: 2,
        success_rate: 100,
        average_latency: 30,
        total_cost: 0,
      });
      const all = await store.stats({});
      expect(all.total_executions).toBe(3);
      expect(all.success_rate).toBeCloseTo(200 / 3);
      const none = await store.list({ tool_names: 'nothing' });
      expect(none).toMatchObject({ logs: [], has_logs: true, pagination: { total_count: 0 } });
    });

    it('sorts by cost with unpriced calls last (desc) and sums the priced ones', async () => {
      const cheap = row({ at: 0, ms: 1, price: 0.001 });
      const dear = row({ at: 1, ms: 1, tool: 'write', price: 0.5 });
      const free = row({ at: 2, ms: 1, tool: 'delete' });
      const failedPriced = row({ at: 3, ms: 1, tool: 'read', price: 9, fail: true });
      await write([cheap, dear, free, failedPriced]);
      const page = await store.list({ sort_by: 'cost' });
      expect(page.logs.map((l) => l['cost'])).toEqual([0.5, 0.001, null, null]);
      expect(page.stats.total_cost).toBeCloseTo(0.501);
    });

    it('answers filter data: tools, servers and keys with the name they were logged with, most used first', async () => {
      await write([
        row({ at: 0, ms: 1, tool: 'write', vkId: 'vk2' }),
        row({ at: 1, ms: 1, tool: 'read', vkId: 'vk1' }),
        row({ at: 2, ms: 1, tool: 'read', vkId: 'vk1' }),
        row({ at: 3, ms: 1, tool: 'search', server: 'web' }),
      ]);
      const d = await store.filterData({}, NOW);
      expect(d.tool_names[0]).toBe('read');
      expect(new Set(d.tool_names)).toEqual(new Set(['read', 'write', 'search']));
      expect(d.server_labels).toEqual(['files', 'web']);
      expect(d.virtual_keys).toEqual([
        { id: 'vk1', name: 'name-vk1' },
        { id: 'vk2', name: 'name-vk2' },
      ]);
      // A window before the rows: nothing.
      const before = await store.filterData({ end_time: new Date(NOW - 20 * HOUR).toISOString() }, NOW);
      expect(before).toEqual({ tool_names: [], server_labels: [], virtual_keys: [] });
      await expect(store.filterData({ start_time: '2020-01-01T00:00:00Z' }, NOW)).rejects.toMatchObject({
        code: 'invalid',
        param: 'start_time',
      });
    });

    it('deletes by ids and by filters; refuses a delete without a filter, deleting nothing', async () => {
      const a = row({ at: 0, ms: 1 });
      const b = row({ at: 1, ms: 1, server: 'web', tool: 'search' });
      const c = row({ at: 2, ms: 1, server: 'web', tool: 'search' });
      await write([a, b, c]);
      for (const bad of [
        {},
        { ids: [] },
        { filters: {} },
        { ids: [a.id], filters: { server_labels: 'web' } },
        { idz: [a.id] },
      ]) {
        await expect(store.delete(bad), JSON.stringify(bad)).rejects.toMatchObject({ code: 'invalid' });
      }
      expect((await store.stats({})).total_executions).toBe(3);
      expect(await store.delete({ ids: [a.id, 'no-such-id'] })).toBe(1);
      expect(await store.delete({ filters: { server_labels: ['web'] } })).toBe(2);
      expect((await store.list({})).has_logs).toBe(false);
    });

    it('reads rows for live events with large arguments or results left out', async () => {
      const big = row({ at: 0, ms: 1, args: { text: 'x'.repeat(5000) } });
      await write([big]);
      const [live] = await store.byIds([big.id, 'absent'], { maxContentChars: 1000 });
      expect(live?.['arguments']).toEqual({ omitted: 'too_large_for_live', chars: expect.any(Number) });
      expect(live?.['result']).toEqual({ content: [{ type: 'text', text: 'out:read' }] });
    });

    it('refuses bad queries naming the parameter', async () => {
      for (const [q, param] of [
        [{ limit: 1001 }, 'limit'],
        [{ sort_by: 'tokens' }, 'sort_by'],
        [{ status: 'done' }, 'status[0]'],
        [{ start_time: 'yesterday' }, 'start_time'],
        [{ min_latency: 10, max_latency: 5 }, 'min_latency'],
        [{ providers: 'openai' }, undefined],
      ] as const) {
        await expect(store.list(q), JSON.stringify(q)).rejects.toMatchObject({
          code: 'invalid',
          ...(param ? { param } : {}),
        });
      }
      await expect(store.stats({ order: 'asc' })).rejects.toMatchObject({ code: 'invalid' });
    });

    it('prunes MCP tool logs in the retention round, by the request logs’ setting', async () => {
      const old = {
        ...row({ at: 0, ms: 1 }),
        id: timeOrderedId(NOW - 40 * 86_400_000),
        created_at: NOW - 40 * 86_400_000,
      };
      const recent = { ...row({ at: 0, ms: 1 }), id: timeOrderedId(NOW - 86_400_000), created_at: NOW - 86_400_000 };
      await write([old, recent]);
      const coord = await openCoordinator({});
      try {
        const log = { warn: () => undefined, info: () => undefined };
        const deleted = await retentionRound(
          { store: new LogStore(db), mcpLogs: store, coord, days: () => 30, log, now: () => NOW },
          'pod-1',
        );
        expect(deleted).toBeGreaterThanOrEqual(1);
        expect((await store.list({})).logs.map((l) => l['id'])).toEqual([recent.id]);
      } finally {
        await coord.close();
      }
    });
  });
}
