// The OAuth libraries, imported by the first discovery, registration, authorization or refresh, never at start: a
// gateway without MCP OAuth does not carry openid-client (with oauth4webapi and jose) or the MCP SDK (issue 19).
import { lazyModule } from '../../util/lazy-module.ts';

export const openidClient = lazyModule(() => import('openid-client'));

/** The MCP SDK's RFC 9728 helpers (protected-resource metadata, `WWW-Authenticate` parsing). */
export const mcpAuth = lazyModule(() => import('@modelcontextprotocol/sdk/client/auth.js'));
