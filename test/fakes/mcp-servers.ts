// Third-party MCP tool servers for tests, built with the official MCP SDK's server side so the gateway speaks to
// the real wire formats: streamable HTTP (stateful sessions, as real servers run) or the older HTTP+SSE
// transport (GET event stream + POST messages). A server records every tool call with the headers it saw, can
// demand static headers or any other authorization (the OAuth tests answer 401 with RFC 9728 metadata through
// the hooks), can change its tool list and announce it, and can be killed and restarted on the same port.
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  isInitializeRequest,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface FakeToolContext {
  /** Headers of the HTTP request that carried the call (lower-case names). */
  headers: IncomingMessage['headers'];
  signal: AbortSignal;
}

export interface FakeTool {
  name: string;
  description?: string;
  /** A zod object schema (arguments are validated with it) or a JSON Schema object (not validated). */
  inputSchema?: z.ZodType | Record<string, unknown>;
  /** A string answer becomes one text block; an object is the CallToolResult as is. Throwing → isError result. */
  handler?: (args: Record<string, unknown>, ctx: FakeToolContext) => unknown;
}

export interface RecordedToolCall {
  tool: string;
  args: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

export interface RecordedHttpRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

export interface McpToolServerOptions {
  transport: 'http' | 'sse';
  tools: FakeTool[];
  /** Static headers every request must carry (name case-insensitive, value exact); 401 otherwise. */
  requiredHeaders?: Record<string, string>;
  /** Any other check of a request; false → `onUnauthorized` (default: 401 JSON). */
  authorize?: (req: IncomingMessage) => boolean | Promise<boolean>;
  onUnauthorized?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Answers a request before the MCP endpoint (e.g. `/.well-known/oauth-protected-resource`); true if it did. */
  route?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
  /** Page size of tools/list (default: every tool on one page). */
  pageSize?: number;
  name?: string;
}

export interface McpToolServer {
  /** The MCP endpoint: `.../mcp` (streamable HTTP) or `.../sse` (SSE). */
  url: string;
  port: number;
  calls: RecordedToolCall[];
  requests: RecordedHttpRequest[];
  setTools(tools: FakeTool[]): void;
  /** Sends `notifications/tools/list_changed` on every open session. */
  notifyToolsChanged(): Promise<void>;
  /** Open MCP sessions (connected clients). */
  sessions(): number;
  /** Stops listening and drops every connection (a crash); `restart()` listens again on the same port. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** A text answer: the tool's name and its arguments, so tests can see the call went through. */
export function echoTool(name: string, description = `echoes its arguments (${name})`): FakeTool {
  return {
    name,
    description,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    handler: (args) => `${name}:${JSON.stringify(args)}`,
  };
}

function isZod(schema: unknown): schema is z.ZodType {
  return schema instanceof z.ZodType;
}

function jsonSchemaOf(tool: FakeTool): Record<string, unknown> {
  const schema = tool.inputSchema;
  if (schema === undefined) return { type: 'object', properties: {} };
  if (isZod(schema)) return z.toJSONSchema(schema) as Record<string, unknown>;
  return schema;
}

function toResult(value: unknown): CallToolResult {
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  if (value && typeof value === 'object' && Array.isArray((value as { content?: unknown }).content)) {
    return value as CallToolResult;
  }
  return { content: [{ type: 'text', text: JSON.stringify(value ?? null) }] };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  if (chunks.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

export async function startMcpToolServer(opts: McpToolServerOptions): Promise<McpToolServer> {
  let tools = [...opts.tools];
  const calls: RecordedToolCall[] = [];
  const requests: RecordedHttpRequest[] = [];
  // Every open session: its SDK server and transport (streamable HTTP by session id, SSE by its session id).
  const sessions = new Map<string, { server: Server; transport: StreamableHTTPServerTransport | SSEServerTransport }>();

  function newMcpServer(): Server {
    const server = new Server(
      { name: opts.name ?? 'fake-mcp', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const all = tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: jsonSchemaOf(t) as { type: 'object'; properties?: Record<string, object> },
      }));
      if (!opts.pageSize) return { tools: all };
      const start = Number(request.params?.cursor ?? 0);
      const page = all.slice(start, start + opts.pageSize);
      const next = start + opts.pageSize;
      return next < all.length ? { tools: page, nextCursor: String(next) } : { tools: page };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const name = request.params.name;
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const headers = (extra.requestInfo?.headers ?? {}) as IncomingMessage['headers'];
      calls.push({ tool: name, args, headers });
      const tool = tools.find((t) => t.name === name);
      if (!tool) return { content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true };
      let input = args;
      if (isZod(tool.inputSchema)) {
        const parsed = tool.inputSchema.safeParse(args);
        if (!parsed.success) {
          return { content: [{ type: 'text', text: `invalid arguments: ${parsed.error.message}` }], isError: true };
        }
        input = parsed.data as Record<string, unknown>;
      }
      try {
        const value = tool.handler ? await tool.handler(input, { headers, signal: extra.signal }) : 'ok';
        return toResult(value);
      } catch (err) {
        return { content: [{ type: 'text', text: (err as Error).message }], isError: true };
      }
    });
    return server;
  }

  async function allowed(req: IncomingMessage): Promise<boolean> {
    for (const [name, value] of Object.entries(opts.requiredHeaders ?? {})) {
      if (req.headers[name.toLowerCase()] !== value) return false;
    }
    return opts.authorize ? await opts.authorize(req) : true;
  }

  function unauthorized(req: IncomingMessage, res: ServerResponse): void {
    if (opts.onUnauthorized) {
      opts.onUnauthorized(req, res);
      return;
    }
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
  }

  async function handleHttp(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (path !== '/mcp') return void res.writeHead(404).end();
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) {
      await (existing.transport as StreamableHTTPServerTransport).handleRequest(req, res, body);
      return;
    }
    if (req.method === 'POST' && sessionId === undefined && isInitializeRequest(body)) {
      const server = newMcpServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, { server, transport }),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    // An unknown session (e.g. after a restart): 404 tells a client to start a new session.
    res
      .writeHead(sessionId === undefined ? 400 : 404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no valid session' }, id: null }));
  }

  async function handleSse(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) {
    if (req.method === 'GET' && path === '/sse') {
      const server = newMcpServer();
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, { server, transport });
      transport.onclose = () => void sessions.delete(transport.sessionId);
      res.on('close', () => void sessions.delete(transport.sessionId));
      await server.connect(transport);
      return;
    }
    if (req.method === 'POST' && path === '/messages') {
      const entry = sessions.get(query.get('sessionId') ?? '');
      if (!entry) return void res.writeHead(404).end('unknown session');
      const body = await readJson(req);
      await (entry.transport as SSEServerTransport).handlePostMessage(req, res, body);
      return;
    }
    res.writeHead(404).end();
  }

  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      requests.push({ method: req.method ?? 'GET', path: url.pathname, headers: req.headers });
      if (opts.route && (await opts.route(req, res))) return;
      if (!(await allowed(req))) return unauthorized(req, res);
      if (opts.transport === 'http') await handleHttp(req, res, url.pathname);
      else await handleSse(req, res, url.pathname, url.searchParams);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
      else res.destroy();
    });
  });

  async function listen(port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
    return (http.address() as AddressInfo).port;
  }

  async function dropSessions(): Promise<void> {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(open.map((s) => s.server.close()));
  }

  async function stop(): Promise<void> {
    if (!http.listening) return;
    const closed = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeAllConnections();
    await dropSessions();
    await closed;
  }

  const port = await listen(0);
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}${opts.transport === 'http' ? '/mcp' : '/sse'}`,
    port,
    calls,
    requests,
    setTools(next) {
      tools = [...next];
    },
    async notifyToolsChanged() {
      await Promise.allSettled([...sessions.values()].map((s) => s.server.sendToolListChanged()));
    },
    sessions: () => sessions.size,
    kill: stop,
    async restart() {
      await listen(port);
    },
    close: stop,
  };
}
