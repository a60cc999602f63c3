// Connections to the upstream MCP servers, following the snapshot's MCP clients: every enabled client gets a
// session (per_user_oauth clients get one per caller binding, opened on first use), a failed or lost session is
// reopened with capped, jittered backoff, and the tools each server lists are offered under `<client>-<tool>`.
// The state this pod sees is kept per client and written to the client's row on transitions. A gateway with no
// MCP client creates no agent, timer or connection.
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
import { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from './backoff.ts';
import { authErrorOf, describeError } from './errors.ts';
import { type ListedTool, type SessionLimits, UpstreamSession } from './session.ts';

export interface ConnectionOptions extends SessionLimits {
  backoff: BackoffPolicy;
  /** Health probe period of a connected session. */
  healthIntervalMs: number;
  /** per_user_oauth: most open sessions per client (the least recently used is closed beyond it). */
  perUserMaxSessions: number;
  /** per_user_oauth: a session unused this long is closed. */
  perUserIdleMs: number;
}

export const DEFAULT_CONNECTION_OPTIONS: ConnectionOptions = {
  connectTimeoutMs: 15_000,
  callTimeoutMs: 60_000,
  requestTimeoutMs: 15_000,
  maxResponseBytes: 16 * 1024 * 1024,
  maxResultBytes: 8 * 1024 * 1024,
  maxTools: 1000,
  backoff: DEFAULT_BACKOFF,
  healthIntervalMs: 30_000,
  perUserMaxSessions: 100,
  perUserIdleMs: 5 * 60_000,
};

/** OpenAI's function-name rule: a qualified tool name outside it cannot be offered to models. */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface Pooled {
  ready: Promise<UpstreamSession>;
  session?: UpstreamSession | undefined;
  lastUsed: number;
}

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
  pool: Map<string, Pooled>;
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

function bindingKey(b: TokenBinding): string {
  return b.kind === 'server' ? 'server' : `${b.kind}:${b.id}`;
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
    let pooled: Pooled | undefined;
    if (entry.record.auth_type === 'per_user_oauth') {
      pooled = this.pooled(entry, ctx.binding);
      try {
        session = await pooled.ready;
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
      // A failed call may be the first sign of a lost server: check the session (one probe at a time).
      if (pooled) this.dropPooled(entry, ctx.binding, session);
      else this.probe(entry, session);
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
          pool: new Map(),
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
    const sessions = [entry.session, ...[...entry.pool.values()].map((p) => p.session)];
    entry.session = undefined;
    entry.pool.clear();
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

  /** The session of `binding` for a per_user_oauth client, opened on first use. */
  private pooled(entry: Entry, binding: TokenBinding): Pooled {
    const key = bindingKey(binding);
    const now = this.deps.now();
    const found = entry.pool.get(key);
    if (found) {
      found.lastUsed = now;
      return found;
    }
    if (entry.pool.size >= this.opts.perUserMaxSessions) {
      const oldest = [...entry.pool.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
      if (oldest) {
        entry.pool.delete(oldest[0]);
        void oldest[1].session?.close();
      }
    }
    const gen = entry.generation;
    const slot: { current?: Pooled } = {};
    const ready = (async () => {
      await checkOutboundUrl(entry.record.connection_string, this.allow);
      const session = this.newSession(entry, binding, (s) => this.dropPooled(entry, binding, s));
      await session.open();
      if (gen !== entry.generation || !slot.current || entry.pool.get(key) !== slot.current) {
        await session.close();
        throw new Error('the client changed while connecting; try again');
      }
      slot.current.session = session;
      this.setTools(entry, session.tools);
      this.setState(entry, 'connected', undefined);
      return session;
    })();
    const pooled: Pooled = { lastUsed: now, ready };
    slot.current = pooled;
    pooled.ready.catch((err: unknown) => {
      if (entry.pool.get(key) === pooled) entry.pool.delete(key);
      this.deps.logger.warn(
        { mcp_client: entry.record.name, binding: binding.kind, err: describeError(err) },
        'MCP per-user session failed to open',
      );
    });
    entry.pool.set(key, pooled);
    this.startSweep();
    return pooled;
  }

  private dropPooled(entry: Entry, binding: TokenBinding, session: UpstreamSession): void {
    const key = bindingKey(binding);
    const pooled = entry.pool.get(key);
    if (pooled?.session === session) entry.pool.delete(key);
    void session.close();
  }

  /** Closes idle per-user sessions; runs only while some are open. */
  private startSweep(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(
      () => {
        const cutoff = this.deps.now() - this.opts.perUserIdleMs;
        let open = 0;
        for (const entry of this.entries.values()) {
          for (const [key, p] of entry.pool) {
            if (p.session && p.lastUsed < cutoff) {
              entry.pool.delete(key);
              void p.session.close();
            }
          }
          open += entry.pool.size;
        }
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
    entry.tools = tools.filter((t) => {
      if (FUNCTION_NAME.test(qualifiedToolName(name, t.name))) return true;
      this.deps.logger.warn(
        { mcp_client: name, tool: t.name.slice(0, 100) },
        'MCP tool left out: its name <client>-<tool> does not fit ^[A-Za-z0-9_-]{1,64}$',
      );
      return false;
    });
    this.rebuildTools();
  }

  private rebuildTools(): void {
    const out: McpTool[] = [];
    for (const entry of this.entries.values()) {
      const r = entry.record;
      if (r.disabled) continue;
      for (const t of entry.tools) {
        const qualifiedName = qualifiedToolName(r.name, t.name);
        // A rename can push a listed name past the rule.
        if (!FUNCTION_NAME.test(qualifiedName)) continue;
        out.push({
          clientId: r.id,
          clientName: r.name,
          name: t.name,
          qualifiedName,
          description: t.description,
          inputSchema: t.inputSchema,
        });
      }
    }
    this.toolList = out;
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
