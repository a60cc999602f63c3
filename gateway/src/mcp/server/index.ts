// The gateway as an MCP server for one caller: an SDK `Server` whose tools/list answers exactly the tools the
// caller's virtual key may execute (`<client>-<tool>`, policy.ts), and whose tools/call checks that again,
// resolves whose credentials the call uses (binding.ts) and proxies it upstream. Built per request (stateless
// streamable HTTP); it holds no state of its own.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { LogMetadata } from '../../config/log-headers.ts';
import type { Principal } from '../../http/auth.ts';
import { GATEWAY_VERSION } from '../../version.ts';
import { type BindingRequest, resolveBinding } from '../binding.ts';
import { authErrorOf, describeError } from '../connections/errors.ts';
import { allowedTools, mayExecute, splitToolName, type ToolCaller } from '../policy.ts';
import { refusalOutcome, type ToolCharger, type ToolHold } from '../tool-charge.ts';
import {
  authFailure,
  recordToolCall,
  startToolCall,
  type ToolCallOutcome,
  type ToolLogSink,
  upstreamFailure,
} from '../tool-log.ts';
import type { McpClientRecord, McpConnections, McpTool } from '../types.ts';

export interface ToolServerContext {
  caller: ToolCaller;
  principal: Principal;
  /** The calling request's headers (the per-user binding reads them) and scheme. */
  request: BindingRequest;
  clients: ReadonlyMap<string, McpClientRecord>;
  connections: McpConnections;
  signal?: AbortSignal | undefined;
  /** Told of every refused call (spec: a blocked request logs which rule denied it). */
  onBlocked?: ((tool: string, reason: string) => void) | undefined;
  /** Where every executed call leaves its MCP tool-log row, timed by `now` (epoch ms). */
  toolLog?: ToolLogSink | undefined;
  now?: (() => number) | undefined;
  /** Priced calls are paid from the caller's budgets (tool-charge.ts); absent: nothing is charged. */
  charges?: ToolCharger | undefined;
  /** The calling request's log metadata (config/log-headers.ts), copied into each call's tool-log row. */
  metadata?: LogMetadata | null;
}

/** tools/call as received: its params are checked in the handler, so a bad one is -32602 (the SDK says -32603). */
const AnyToolCall = z.object({ method: z.literal('tools/call'), params: z.unknown() });

export const SERVER_INFO = { name: 'model-gateway', version: GATEWAY_VERSION } as const;

function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

function describeTool(t: McpTool) {
  const schema = t.inputSchema;
  // MCP requires an object schema; a server that listed something else still gets an object for its arguments.
  const inputSchema = schema.type === 'object' ? schema : { type: 'object', properties: {} };
  return { name: t.qualifiedName, ...(t.description ? { description: t.description } : {}), inputSchema };
}

/** Finds `qualified` among the listed tools, or says why the caller cannot call it. */
function resolveTool(ctx: ToolServerContext, qualified: string): { tool: McpTool; client: McpClientRecord } {
  const split = splitToolName(qualified);
  const client = split && [...ctx.clients.values()].find((c) => c.name === split.client);
  if (!split || !client) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${qualified}`);
  if (!mayExecute(ctx.caller, client, split.tool)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `tool ${qualified} is not allowed for this virtual key (its mcp_configs for ${client.name} do not list it)`,
    );
  }
  const tool = ctx.connections.tools().find((t) => t.clientId === client.id && t.name === split.tool);
  // A per-user client is listed only once some caller's own session opened; until then the call goes through
  // blind and asks this caller to authorize (the consent link), or the upstream says the tool is unknown.
  if (
    !tool &&
    client.auth_type === 'per_user_oauth' &&
    !ctx.connections.tools().some((t) => t.clientId === client.id)
  ) {
    const unlisted = { clientId: client.id, clientName: client.name, name: split.tool, qualifiedName: qualified };
    return { tool: { ...unlisted, inputSchema: { type: 'object' } }, client };
  }
  if (!tool) {
    const state = ctx.connections.state(client.id);
    const why =
      state.state === 'connected' ? 'the server does not list it' : `MCP client ${client.name} is ${state.state}`;
    throw new McpError(ErrorCode.InvalidParams, `tool ${qualified} is not available: ${why}`);
  }
  return { tool, client };
}

export function createToolServer(ctx: ToolServerContext): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: 'Tools of the MCP servers this virtual key may use, named <client>-<tool>.',
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: allowedTools(ctx.caller, ctx.clients, ctx.connections.tools()).map(describeTool),
  }));
  server.setRequestHandler(AnyToolCall, async (request, extra): Promise<CallToolResult> => {
    const parsed = CallToolRequestSchema.shape.params.safeParse(request.params);
    if (!parsed.success) {
      throw new McpError(ErrorCode.InvalidParams, `invalid tools/call params: ${z.prettifyError(parsed.error)}`);
    }
    const params = parsed.data;
    let resolved: { tool: McpTool; client: McpClientRecord };
    try {
      resolved = resolveTool(ctx, params.name);
    } catch (err) {
      ctx.onBlocked?.(params.name, (err as Error).message);
      throw err;
    }
    const { tool, client } = resolved;
    const now = ctx.now ?? Date.now;
    const start = startToolCall(now(), {
      llmRequestId: null,
      principal: ctx.principal,
      client,
      tool: tool.name,
      args: params.arguments ?? {},
      metadata: ctx.metadata ?? null,
    });
    let hold: ToolHold | undefined;
    const done = (logged: ToolCallOutcome, answer: CallToolResult): CallToolResult => {
      recordToolCall(ctx.toolLog, start, logged, now());
      void hold?.end(logged);
      return answer;
    };
    const binding = resolveBinding(client, ctx.principal, ctx.request);
    if (!binding.ok) {
      const failed = { kind: 'failed', type: 'invalid_request', code: 'no_binding', message: binding.reason } as const;
      return done(failed, errorResult(binding.reason));
    }
    try {
      hold = await ctx.charges?.reserve(start);
    } catch (err) {
      // A budget without room for the price is a tool error (MCP: business-logic failures are results with
      // isError, which the caller's model reads), not a protocol error; the tool server is not called.
      const refused = refusalOutcome(err);
      return done(refused, errorResult(refused.message));
    }
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, extra.signal]) : extra.signal;
    try {
      const result = await ctx.connections.call(client, tool.name, params.arguments ?? {}, {
        binding: binding.binding,
        signal,
      });
      return done({ kind: 'result', result }, result as CallToolResult);
    } catch (err) {
      // An McpAuthError's message says what to do (authorize, or open the consent link): verbatim.
      const auth = authErrorOf(err);
      if (auth) {
        const link = auth.consentUrl && !auth.message.includes(auth.consentUrl) ? ` ${auth.consentUrl}` : '';
        return done(authFailure(auth), errorResult(`${auth.message}${link}`));
      }
      return done(upstreamFailure(describeError(err)), errorResult(describeError(err)));
    }
  });
  return server;
}
