// The live clients' backpressure accounting and the message shapes of /ws (pure).
import { describe, expect, it } from 'vitest';
import { ClientFlow } from '../../src/live/flow.ts';
import {
  logMessage,
  logsSkippedMessage,
  mcpLogMessage,
  parseStoredLogs,
  storedLogsNotice,
  storeUpdateMessage,
} from '../../src/live/messages.ts';

const bounds = { slowBytes: 1000, hardBytes: 5000 };
const skipped = (n: number) => logsSkippedMessage(n, 'request');
const skippedMcp = (n: number) => logsSkippedMessage(n, 'mcp');

describe('a live client’s flow', () => {
  it('sends everything while the client keeps up', () => {
    const f = new ClientFlow(bounds);
    expect(f.offer(0, 'a', 'request')).toEqual(['a']);
    expect(f.offer(1000, 'b', 'request')).toEqual(['b']);
    expect(f.skipped).toBe(0);
  });

  it('counts log events while the client is behind, still sends store updates, then tells it what it missed', () => {
    const f = new ClientFlow(bounds);
    expect(f.offer(1001, 'log1', 'request')).toEqual([]);
    expect(f.offer(2000, 'log2', 'request')).toEqual([]);
    expect(f.offer(2000, 'update', undefined)).toEqual(['update']);
    expect(f.skipped).toBe(2);
    expect(f.drained(1500)).toEqual([]);
    expect(f.drained(10)).toEqual([skipped(2)]);
    expect(f.skipped).toBe(0);
    expect(f.drained(10)).toEqual([]);
  });

  it('puts the notice of what was missed before the next message once the client caught up', () => {
    const f = new ClientFlow(bounds);
    f.offer(3000, 'log1', 'request');
    expect(f.offer(0, 'log2', 'request')).toEqual([skipped(1), 'log2']);
    f.offer(3000, 'log3', 'request');
    expect(f.offer(0, 'update', undefined)).toEqual([skipped(1), 'update']);
  });

  it('adds a batch’s left-out rows to what the client missed, in one notice', () => {
    const f = new ClientFlow(bounds);
    expect(f.skip(0, 50, 'request')).toEqual([skipped(50)]);
    f.offer(2000, 'log', 'request');
    expect(f.skip(2000, 50, 'request')).toEqual([]);
    expect(f.skip(0, 7, 'request')).toEqual([skipped(58)]);
  });

  it('tells a client how many events of each log it missed, one notice per log', () => {
    const f = new ClientFlow(bounds);
    expect(f.offer(2000, 'mcp1', 'mcp')).toEqual([]);
    expect(f.offer(2000, 'log1', 'request')).toEqual([]);
    expect(f.offer(2000, 'mcp2', 'mcp')).toEqual([]);
    expect(f.skipped).toBe(3);
    expect(f.drained(10)).toEqual([skipped(1), skippedMcp(2)]);
    expect(f.skip(0, 40, 'mcp')).toEqual([skippedMcp(40)]);
    f.offer(2000, 'mcp3', 'mcp');
    expect(f.offer(0, 'log2', 'request')).toEqual([skippedMcp(1), 'log2']);
    expect(f.skipped).toBe(0);
  });

  it('closes a client past the hard bound', () => {
    const f = new ClientFlow(bounds);
    expect(f.offer(5001, 'log', 'request')).toBe('close');
    expect(f.offer(5001, 'update', undefined)).toBe('close');
    expect(f.skip(5001, 1, 'request')).toBe('close');
  });
});

describe('live messages', () => {
  it('has the reference’s shapes', () => {
    expect(JSON.parse(logMessage({ id: 'x' }))).toEqual({ type: 'log', operation: 'create', payload: { id: 'x' } });
    expect(JSON.parse(mcpLogMessage({ id: 'm' }))).toEqual({
      type: 'mcp_log',
      operation: 'create',
      payload: { id: 'm' },
    });
    // `log_type` names the event type of the rows left out; a client that predates it reads type and count only.
    expect(JSON.parse(logsSkippedMessage(3, 'request'))).toEqual({ type: 'logs_skipped', count: 3, log_type: 'log' });
    expect(JSON.parse(logsSkippedMessage(2, 'mcp'))).toEqual({ type: 'logs_skipped', count: 2, log_type: 'mcp_log' });
    expect(JSON.parse(storeUpdateMessage({ kind: 'provider', name: 'openai' }))).toEqual({
      type: 'store_update',
      kind: 'provider',
      name: 'openai',
    });
    expect(JSON.parse(storeUpdateMessage({ kind: 'governance', virtual_key_ids: ['v1'] }))).toEqual({
      type: 'store_update',
      kind: 'governance',
      virtual_key_ids: ['v1'],
    });
  });

  it('names at most the newest 100 ids of a stored chunk, with the chunk’s row count', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => `id-${i}`);
    const notice = storedLogsNotice(ids);
    expect(notice.length).toBeLessThan(2000);
    expect(parseStoredLogs(notice)).toEqual({ ids: ids.slice(4900), rows: 5000, kind: 'request' });
    expect(parseStoredLogs(storedLogsNotice(['a', 'b']))).toEqual({ ids: ['a', 'b'], rows: 2, kind: 'request' });
  });

  it('says which log an MCP tool-log notice is for; a request-log notice stays as older pods publish it', () => {
    expect(JSON.parse(storedLogsNotice(['a']))).toEqual({ ids: ['a'], rows: 1 });
    expect(parseStoredLogs(storedLogsNotice(['m1', 'm2'], 'mcp'))).toEqual({ ids: ['m1', 'm2'], rows: 2, kind: 'mcp' });
    expect(parseStoredLogs('{"ids":["a"],"rows":1,"kind":"other"}')).toBeUndefined();
  });

  it('ignores malformed notices', () => {
    for (const bad of ['', 'null', '{"ids":[],"rows":-1}', '{"ids":["a","b"],"rows":1}', '{"ids":"a","rows":1}']) {
      expect(parseStoredLogs(bad), bad).toBeUndefined();
    }
    const tooMany = JSON.stringify({ ids: Array.from({ length: 101 }, (_, i) => String(i)), rows: 101 });
    expect(parseStoredLogs(tooMany)).toBeUndefined();
  });
});
