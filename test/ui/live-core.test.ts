// The pure half of the dashboard's live updates, without a browser: reading /ws messages, which caches a change
// makes stale, the reconnect delays and their per-minute bound, and where a new log row goes in the explorer.
import { describe, expect, it } from 'vitest';
import { parseLiveMessage, RETRY_POLICY, retryDelay, staleAreas } from '../../ui/src/api/live-protocol.ts';
import { readFilters } from '../../ui/src/pages/logs/filters.ts';
import {
  addLiveRow,
  asLogEntry,
  liveVerdict,
  NO_LIVE_ROWS,
  skipLiveRows,
  skippedFor,
  withLiveRows,
} from '../../ui/src/pages/logs/live-rows.ts';
import type { LogEntry } from '../../ui/src/pages/logs/types.ts';

function row(over: Partial<LogEntry> = {}): LogEntry {
  const base = {
    id: '019a0000-0000-7000-8000-000000000001',
    timestamp: '2026-03-01T12:00:00.000Z',
    object: 'chat_completion',
    request_type: 'chat_completion',
    provider: 'openai',
    model: 'gpt-4o-mini',
    original_model_requested: 'openai/gpt-4o-mini',
    resolved_model_used: 'gpt-4o-mini',
    status: 'success',
    status_code: 200,
    stream: false,
    latency_ms: 120,
    selected_key_id: 'k1',
    selected_key_name: 'main',
    attempt_trail: null,
    fallback_index: 0,
    prompt_tokens: 5,
    completion_tokens: 7,
    total_tokens: 12,
    error: null,
    virtual_key_id: 'vk-1',
    team_id: 'team-1',
    customer_id: null,
    cost: 0.000019,
    cost_nano: 19_000,
    routing_rule_id: null,
    content: null,
    cache_debug: null,
  } satisfies LogEntry;
  return { ...base, ...over };
}

const filters = (query: string) => readFilters(new URLSearchParams(query));

describe('parseLiveMessage', () => {
  it('reads the three message types of /ws', () => {
    expect(parseLiveMessage('{"type":"log","operation":"create","payload":{"id":"a"}}')).toEqual({
      type: 'log',
      payload: { id: 'a' },
    });
    expect(parseLiveMessage('{"type":"logs_skipped","count":4}')).toEqual({ type: 'logs_skipped', count: 4 });
    expect(parseLiveMessage('{"type":"logs_skipped","count":4,"log_type":"log"}')).toEqual({
      type: 'logs_skipped',
      count: 4,
      log_type: 'log',
    });
    expect(parseLiveMessage('{"type":"logs_skipped","count":2,"log_type":"mcp_log"}')).toEqual({
      type: 'logs_skipped',
      count: 2,
      log_type: 'mcp_log',
    });
    expect(parseLiveMessage('{"type":"store_update","kind":"governance","virtual_key_ids":["x"]}')).toEqual({
      type: 'store_update',
      kind: 'governance',
    });
  });

  it('ignores anything else instead of failing', () => {
    for (const bad of [
      'not json',
      '[]',
      'null',
      '{"type":"mcp_log","payload":{}}',
      '{"type":"log","operation":"update","payload":{}}',
      '{"type":"log","operation":"create","payload":"text"}',
      '{"type":"logs_skipped","count":-1}',
      '{"type":"logs_skipped","count":1.5}',
      '{"type":"logs_skipped","count":"3"}',
      // Of a log no page here lists, or broken: nothing to count.
      '{"type":"logs_skipped","count":3,"log_type":"audit_log"}',
      '{"type":"logs_skipped","count":3,"log_type":null}',
      '{"type":"store_update"}',
    ]) {
      expect(parseLiveMessage(bad), bad).toBeUndefined();
    }
    expect(parseLiveMessage(new ArrayBuffer(2))).toBeUndefined();
  });
});

describe('staleAreas', () => {
  it('maps each kind of change to the query caches of its pages', () => {
    expect(staleAreas('governance')).toEqual(['governance']);
    expect(staleAreas('provider')).toEqual(['providers']);
    expect(staleAreas('plugins')).toEqual(['plugins']);
    expect(staleAreas('mcp')).toEqual(['mcp']);
    expect(staleAreas('client_config')).toEqual(['config']);
    expect(staleAreas('admin_keys')).toEqual([]);
    expect(staleAreas('something_new')).toEqual([]);
  });
});

describe('retryDelay', () => {
  const now = 1_000_000;
  it('doubles per failure in a row, jittered between half and all of it, up to the ceiling', () => {
    expect(retryDelay(RETRY_POLICY, 1, [], now, 0)).toBe(500);
    expect(retryDelay(RETRY_POLICY, 1, [], now, 0.999)).toBe(1000);
    expect(retryDelay(RETRY_POLICY, 3, [], now, 0)).toBe(2000);
    expect(retryDelay(RETRY_POLICY, 20, [], now, 0.9999999)).toBe(30_000);
    expect(retryDelay(RETRY_POLICY, 1_000, [], now, 0)).toBe(15_000);
  });

  it('allows at most perMinute attempts in any minute', () => {
    const six = [now - 50_000, now - 40_000, now - 30_000, now - 3_000, now - 2_000, now - 1_000];
    // The seventh waits until the oldest of the last six is a minute old.
    expect(retryDelay(RETRY_POLICY, 1, six, now, 0)).toBe(10_000);
    // Attempts older than a minute do not count.
    expect(retryDelay(RETRY_POLICY, 1, [now - 61_000, ...six.slice(1)], now, 0)).toBe(500);
  });
});

describe('asLogEntry', () => {
  it('takes a row with the fields the page reads, and refuses one without', () => {
    expect(asLogEntry(row())).toMatchObject({ id: row().id });
    expect(asLogEntry({ ...row(), id: 7 })).toBeUndefined();
    expect(asLogEntry({ ...row(), status: 'pending' })).toBeUndefined();
    expect(asLogEntry({ ...row(), latency_ms: '5' })).toBeUndefined();
    expect(asLogEntry({ ...row(), cost: '0.1' })).toBeUndefined();
    expect(asLogEntry(null)).toBeUndefined();
  });
});

describe('liveVerdict', () => {
  it('shows a new row under no filter, and under filters it matches', () => {
    expect(liveVerdict(filters(''), row())).toBe('show');
    expect(
      liveVerdict(
        filters('providers=anthropic,openai&status=success&virtual_key_ids=vk-1&team_ids=team-1&range=1h'),
        row(),
      ),
    ).toBe('show');
  });

  it('hides a row a list filter leaves out', () => {
    for (const q of [
      'providers=anthropic',
      'status=error',
      'virtual_key_ids=vk-2',
      'team_ids=team-2',
      'customer_ids=c-1',
      'models=gpt-4o',
    ]) {
      expect(liveVerdict(filters(q), row()), q).toBe('hide');
    }
  });

  it('matches models on the model requested or the model served, as the API does', () => {
    expect(liveVerdict(filters('models=openai/gpt-4o-mini'), row())).toBe('show');
    expect(liveVerdict(filters('models=gpt-4o-mini'), row({ original_model_requested: 'alias' }))).toBe('show');
  });

  it('applies latency and cost bounds inclusively; a row without a cost fails a cost bound', () => {
    expect(liveVerdict(filters('min_latency=120&max_latency=120'), row())).toBe('show');
    expect(liveVerdict(filters('min_latency=121'), row())).toBe('hide');
    expect(liveVerdict(filters('max_latency=119'), row())).toBe('hide');
    expect(liveVerdict(filters('min_cost=0.000019&max_cost=0.000019'), row())).toBe('show');
    expect(liveVerdict(filters('min_cost=0.00002'), row())).toBe('hide');
    expect(liveVerdict(filters('max_cost=1'), row({ cost: null, cost_nano: null }))).toBe('hide');
  });

  it('checks a custom time range; a preset range slides over new rows', () => {
    const inside = 'start_time=2026-03-01T00:00:00.000Z&end_time=2026-03-02T00:00:00.000Z';
    expect(liveVerdict(filters(inside), row())).toBe('show');
    expect(liveVerdict(filters('start_time=2026-03-01T12:00:00.001Z'), row())).toBe('hide');
    expect(liveVerdict(filters('end_time=2026-03-01T11:59:59.999Z'), row())).toBe('hide');
    expect(liveVerdict(filters('range=1h'), row({ timestamp: '2020-01-01T00:00:00.000Z' }))).toBe('show');
  });

  it('is unsure under a text search or an order other than newest first, unless another filter rules it out', () => {
    expect(liveVerdict(filters('content_search=needle'), row())).toBe('unsure');
    expect(liveVerdict(filters('sort_by=cost'), row())).toBe('unsure');
    expect(liveVerdict(filters('order=asc'), row())).toBe('unsure');
    expect(liveVerdict(filters('content_search=needle&providers=anthropic'), row())).toBe('hide');
  });
});

describe('live rows', () => {
  const id = (n: number) => `019a0000-0000-7000-8000-00000000000${n}`;

  it('puts matching rows on top, newest first, once each, and counts what passes the cap', () => {
    let s = NO_LIVE_ROWS;
    s = addLiveRow(s, row({ id: id(1) }), 'show', 2);
    s = addLiveRow(s, row({ id: id(3) }), 'show', 2);
    s = addLiveRow(s, row({ id: id(2) }), 'show', 2);
    expect(s.rows.map((r) => r.id)).toEqual([id(3), id(2)]);
    expect(s.more).toBe(1);
    s = addLiveRow(s, row({ id: id(3) }), 'show', 2);
    expect(s.rows).toHaveLength(2);
    expect(s.more).toBe(1);
  });

  it('counts unsure rows and skipped rows, and leaves hidden rows out', () => {
    let s = addLiveRow(NO_LIVE_ROWS, row(), 'hide', 10);
    expect(s).toEqual(NO_LIVE_ROWS);
    s = addLiveRow(s, row(), 'unsure', 10);
    s = skipLiveRows(s, 5);
    expect(s).toEqual({ rows: [], more: 5, unsure: 1 });
  });

  it('counts a skipped notice only on the page of its log; one that does not say (an older pod) on every page', () => {
    const logs = { type: 'logs_skipped', count: 4, log_type: 'log' } as const;
    const calls = { type: 'logs_skipped', count: 2, log_type: 'mcp_log' } as const;
    const either = { type: 'logs_skipped', count: 3 } as const;
    expect(skippedFor(logs, 'log')).toEqual({ count: 4, unattributed: false });
    expect(skippedFor(logs, 'mcp_log')).toEqual({ count: 0, unattributed: false });
    expect(skippedFor(calls, 'mcp_log')).toEqual({ count: 2, unattributed: false });
    expect(skippedFor(calls, 'log')).toEqual({ count: 0, unattributed: false });
    expect(skippedFor(either, 'log')).toEqual({ count: 3, unattributed: true });
    expect(skippedFor(either, 'mcp_log')).toEqual({ count: 3, unattributed: true });
  });

  it('shows live rows above the fetched pages without repeating one', () => {
    const fetched = [row({ id: id(2) }), row({ id: id(1) })];
    const merged = withLiveRows([row({ id: id(3) }), row({ id: id(2) })], fetched);
    expect(merged.map((r) => r.id)).toEqual([id(3), id(2), id(1)]);
    expect(withLiveRows([], fetched)).toEqual(fetched);
  });
});
