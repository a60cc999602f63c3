// The sessions of one MCP client and their bookkeeping: the shared session (every auth type but per_user_oauth)
// opened, health-probed and reopened with capped, jittered backoff when lost; per_user_oauth sessions opened per
// caller binding through the pool; the tools last listed; and the client's state, recorded on transitions only.
// Which clients exist, and when one changes, is the manager's (it follows the snapshot).
import type { Logger } from 'pino';
import type { Agent } from 'undici';
import { GATEWAY_VERSION } from '../../version.ts';
import { qualifiedToolName } from '../policy.ts';
import { checkOutboundUrl, type OutboundAllowList } from '../ssrf.ts';
import type {
  McpCallContext,
  McpClientRecord,
  McpConnectionState,
  McpCredentials,
  McpToolResult,
  TokenBinding,
} from '../types.ts';
import { backoffDelay } from './backoff.ts';
import { authErrorOf, describeError } from './errors.ts';
import type { ConnectionOptions } from './options.ts';
import { SessionPool } from './pool.ts';
import { answeredByServer } from './sdk.ts';
import { type ListedTool, UpstreamSession } from './session.ts';
import { callableTools } from './tools.ts';

/** What every client's connection shares, from the manager. */
export interface ConnectionContext {
  readonly opts: ConnectionOptions;
  /** Deadline of one tool call now (the setting may change while sessions stay open). */
  callTimeoutMs(): number;
  readonly allow: OutboundAllowList;
  readonly credentials: McpCredentials;
  readonly logger: Logger;
  now(): number;
  /** The one SSRF-guarded agent of every session (created on first use). */
  dispatcher(): Agent;
  /** The manager is closed: nothing more is opened or retried. */
  closed(): boolean;
  /** Some client's tools changed: the offered list is rebuilt. */
  toolsChanged(): void;
  /** Writes a state transition to the client's row (in order, after the earlier ones). */
  report(clientId: string, state: McpConnectionState, message: string | undefined, at: Date): void;
  /** Some per-user session is open: idle ones are to be swept. */
  perUserSessionOpened(): void;
}

export class ClientConnection {
  record: McpClientRecord;
  /** The shared session (every auth type but per_user_oauth). */
  private session?: UpstreamSession | undefined;
  connecting?: Promise<void> | undefined;
  state: McpConnectionState = 'disconnected';
  message?: string | undefined;
  /** Tools as last listed (per_user_oauth: through any binding). */
  tools: ListedTool[] = [];
  /** per_user_oauth: a session per caller binding. */
  readonly pool: SessionPool;
  private attempt = 0;
  private retryTimer?: NodeJS.Timeout | undefined;
  private healthTimer?: NodeJS.Timeout | undefined;
  private probing = false;
  /** Bumped whenever the sessions are dropped: late results of older attempts are ignored. */
  private generation = 0;
  private readonly ctx: ConnectionContext;

  constructor(record: McpClientRecord, ctx: ConnectionContext) {
    this.record = record;
    this.ctx = ctx;
    this.pool = new SessionPool(ctx.opts.perUserMaxSessions, (binding, wanted) => this.openPooled(binding, wanted));
  }

  /** Calls `tool` through the caller's session; `name` is the client's as the caller resolved the tool. */
  async call(name: string, tool: string, args: Record<string, unknown>, ctx: McpCallContext): Promise<McpToolResult> {
    let session: UpstreamSession;
    const perUser = this.record.auth_type === 'per_user_oauth';
    if (perUser) {
      try {
        session = await this.pool.get(ctx.binding, this.ctx.now());
      } catch (err) {
        throw authErrorOf(err) ?? new Error(`MCP client ${name} is not reachable: ${describeError(err)}`);
      }
    } else {
      // A session being opened (a new client, a reconnect) is worth the wait; its connect is bounded.
      if (!this.session && this.connecting) await this.connecting;
      if (!this.session) {
        throw new Error(`MCP client ${name} is not connected: ${this.message ?? 'connecting'}`);
      }
      session = this.session;
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
        if (perUser) this.pool.drop(ctx.binding, session);
        else this.probe(session);
      }
      throw new Error(`MCP tool ${qualifiedToolName(name, tool)} failed: ${describeError(err)}`, {
        cause: err,
      });
    }
  }

  start(): void {
    if (this.record.disabled) {
      this.setState('disconnected', 'disabled');
      return;
    }
    // per_user_oauth: nothing to open until a caller with a binding uses the client.
    if (this.record.auth_type === 'per_user_oauth') return;
    this.connect();
  }

  /** Drops the client's sessions and opens them again from a fresh backoff. */
  restart(): void {
    void this.teardown();
    this.attempt = 0;
    this.tools = [];
    this.ctx.toolsChanged();
    if (this.record.disabled || this.record.auth_type === 'per_user_oauth') {
      this.setState('disconnected', this.record.disabled ? 'disabled' : undefined);
    }
    this.start();
  }

  async teardown(): Promise<void> {
    this.generation++;
    clearTimeout(this.retryTimer);
    clearInterval(this.healthTimer);
    this.retryTimer = undefined;
    this.healthTimer = undefined;
    this.connecting = undefined;
    const sessions = [this.session, ...this.pool.clear()];
    this.session = undefined;
    await Promise.allSettled(sessions.map((s) => s?.close()));
  }

  private async newSession(binding: TokenBinding, onTrouble: (s: UpstreamSession) => void) {
    const session: UpstreamSession = await UpstreamSession.create(this.record, binding, {
      credentials: this.ctx.credentials,
      dispatcher: this.ctx.dispatcher(),
      limits: this.ctx.opts,
      callTimeoutMs: () => this.ctx.callTimeoutMs(),
      version: GATEWAY_VERSION,
      events: {
        onTools: (tools) => this.setTools(tools),
        onTrouble: (reason, closed) => {
          // While opening, the opening fails by itself; dropping the session then would hide why.
          if (!session.isOpen) return;
          this.ctx.logger.debug({ mcp_client: this.record.name, reason }, 'MCP session trouble');
          if (closed) onTrouble(session);
          else if (this.session === session) this.probe(session);
          else onTrouble(session);
        },
      },
    });
    return session;
  }

  private connect(): void {
    const gen = this.generation;
    const record = this.record;
    this.retryTimer = undefined;
    this.connecting = (async () => {
      let session: UpstreamSession | undefined;
      try {
        await checkOutboundUrl(record.connection_string, this.ctx.allow);
        session = await this.newSession({ kind: 'server' }, (s) => this.lost(s, 'connection closed'));
        await session.open();
      } catch (err) {
        if (gen !== this.generation || this.ctx.closed()) return;
        this.setState('error', describeError(err));
        this.retry();
        return;
      }
      if (gen !== this.generation || this.ctx.closed()) {
        await session.close();
        return;
      }
      this.session = session;
      this.attempt = 0;
      this.setTools(session.tools);
      this.setState('connected', undefined);
      this.healthTimer = setInterval(() => {
        if (this.session) this.probe(this.session);
      }, this.ctx.opts.healthIntervalMs);
      this.healthTimer.unref();
    })().finally(() => {
      if (gen === this.generation) this.connecting = undefined;
    });
  }

  private retry(): void {
    const delay = backoffDelay(this.attempt++, this.ctx.opts.backoff);
    const gen = this.generation;
    this.retryTimer = setTimeout(() => {
      if (gen === this.generation && !this.ctx.closed()) this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  /** Checks a session that showed trouble; a failed probe drops it and reconnects. */
  private probe(session: UpstreamSession): void {
    if (this.probing || this.session !== session) return;
    this.probing = true;
    session
      .probe()
      .catch((err: unknown) => this.lost(session, describeError(err)))
      .finally(() => {
        this.probing = false;
      });
  }

  private lost(session: UpstreamSession, reason: string): void {
    if (this.session !== session || this.ctx.closed()) return;
    this.session = undefined;
    clearInterval(this.healthTimer);
    this.healthTimer = undefined;
    void session.close();
    this.tools = [];
    this.ctx.toolsChanged();
    this.setState('error', reason);
    this.ctx.logger.warn({ mcp_client: this.record.name, reason }, 'MCP server connection lost; reconnecting');
    this.retry();
  }

  /** Opens the session of `binding` for a per_user_oauth client (the pool calls it on the binding's first use). */
  private async openPooled(binding: TokenBinding, stillWanted: () => boolean): Promise<UpstreamSession> {
    const gen = this.generation;
    try {
      await checkOutboundUrl(this.record.connection_string, this.ctx.allow);
      const session = await this.newSession(binding, (s) => this.pool.drop(binding, s));
      await session.open();
      if (gen !== this.generation || !stillWanted()) {
        await session.close();
        throw new Error('the client changed while connecting; try again');
      }
      this.setTools(session.tools);
      this.setState('connected', undefined);
      this.ctx.perUserSessionOpened();
      return session;
    } catch (err) {
      this.ctx.logger.warn(
        { mcp_client: this.record.name, binding: binding.kind, err: describeError(err) },
        'MCP per-user session failed to open',
      );
      throw err;
    }
  }

  /** The client's newly listed tools; those whose qualified name models could not call are left out, with a warning. */
  private setTools(tools: ListedTool[]): void {
    const name = this.record.name;
    this.tools = callableTools(name, tools, (tool) =>
      this.ctx.logger.warn(
        { mcp_client: name, tool: tool.slice(0, 100) },
        'MCP tool left out: its name <client>-<tool> does not fit ^[A-Za-z0-9_-]{1,64}$',
      ),
    );
    this.ctx.toolsChanged();
  }

  /** Records a transition (and only a transition) and writes it to the client's row. */
  private setState(state: McpConnectionState, message: string | undefined): void {
    if (this.state === state && this.message === message) return;
    this.state = state;
    this.message = message;
    const log = { mcp_client: this.record.name, state, ...(message ? { message } : {}) };
    if (state === 'error') this.ctx.logger.warn(log, 'MCP client state');
    else this.ctx.logger.info(log, 'MCP client state');
    this.ctx.report(this.record.id, state, message, new Date(this.ctx.now()));
  }
}
