// Connections to the upstream MCP servers, following the snapshot's MCP clients: every enabled client gets a
// session (per_user_oauth clients get one per caller binding, opened on first use), a failed or lost session is
// reopened with capped, jittered backoff, and the tools each server lists are offered under `<client>-<tool>`.
// The state this pod sees is kept per client and written to the client's row on transitions. A gateway with no
// MCP client creates no agent, timer or connection. One client's sessions and their bookkeeping: client.ts.
import type { Agent } from 'undici';
import { reportMcpClientState } from '../../state/services/mcp/state-report.ts';
import { messageOf } from '../../util/errors.ts';
import type { McpDeps } from '../index.ts';
import { guardedAgent, OutboundAllowList } from '../ssrf.ts';
import type {
  McpCallContext,
  McpClientRecord,
  McpConnectionState,
  McpConnections,
  McpCredentials,
  McpTool,
  McpToolResult,
} from '../types.ts';
import { ClientConnection, type ConnectionContext } from './client.ts';
import { type ConnectionOptions, DEFAULT_CONNECTION_OPTIONS } from './options.ts';
import { qualifiedTools } from './tools.ts';

export type { ConnectionOptions } from './options.ts';

/** Fields whose change means a new session (the rest, e.g. allow-lists, apply to the next call). */
function connectionKey(r: McpClientRecord): string {
  return JSON.stringify([
    r.connection_type,
    r.connection_string,
    r.auth_type,
    r.headers,
    r.oauth_config_id,
    r.flow_mode,
    r.is_ping_available,
    r.disabled,
  ]);
}

export class McpConnectionManager implements McpConnections {
  private readonly entries = new Map<string, ClientConnection>();
  private readonly opts: ConnectionOptions;
  private readonly ctx: ConnectionContext;
  private agent: Agent | undefined;
  private toolList: McpTool[] = [];
  private sweepTimer: NodeJS.Timeout | undefined;
  private reports: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly unsubscribe: () => void;
  private readonly deps: McpDeps & { credentials: McpCredentials; options?: Partial<ConnectionOptions> };

  constructor(deps: McpDeps & { credentials: McpCredentials; options?: Partial<ConnectionOptions> }) {
    this.deps = deps;
    this.opts = { ...DEFAULT_CONNECTION_OPTIONS, ...deps.options };
    const allow = new OutboundAllowList(deps.file.mcp.allowed_private_networks);
    this.ctx = {
      opts: this.opts,
      callTimeoutMs: () => this.opts.callTimeoutMs ?? deps.state.snapshot.client.mcp_tool_execution_timeout * 1000,
      allow,
      credentials: deps.credentials,
      logger: deps.logger,
      now: () => deps.now(),
      dispatcher: () => {
        this.agent ??= guardedAgent(allow, { connectTimeoutMs: this.opts.connectTimeoutMs });
        return this.agent;
      },
      closed: () => this.closed,
      toolsChanged: () => this.rebuildTools(),
      report: (id, state, message, at) => this.report(id, state, message, at),
      perUserSessionOpened: () => this.startSweep(),
    };
    this.unsubscribe = deps.state.snapshot.onMcpClients(() => this.sync());
    this.sync();
  }

  tools(): readonly McpTool[] {
    return this.toolList;
  }

  state(clientId: string): { state: McpConnectionState; message?: string | undefined } {
    const e = this.entries.get(clientId);
    if (!e) return { state: 'disconnected' };
    return e.message === undefined ? { state: e.state } : { state: e.state, message: e.message };
  }

  async call(
    client: McpClientRecord,
    tool: string,
    args: Record<string, unknown>,
    ctx: McpCallContext,
  ): Promise<McpToolResult> {
    const entry = this.entries.get(client.id);
    if (!entry || entry.record.disabled) throw new Error(`MCP client ${client.name} is disabled or unknown`);
    return entry.call(client.name, tool, args, ctx);
  }

  async reconnect(clientId: string): Promise<void> {
    const entry = this.entries.get(clientId);
    if (!entry || this.closed) return;
    entry.restart();
    await entry.connecting;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    clearInterval(this.sweepTimer);
    await Promise.allSettled([...this.entries.values()].map((e) => e.teardown()));
    this.entries.clear();
    this.toolList = [];
    await this.reports;
    await this.agent?.close().catch(() => undefined);
  }

  /** Follows the snapshot: new clients connect, removed ones are dropped, changed ones reconnect. */
  private sync(): void {
    if (this.closed) return;
    const next = this.deps.state.snapshot.mcpClients;
    let toolsChanged = false;
    for (const [id, entry] of this.entries) {
      if (next.has(id)) continue;
      this.entries.delete(id);
      void entry.teardown();
      toolsChanged = true;
    }
    for (const record of next.values()) {
      const entry = this.entries.get(record.id);
      if (!entry) {
        const fresh = new ClientConnection(record, this.ctx);
        this.entries.set(record.id, fresh);
        fresh.start();
      } else if (connectionKey(entry.record) !== connectionKey(record)) {
        entry.record = record;
        entry.restart();
        toolsChanged = true;
      } else if (entry.record !== record) {
        if (entry.record.name !== record.name) toolsChanged = true;
        entry.record = record;
      }
    }
    if (toolsChanged) this.rebuildTools();
  }

  /** Closes idle per-user sessions; runs only while some are open. */
  private startSweep(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(
      () => {
        const cutoff = this.deps.now() - this.opts.perUserIdleMs;
        let open = 0;
        for (const entry of this.entries.values()) open += entry.pool.sweep(cutoff);
        if (open === 0) {
          clearInterval(this.sweepTimer);
          this.sweepTimer = undefined;
        }
      },
      Math.max(1_000, Math.min(60_000, this.opts.perUserIdleMs / 2)),
    );
    this.sweepTimer.unref();
  }

  private rebuildTools(): void {
    this.toolList = qualifiedTools([...this.entries.values()].map((e) => ({ record: e.record, tools: e.tools })));
  }

  /** Writes a client's state transition to its row, after the earlier ones (a failure is logged). */
  private report(id: string, state: McpConnectionState, message: string | undefined, at: Date): void {
    this.reports = this.reports
      .then(() => reportMcpClientState(this.deps.state.db, id, state, message, at))
      .catch((err: unknown) =>
        this.deps.logger.warn({ mcp_client: id, err: messageOf(err) }, 'MCP state report failed'),
      );
  }
}
