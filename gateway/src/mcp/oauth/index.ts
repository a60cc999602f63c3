// Placeholder until server-level OAuth lands.
import type { McpDeps } from '../index.ts';
import type { McpOAuth } from './types.ts';

export function createOAuth(_deps: McpDeps): McpOAuth {
  const missing = () => Promise.reject(new Error('MCP OAuth is not available yet'));
  return {
    headersFor: async (client) => client.headers,
    createConfig: missing,
    updateConfig: missing,
    startAuthorization: missing,
    state: async () => undefined,
    close: async () => undefined,
  };
}
