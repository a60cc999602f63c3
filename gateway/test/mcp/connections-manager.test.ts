// The connection manager against MCP SDK tool servers, driven by a minimal snapshot (a map of client records and
// its change listeners) and a recording database: per-user sessions per binding (bounded, idle-closed), the
// credentials' McpAuthError passed through unchanged, call deadlines and caller aborts, result bounds, and state
// written on transitions only. The e2e tests (test/e2e/mcp-*.test.ts) cover the same manager inside a gateway.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { echoTool, type McpToolServer, startMcpToolServer } from '../../../test/fakes/mcp-servers.ts';
import { waitFor } from '../../../test/harness/wait.ts';
import { ConfigFile } from '../../src/config/schema.ts';
import { type ConnectionOptions, McpConnectionManager } from '../../src/mcp/connections/manager.ts';
import type { McpDeps } from '../../src/mcp/index.ts';
import { McpAuthError, type McpClientRecord, type McpCredentials, type TokenBinding } from '../../src/mcp/types.ts';
import type { State } from '../../src/state/index.ts';
import { mcpClient } from './helpers.ts';

class FakeSnapshot {
  mcpClients = new Map<string, McpClientRecord>();
  /** The client setting a call's deadline is read from when no fixed callTimeoutMs is given. */
  client = { mcp_tool_execution_timeout: 60 };
  private readonly listeners = new Set<() => void>();
  onMcpClients(fn: () => void) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  set(...records: McpClientRecord[]) {
    this.mcpClients = new Map(records.map((r) => [r.id, r]));
    for (const fn of this.listeners) fn();
  }
}

const reports: unknown[][] = [];
const snapshot = new FakeSnapshot();
// The manager reads `state.snapshot` (MCP clients, the call timeout setting) and writes state reports through `state.db.query`; nothing else.
const state = {
  snapshot,
  db: {
    query: async (_sql: string, params: unknown[]) => {
      reports.push(params);
      return { rows: [], rowCount: 1 };
    },
  },
} as unknown as State;

let clock = 1_000_000;
const deps = (credentials: McpCredentials, options: Partial<ConnectionOptions> = {}) =>
  ({
    state,
    file: ConfigFile.parse({ mcp: { allowed_private_networks: ['127.0.0.1/32'] } }),
    logger: pino({ level: 'silent' }),
    now: () => clock,
    credentials,
    options: { backoff: { baseMs: 50, maxMs: 200, jitter: 0.1 }, ...options },
  }) satisfies McpDeps & { credentials: McpCredentials; options: Partial<ConnectionOptions> };

const record = (over: Partial<McpClientRecord>): McpClientRecord => mcpClient({ name: 'tools', ...over });

/** Credentials as the OAuth part supplies them: a bearer per binding; `refuse` bindings get an McpAuthError. */
const perBinding = (refuse = new Set<string>()): McpCredentials => ({
  async headersFor(client, binding) {
    if (binding.kind === 'server') return client.headers;
    if (refuse.has(binding.id)) {
      throw new McpAuthError('oauth_authorization_required', `authorize first at http://consent/${binding.id}`);
    }
    return { authorization: `Bearer token-of-${binding.id}` };
  },
});

let server: McpToolServer;
let manager: McpConnectionManager | undefined;
beforeAll(async () => {
  server = await startMcpToolServer({
    transport: 'http',
    tools: [
      echoTool('echo'),
      { name: 'sleepy', handler: () => new Promise((r) => setTimeout(() => r('late'), 1_000)) },
      { name: 'huge', handler: () => 'x'.repeat(20_000) },
    ],
  });
});
afterEach(async () => {
  await manager?.close();
  manager = undefined;
  snapshot.set();
  reports.length = 0;
});
afterAll(async () => {
  await server.close();
});

const vk = (id: string): TokenBinding => ({ kind: 'vk', id });

/** A manager with these options following one client (c1) on the test server; the client, once connected. */
async function connectedClient(options: Partial<ConnectionOptions> = {}): Promise<McpClientRecord> {
  const c = record({ connection_string: server.url });
  snapshot.set(c);
  manager = new McpConnectionManager(deps(perBinding(), options));
  await waitFor(() => manager?.state('c1').state === 'connected', 5_000, 'connected');
  return c;
}

describe('McpConnectionManager', () => {
  it('with no MCP client: no timer, no agent, no tools', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    manager = new McpConnectionManager(deps(perBinding()));
    expect(timers()).toBe(before);
    expect(manager.tools()).toEqual([]);
    expect(manager.state('none')).toEqual({ state: 'disconnected' });
  });

  it('per_user_oauth: opens nothing until used, then one session per binding with that binding’s token', async () => {
    snapshot.set(record({ auth_type: 'per_user_oauth', flow_mode: 'vk', connection_string: server.url }));
    manager = new McpConnectionManager(deps(perBinding()));
    const before = server.sessions();
    expect(manager.tools()).toEqual([]);
    expect(server.sessions()).toBe(before);

    const c = record({ auth_type: 'per_user_oauth', flow_mode: 'vk', connection_string: server.url });
    await manager.call(c, 'echo', { text: 'a' }, { binding: vk('alice') });
    await manager.call(c, 'echo', { text: 'b' }, { binding: vk('bob') });
    await manager.call(c, 'echo', { text: 'a2' }, { binding: vk('alice') });
    expect(server.calls.slice(-3).map((x) => x.headers.authorization)).toEqual([
      'Bearer token-of-alice',
      'Bearer token-of-bob',
      'Bearer token-of-alice',
    ]);
    expect(server.sessions()).toBe(before + 2);
    // The tools are the ones last listed through any binding.
    expect(manager.tools().map((t) => t.qualifiedName)).toEqual(['tools-echo', 'tools-sleepy', 'tools-huge']);
    expect(manager.state('c1').state).toBe('connected');
  });

  it('per_user_oauth: the credentials’ McpAuthError reaches the caller unchanged; nothing is sent upstream', async () => {
    const c = record({ auth_type: 'per_user_oauth', flow_mode: 'vk', connection_string: server.url });
    snapshot.set(c);
    manager = new McpConnectionManager(deps(perBinding(new Set(['carol']))));
    const calls = server.calls.length;
    const err = await manager.call(c, 'echo', {}, { binding: vk('carol') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpAuthError);
    expect((err as McpAuthError).message).toBe('authorize first at http://consent/carol');
    expect(server.calls.length).toBe(calls);
  });

  it('per_user_oauth: any failure of the credentials while opening reaches the caller (not "Connection closed")', async () => {
    const c = record({ auth_type: 'per_user_oauth', flow_mode: 'vk', connection_string: server.url });
    snapshot.set(c);
    manager = new McpConnectionManager(
      deps({
        async headersFor() {
          throw new Error('token store unavailable');
        },
      }),
    );
    await expect(manager.call(c, 'echo', {}, { binding: vk('dave') })).rejects.toThrow(
      'MCP client tools is not reachable: token store unavailable',
    );
  });

  it('per_user_oauth: at most perUserMaxSessions sessions (least recently used closed), idle ones closed', async () => {
    const c = record({ auth_type: 'per_user_oauth', flow_mode: 'vk', connection_string: server.url });
    snapshot.set(c);
    manager = new McpConnectionManager(deps(perBinding(), { perUserMaxSessions: 2, perUserIdleMs: 2_000 }));
    const base = server.sessions();
    for (const who of ['u1', 'u2', 'u3']) await manager.call(c, 'echo', {}, { binding: vk(who) });
    await waitFor(() => server.sessions() === base + 2, 5_000, 'LRU session closed upstream');
    clock += 10_000; // every session idle past perUserIdleMs; the sweep runs every second
    await waitFor(() => server.sessions() === base, 5_000, 'idle sessions closed');
  });

  it('a call past its deadline fails with a clear message; a caller abort stops it', async () => {
    const c = await connectedClient({ callTimeoutMs: 200 });
    await expect(manager!.call(c, 'sleepy', {}, { binding: { kind: 'server' } })).rejects.toThrow(
      /MCP tool tools-sleepy failed: .*timed out/i,
    );
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(new Error('caller gone')), 50);
    const long = new McpConnectionManager(deps(perBinding(), { callTimeoutMs: 10_000 }));
    try {
      await waitFor(() => long.state('c1').state === 'connected', 5_000, 'connected');
      const started = Date.now();
      await expect(long.call(c, 'sleepy', {}, { binding: { kind: 'server' }, signal: ctrl.signal })).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(900);
    } finally {
      await long.close();
    }
  });

  it('a result over maxResultBytes is refused', async () => {
    const c = await connectedClient({ maxResultBytes: 10_000 });
    await expect(manager!.call(c, 'huge', {}, { binding: { kind: 'server' } })).rejects.toThrow(
      /over the limit of 10000/,
    );
  });

  it('reports state on transitions only, and errors with a retry bounded by the backoff cap', async () => {
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const port = (free.address() as AddressInfo).port;
    await new Promise<void>((r) => free.close(() => r()));
    const dead = record({ id: 'dead', name: 'dead', connection_string: `http://127.0.0.1:${port}/mcp` });
    snapshot.set(dead);
    manager = new McpConnectionManager(deps(perBinding()));
    await waitFor(() => manager?.state('dead').state === 'error', 5_000, 'error');
    // Several attempts fail the same way (cap 200 ms): one report, not one per attempt.
    await new Promise((r) => setTimeout(r, 700));
    expect(reports.filter((p) => p[0] === 'dead').map((p) => p[1])).toEqual(['error']);
    expect(manager.state('dead').message).toMatch(/ECONNREFUSED/);
  });

  it('refuses a connection string the allow-list does not admit, with the guard’s message', async () => {
    snapshot.set(record({ id: 'meta', connection_string: 'http://169.254.169.254/mcp' }));
    manager = new McpConnectionManager(deps(perBinding()));
    await waitFor(() => manager?.state('meta').state === 'error', 5_000, 'error');
    expect(manager.state('meta').message).toMatch(/link-local address/);
  });

  it('a renamed client keeps its session; its tools get the new prefix', async () => {
    const c = record({ connection_string: server.url });
    snapshot.set(c);
    manager = new McpConnectionManager(deps(perBinding()));
    await waitFor(() => manager?.tools().length === 3, 5_000, 'tools');
    const sessions = server.sessions();
    snapshot.set({ ...c, name: 'renamed' });
    expect(manager.tools().map((t) => t.qualifiedName)).toEqual(['renamed-echo', 'renamed-sleepy', 'renamed-huge']);
    expect(server.sessions()).toBe(sessions);
  });
});
