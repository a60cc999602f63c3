// The MCP SDK's client side, imported when the first upstream session opens (a configured MCP client), never at
// start: a gateway without MCP clients does not carry it (issue 19, ~8 MB of heap with its zod v3).
import type * as ClientIndex from '@modelcontextprotocol/sdk/client/index.js';
import type * as Sse from '@modelcontextprotocol/sdk/client/sse.js';
import type * as StreamableHttp from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as Types from '@modelcontextprotocol/sdk/types.js';
import { lazyModule } from '../../util/lazy-module.ts';

export interface ClientSdk {
  Client: typeof ClientIndex.Client;
  SSEClientTransport: typeof Sse.SSEClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHttp.StreamableHTTPClientTransport;
  CallToolResultSchema: typeof Types.CallToolResultSchema;
  ToolListChangedNotificationSchema: typeof Types.ToolListChangedNotificationSchema;
  McpError: typeof Types.McpError;
  ErrorCode: typeof Types.ErrorCode;
}

export const clientSdk = lazyModule(async (): Promise<ClientSdk> => {
  const [client, sse, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    SSEClientTransport: sse.SSEClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    CallToolResultSchema: types.CallToolResultSchema,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
  };
});

/** An error the server itself answered (its session is alive), as opposed to a transport failure or a timeout. */
export function answeredByServer(err: unknown): boolean {
  const sdk = clientSdk.loaded();
  // Without the SDK no session was ever opened, so no error can be a server's answer.
  if (!sdk) return false;
  return (
    err instanceof sdk.McpError &&
    err.code !== sdk.ErrorCode.RequestTimeout &&
    err.code !== sdk.ErrorCode.ConnectionClosed
  );
}
