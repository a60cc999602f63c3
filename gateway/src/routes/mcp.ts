// /mcp: the gateway as an MCP server (streamable HTTP, stateless: a server per request). Only a virtual key may
// use it: its mcp_configs decide which upstream tools it lists and calls. Credentials are refused in the
// gateway envelope (401/403, before the body is read); everything about the body speaks JSON-RPC. The MCP SDK is
// imported by the first /mcp request, not at start (issue 19).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { logMetadata } from '../config/log-headers.ts';
import { replyWithError } from '../http/error-reply.ts';
import { GatewayError } from '../http/errors.ts';
import { documented } from '../http/openapi.ts';
import { registerFamily } from '../http/route-family.ts';
import { toolCharger } from '../mcp/tool-charge.ts';
import type { Runtime } from '../runtime.ts';
import { lazyModule } from '../util/lazy-module.ts';

/** The tool server and the SDK's server transport (our module imports the SDK's server side). */
const serverParts = lazyModule(async () => {
  const [tools, http] = await Promise.all([
    import('../mcp/server/index.ts'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
  ]);
  return {
    createToolServer: tools.createToolServer,
    StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
  };
});

const doc = documented('MCP');

const NEEDS_VK = '/mcp needs a virtual key in x-gateway-vk or Authorization: Bearer';

const JsonRpcRequest = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ description: 'A JSON-RPC 2.0 message of MCP (initialize, tools/list, tools/call, notifications).' });
const JsonRpcAnswer = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number(), z.null()]),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
  })
  .meta({ description: 'The JSON-RPC answer (a result, or an error with its code).' });

function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string): void {
  reply
    .code(status)
    .header('content-type', 'application/json')
    .send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The body's errors (fastify's parser) as JSON-RPC errors; anything else (credentials) as the envelope. */
function errorHandler(rt: Runtime) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const code = error.code ?? '';
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return jsonRpcError(reply, 413, -32600, 'request body too large');
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return jsonRpcError(reply, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return jsonRpcError(reply, 400, -32700, 'Parse error: empty body');
    if (error instanceof SyntaxError || code.startsWith('FST_ERR_CTP')) {
      return jsonRpcError(reply, 400, -32700, `Parse error: ${error.message}`);
    }
    replyWithError(rt, request, reply, error, undefined);
  };
}

export function registerMcpServerFamily(app: FastifyInstance, rt: Runtime): void {
  registerFamily(app, rt, { scheme: 'inference', prefix: '/mcp' }, (f) => {
    f.setErrorHandler(errorHandler(rt));
    // After the family's authenticator: only a virtual key passes, refused before the body is read.
    f.addHook('onRequest', (request, reply, done) => {
      const p = request.principal;
      if (p?.kind === 'virtual_key') return done();
      reply.header('connection', 'close');
      done(
        !p || p.kind === 'anonymous'
          ? new GatewayError('authentication_failed', `missing credentials: ${NEEDS_VK}`)
          : new GatewayError('permission_denied', `${NEEDS_VK}; a ${p.kind} credential has no MCP tools`),
      );
    });

    f.post(
      '',
      doc({
        operationId: 'mcpServer',
        summary: 'MCP server (streamable HTTP)',
        description:
          "The gateway as an MCP server: tools/list answers the tools of the upstream MCP clients the virtual key's " +
          'mcp_configs allow, named `<client>-<tool>`; tools/call proxies to the upstream server. Stateless (no ' +
          '`mcp-session-id`). Send `Accept: application/json, text/event-stream`. Only a virtual key is accepted.',
        body: JsonRpcRequest,
        responses: {
          200: { description: 'The JSON-RPC answer', json: JsonRpcAnswer },
          202: { description: 'A notification or response was accepted' },
        },
        errors: [403, 406, 413, 415],
      }),
      async (request, reply) => {
        const principal = request.principal;
        if (principal?.kind !== 'virtual_key') throw new GatewayError('permission_denied', NEEDS_VK);
        const { createToolServer, StreamableHTTPServerTransport } = serverParts.loaded() ?? (await serverParts.get());
        const gone = new AbortController();
        const server = createToolServer({
          caller: { kind: 'virtual_key', vk: principal.vk },
          principal,
          request: { headers: request.headers, protocol: request.protocol },
          clients: rt.state.snapshot.mcpClients,
          connections: rt.mcp.connections,
          signal: gone.signal,
          toolLog: rt.mcpToolLog,
          now: rt.now,
          charges: toolCharger(rt),
          metadata: logMetadata(request.headers, rt.state.snapshot.client.logging_headers),
          onBlocked: (tool, reason) =>
            rt.logger.info(
              { request_id: request.id, virtual_key: principal.vk.id, tool: tool.slice(0, 200), reason },
              '/mcp tool call blocked',
            ),
        });
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        // Headers set so far (CORS from the app's hooks) would be lost with the hijack: carry them over.
        for (const [name, value] of Object.entries(reply.getHeaders())) {
          if (value !== undefined) reply.raw.setHeader(name, value);
        }
        reply.hijack();
        reply.raw.setHeader('x-gateway-request-id', request.id);
        reply.raw.on('close', () => {
          // The caller went away before its answer: its tool calls are aborted upstream.
          if (!reply.raw.writableFinished) gone.abort(new Error('the caller closed the connection'));
          void transport.close();
          void server.close();
        });
        try {
          await server.connect(transport);
          await transport.handleRequest(request.raw, reply.raw, request.body);
        } catch (err) {
          rt.logger.error({ request_id: request.id, err: (err as Error).message }, '/mcp request failed');
          if (!reply.raw.headersSent) {
            reply.raw.writeHead(500, { 'content-type': 'application/json' });
            reply.raw.end(
              JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }),
            );
          }
        }
      },
    );

    // Stateless: no event stream to resume (GET) and no session to end (DELETE).
    const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
      reply.header('allow', 'POST');
      jsonRpcError(reply, 405, -32000, 'Method not allowed: /mcp is stateless; send JSON-RPC messages with POST');
      return reply;
    };
    for (const method of ['GET', 'DELETE'] as const) {
      f.route({
        method,
        url: '',
        ...doc({
          operationId: method === 'GET' ? 'mcpServerStream' : 'mcpServerEndSession',
          summary: method === 'GET' ? 'MCP event stream (not offered)' : 'End an MCP session (not offered)',
          description: '/mcp is stateless: 405 with `allow: POST`.',
          responses: { 405: { description: 'Method not allowed', json: JsonRpcAnswer } },
        }),
        handler: notAllowed,
      });
    }
  });
}
