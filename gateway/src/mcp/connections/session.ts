// One MCP session with an upstream tool server, through the official SDK client: connect (initialize), list
// every page of tools, follow `notifications/tools/list_changed`, call tools, probe health, close. It knows
// nothing of reconnecting or of the snapshot: the manager decides when to open and drop sessions.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Dispatcher } from 'undici';
import type { McpClientRecord, McpCredentials, McpToolResult, TokenBinding } from '../types.ts';
import { authErrorOf } from './errors.ts';
import { boundedFetch } from './fetch.ts';
import { type ClientSdk, clientSdk } from './sdk.ts';

export interface SessionLimits {
  connectTimeoutMs: number;
  /** Deadline of listing, pings and other short requests. */
  requestTimeoutMs: number;
  maxResponseBytes: number;
  /** Largest tool result handed on (its JSON). */
  maxResultBytes: number;
  /** Most tools taken from one server. */
  maxTools: number;
}

/** A tool as the server lists it. */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

export interface SessionEvents {
  /** The server announced a changed tool list and it was listed again. */
  onTools(tools: ListedTool[]): void;
  /** Something suggests the connection is gone (event stream error, transport closed). */
  onTrouble(reason: string, closed: boolean): void;
}

export interface SessionDeps {
  credentials: McpCredentials;
  dispatcher: Dispatcher;
  limits: SessionLimits;
  /** Deadline of one tool call, read at each call (the client setting mcp_tool_execution_timeout). */
  callTimeoutMs: () => number;
  events: SessionEvents;
  version: string;
}

const MAX_PAGES = 100;

export class UpstreamSession {
  tools: ListedTool[] = [];
  private readonly client: Client;
  private readonly transport: Transport;
  private closing = false;
  private opened = false;
  private relisting: Promise<void> | undefined;
  private relistAgain = false;

  readonly record: McpClientRecord;
  private readonly deps: SessionDeps;
  private readonly sdk: ClientSdk;

  /** A session not yet opened; the first one imports the SDK. */
  static async create(record: McpClientRecord, binding: TokenBinding, deps: SessionDeps): Promise<UpstreamSession> {
    return new UpstreamSession(record, binding, deps, await clientSdk.get());
  }

  private constructor(record: McpClientRecord, binding: TokenBinding, deps: SessionDeps, sdk: ClientSdk) {
    this.record = record;
    this.deps = deps;
    this.sdk = sdk;
    const { Client, SSEClientTransport, StreamableHTTPClientTransport } = sdk;
    const { limits } = deps;
    const fetch = boundedFetch({
      dispatcher: deps.dispatcher,
      headers: (signal) => deps.credentials.headersFor(record, binding, signal),
      // A tool call's POST may carry its whole answer; the SDK's own per-request timeout is the tighter one.
      requestTimeoutMs: () => deps.callTimeoutMs() + 5_000,
      streamOpenTimeoutMs: limits.connectTimeoutMs,
      maxResponseBytes: limits.maxResponseBytes,
    });
    const url = new URL(record.connection_string);
    this.transport =
      record.connection_type === 'sse'
        ? new SSEClientTransport(url, { fetch })
        : new StreamableHTTPClientTransport(url, {
            fetch,
            // The manager reconnects the whole session; the transport retries its event stream only briefly.
            reconnectionOptions: {
              initialReconnectionDelay: 500,
              maxReconnectionDelay: 2_000,
              reconnectionDelayGrowFactor: 2,
              maxRetries: 1,
            },
          });
    this.client = new Client({ name: 'model-gateway', version: deps.version }, { capabilities: {} });
    this.client.onerror = (err) => {
      // A credential that could not be supplied (McpAuthError) fails only its own request, which rejects with it
      // so the caller reads why; dropping the session here would turn that into "Connection closed".
      if (authErrorOf(err)) return;
      if (!this.closing) deps.events.onTrouble(err.message, false);
    };
    this.client.onclose = () => {
      if (!this.closing) deps.events.onTrouble('connection closed', true);
    };
    this.client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, async () => {
      this.relist();
    });
  }

  /** True once `open` succeeded: trouble reported before that is `open`'s own failure to report. */
  get isOpen(): boolean {
    return this.opened && !this.closing;
  }

  /** Connects and lists the tools; throws (and closes) on failure. */
  async open(): Promise<void> {
    try {
      await this.client.connect(this.transport, { timeout: this.deps.limits.connectTimeoutMs });
      this.tools = await this.listAll();
      this.opened = true;
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  private async listAll(): Promise<ListedTool[]> {
    const out: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await this.client.listTools(cursor === undefined ? undefined : { cursor }, {
        timeout: this.deps.limits.requestTimeoutMs,
      });
      for (const t of res.tools) {
        if (out.length >= this.deps.limits.maxTools) return out;
        out.push({ name: t.name, description: t.description, inputSchema: t.inputSchema as Record<string, unknown> });
      }
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  /** Lists again (coalescing announcements that arrive while a listing runs). */
  private relist(): void {
    if (this.relisting) {
      this.relistAgain = true;
      return;
    }
    this.relisting = (async () => {
      do {
        this.relistAgain = false;
        try {
          this.tools = await this.listAll();
          if (!this.closing) this.deps.events.onTools(this.tools);
        } catch (err) {
          if (!this.closing) this.deps.events.onTrouble(`listing tools failed: ${(err as Error).message}`, false);
        }
      } while (this.relistAgain && !this.closing);
    })().finally(() => {
      this.relisting = undefined;
    });
  }

  /** For tests and the manager: waits for a running re-listing. */
  async settled(): Promise<void> {
    await this.relisting;
  }

  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal | undefined): Promise<McpToolResult> {
    const res = await this.client.callTool({ name: tool, arguments: args }, this.sdk.CallToolResultSchema, {
      timeout: this.deps.callTimeoutMs(),
      ...(signal ? { signal } : {}),
    });
    const size = Buffer.byteLength(JSON.stringify(res));
    if (size > this.deps.limits.maxResultBytes) {
      throw new Error(`the result of ${tool} is ${size} bytes, over the limit of ${this.deps.limits.maxResultBytes}`);
    }
    const out: McpToolResult = { content: (res.content ?? []) as Array<Record<string, unknown>> };
    if (res.structuredContent) out.structuredContent = res.structuredContent as Record<string, unknown>;
    if (res.isError) out.isError = true;
    return out;
  }

  /** A health probe: `ping` where the server supports it, a listing otherwise. */
  async probe(): Promise<void> {
    const timeout = this.deps.limits.requestTimeoutMs;
    if (this.record.is_ping_available) await this.client.ping({ timeout });
    else await this.client.listTools(undefined, { timeout });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // Streamable HTTP: end the session on the server too (DELETE), briefly; a dead server is not waited for.
    if (this.transport instanceof this.sdk.StreamableHTTPClientTransport && this.transport.sessionId) {
      const ended = this.transport.terminateSession().catch(() => undefined);
      await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    }
    await this.client.close().catch(() => undefined);
  }
}
