// Connections to the upstream MCP servers, following the snapshot's MCP clients: every enabled client gets a
// session (per_user_oauth clients get one per caller binding, opened on first use), a failed or lost session is
// reopened with capped, jittered backoff, and the tools each server lists are offered under `<client>-<tool>`.
// The state this pod sees is kept per client and written to the client's row on transitions. A gateway with no
// MCP client creates no agent, timer or connection.
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Agent } from 'undici';
import { reportMcpClientState } from '../../state/services/mcp/state-report.ts';
import { messageOf } from '../../util/errors.ts';
import type { McpDeps } from '../index.ts';
import { qualifiedToolName } from '../policy.ts';
import { checkOutboundUrl, guardedAgent, OutboundAllowList } from '../ssrf.ts';
import type {
  McpCallContext,
  McpClientRecord,
  McpConnectionState,
  McpConnections,
  McpCredentials,
  McpTool,
  McpToolResult,
  TokenBinding,
} from '../types.ts';
import { backoffDelay } from './backoff.ts';
import { authErrorOf, describeError } from './errors.ts';
import { type ConnectionOptions, DEFAULT_CONNECTION_OPTIONS } from './options.ts';
import { SessionPool } from './pool.ts';
import { type ListedTool, UpstreamSession } from './session.ts';
import { callableTools, qualifiedTools } from './tools.ts';

export type { ConnectionOptions } from './options.ts';

interface Entry {
  record: McpClientRecord;
  /** The shared session (every auth type but per_user_oauth). */
  session?: UpstreamSession | undefined;
  connecting?: Promise<void> | undefined;
  attempt: number;
  retryTimer?: NodeJS.Timeout | undefined;
  healthTimer?: NodeJS.Timeout | undefined;
  probing: boolean;
  /** Bumped whenever the entry's sessions are dropped: late results of older attempts are ignored. */
  generation: number;
  state: McpConnectionState;
  message?: string | undefined;
  /** Tools as last listed (per_user_oauth: through any binding). */
  tools: ListedTool[];
  /** per_user_oauth: a session per caller binding. */
  pool: SessionPool;
}

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

/** An error the server itself answered (its session is alive), as opposed to a transport failure or a timeout. */
function answeredByServer(err: unknown): boolean {
  return err instanceof McpError && err.code !== ErrorCode.RequestTimeout && err.code !== ErrorCode.ConnectionClosed;
}

export class McpConnectionManager implements McpConnections {
  private readonly entries = new Map<string, Entry>();
  private readonly opts: ConnectionOptions;
  private readonly allow: OutboundAllowList;
  private readonly credentials: McpCredentials;
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
    this.allow = new OutboundAllowList(deps.file.mcp.allowed_private_networks);
    this.credentials = deps.credentials;
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
    let session: UpstreamSession;
    const perUser = entry.record.auth_type === 'per_user_oauth';
    if (perUser) {
      try {
        session = await entry.pool.get(ctx.binding, this.deps.now());
      } catch (err) {
        throw authErrorOf(err) ?? new Error(`MCP client ${client.name} is not reachable: ${describeError(err)}`);
      }
    } else {
      // A session being opened (a new client, a reconnect) is worth the wait; its connect is bounded.
      if (!entry.session && entry.connecting) await entry.connecting;
      if (!entry.session) {
        throw new Error(`MCP client ${client.name} is not connected: ${entry.message ?? 'connecting'}`);
      }
      session = entry.session;
    }
    try {
      return await session.call(tool, args, ctx.signal);
    } catch (err) {
      const auth = authErrorOf(err);
      if (auth) throw auth;
      if (ctx.signal?.aborted) throw err;
      // A failed call may be the first sign of a lost server: check the session (one probe at a time); a
      // per-user session is simply reopened on its next use. A JSON-RPC error the server answered is no such sign.
      if (!answeredByServer(err)) {
        if (perUser) entry.pool.drop(ctx.binding, session);
        else this.probe(entry, session);
      }
      throw new Error(`MCP tool ${qualifiedToolName(client.name, tool)} failed: ${describeError(err)}`, {
        cause: err,
      });
    }
  }

  async reconnect(clientId: string): Promise<void> {
    const entry = this.entries.get(clientId);
    if (!entry || this.closed) return;
    this.restart(entry);
    await entry.connecting;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    clearInterval(this.sweepTimer);
    await Promise.allSettled([...this.entries.values()].map((e) => this.teardown(e)));
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
      void this.teardown(entry);
      toolsChanged = true;
    }
    for (const record of next.values()) {
      const entry = this.entries.get(record.id);
      if (!entry) {
        const fresh: Entry = {
          record,
          attempt: 0,
          probing: false,
          generation: 0,
          state: 'disconnected',
          tools: [],
          pool: new SessionPool(this.opts.perUserMaxSessions, (binding, wanted) =>
            this.openPooled(fresh, binding, wanted),
          ),
        };
        this.entries.set(record.id, fresh);
        this.start(fresh);
      } else if (connectionKey(entry.record) !== connectionKey(record)) {
        entry.record = record;
        this.restart(entry);
        toolsChanged = true;
      } else if (entry.record !== record) {
        if (entry.record.name !== record.name) toolsChanged = true;
        entry.record = record;
      }
    }
    if (toolsChanged) this.rebuildTools();
  }

  private start(entry: Entry): void {
    if (entry.record.disabled) {
      this.setState(entry, 'disconnected', 'disabled');
      return;
    }
    // per_user_oauth: nothing to open until a caller with a binding uses the client.
    if (entry.record.auth_type === 'per_user_oauth') return;
    this.connect(entry);
  }

  /** Drops the client's sessions and opens them again from a fresh backoff. */
  private restart(entry: Entry): void {
    void this.teardown(entry);
    entry.attempt = 0;
    entry.tools = [];
    this.rebuildTools();
    if (entry.record.disabled || entry.record.auth_type === 'per_user_oauth') {
      this.setState(entry, 'disconnected', entry.record.disabled ? 'disabled' : undefined);
    }
    this.start(entry);
  }

  private async teardown(entry: Entry): Promise<void> {
    entry.generation++;
    clearTimeout(entry.retryTimer);
    clearInterval(entry.healthTimer);
    entry.retryTimer = undefined;
    entry.healthTimer = undefined;
    entry.connecting = undefined;
    const sessions = [entry.session, ...entry.pool.clear()];
    entry.session = undefined;
    await Promise.allSettled(sessions.map((s) => s?.close()));
  }

  private dispatcher(): Agent {
    this.agent ??= guardedAgent(this.allow, { connectTimeoutMs: this.opts.connectTimeoutMs });
    return this.agent;
  }

  private newSession(entry: Entry, binding: TokenBinding, onTrouble: (s: UpstreamSession) => void) {
    const session: UpstreamSession = new UpstreamSession(entry.record, binding, {
      credentials: this.credentials,
      dispatcher: this.dispatcher(),
      limits: this.opts,
      version: '1.5.0',
      events: {
        onTools: (tools) => this.setTools(entry, tools),
        onTrouble: (reason, closed) => {
          // While opening, the opening fails by itself; dropping the session then would hide why.
          if (!session.isOpen) return;
          this.deps.logger.debug({ mcp_client: entry.record.name, reason }, 'MCP session trouble');
          if (closed) onTrouble(session);
          else if (entry.session === session) this.probe(entry, session);
          else onTrouble(session);
        },
      },
    });
    return session;
  }

  private connect(entry: Entry): void {
    const gen = entry.generation;
    const record = entry.record;
    entry.retryTimer = undefined;
    entry.connecting = (async () => {
      let session: UpstreamSession | undefined;
      try {
        await checkOutboundUrl(record.connection_string, this.allow);
        session = this.newSession(entry, { kind: 'server' }, (s) => this.lost(entry, s, 'connection closed'));
        await session.open();
      } catch (err) {
        if (gen !== entry.generation || this.closed) return;
        this.setState(entry, 'error', describeError(err));
        this.retry(entry);
        return;
      }
      if (gen !== entry.generation || this.closed) {
        await session.close();
        return;
      }
      entry.session = session;
      entry.attempt = 0;
      this.setTools(entry, session.tools);
      this.setState(entry, 'connected', undefined);
      entry.healthTimer = setInterval(() => {
        if (entry.session) this.probe(entry, entry.session);
      }, this.opts.healthIntervalMs);
      entry.healthTimer.unref();
    })().finally(() => {
      if (gen === entry.generation) entry.connecting = undefined;
    });
  }

  private retry(entry: Entry): void {
    const delay = backoffDelay(entry.attempt++, this.opts.backoff);
    const gen = entry.generation;
    entry.retryTimer = setTimeout(() => {
      if (gen === entry.generation && !this.closed) this.connect(entry);
    }, delay);
    entry.retryTimer.unref();
  }

  /** Checks a session that showed trouble; a failed probe drops it and reconnects. */
  private probe(entry: Entry, session: UpstreamSession): void {
    if (entry.probing || entry.session !== session) return;
    entry.probing = true;
    session
      .probe()
      .catch((err: unknown) => this.lost(entry, session, describeError(err)))
      .finally(() => {
        entry.probing = false;
      });
  }

  private lost(entry: Entry, session: UpstreamSession, reason: string): void {
    if (entry.session !== session || this.closed) return;
    entry.session = undefined;
    clearInterval(entry.healthTimer);
    entry.healthTimer = undefined;
    void session.close();
    entry.tools = [];
    this.rebuildTools();
    this.setState(entry, 'error', reason);
    this.deps.logger.warn({ mcp_client: entry.record.name, reason }, 'MCP server connection lost; reconnecting');
    this.retry(entry);
  }

  /** Opens the session of `binding` for a per_user_oauth client (the pool calls it on the binding's first use). */
  private async openPooled(entry: Entry, binding: TokenBinding, stillWanted: () => boolean): Promise<UpstreamSession> {
    const gen = entry.generation;
    try {
      await checkOutboundUrl(entry.record.connection_string, this.allow);
      const session = this.newSession(entry, binding, (s) => entry.pool.drop(binding, s));
      await session.open();
      if (gen !== entry.generation || !stillWanted()) {
        await session.close();
        throw new Error('the client changed while connecting; try again');
      }
      this.setTools(entry, session.tools);
      this.setState(entry, 'connected', undefined);
      this.startSweep();
      return session;
    } catch (err) {
      this.deps.logger.warn(
        { mcp_client: entry.record.name, binding: binding.kind, err: describeError(err) },
        'MCP per-user session failed to open',
      );
      throw err;
    }
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

  /** A client's newly listed tools; those whose qualified name models could not call are left out, with a warning. */
  private setTools(entry: Entry, tools: ListedTool[]): void {
    const name = entry.record.name;
    entry.tools = callableTools(name, tools, (tool) =>
      this.deps.logger.warn(
        { mcp_client: name, tool: tool.slice(0, 100) },
        'MCP tool left out: its name <client>-<tool> does not fit ^[A-Za-z0-9_-]{1,64}$',
      ),
    );
    this.rebuildTools();
  }

  private rebuildTools(): void {
    this.toolList = qualifiedTools([...this.entries.values()].map((e) => ({ record: e.record, tools: e.tools })));
  }

  /** Records a transition (and only a transition) and writes it to the client's row. */
  private setState(entry: Entry, state: McpConnectionState, message: string | undefined): void {
    if (entry.state === state && entry.message === message) return;
    entry.state = state;
    entry.message = message;
    const log = { mcp_client: entry.record.name, state, ...(message ? { message } : {}) };
    if (state === 'error') this.deps.logger.warn(log, 'MCP client state');
    else this.deps.logger.info(log, 'MCP client state');
    const id = entry.record.id;
    const at = new Date(this.deps.now());
    this.reports = this.reports
      .then(() => reportMcpClientState(this.deps.state.db, id, state, message, at))
      .catch((err: unknown) =>
        this.deps.logger.warn({ mcp_client: id, err: messageOf(err) }, 'MCP state report failed'),
      );
  }
}
