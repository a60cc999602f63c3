// The `mcp` section of config.json: MCP clients applied at every start (like governance), and the outbound
// address allow-list of the SSRF guard (only here: a management call can never widen it).
import { z } from 'zod';
import { nameString } from '../schemas/strings.ts';

export const McpFileConfig = z.strictObject({
  /** MCP clients in the management API's create shape; validated by the MCP client service when applied. */
  client_configs: z.array(z.record(z.string(), z.unknown())).max(1000).default([]),
  /**
   * Private, loopback and link-local destinations the SSRF guard admits for MCP connection strings and OAuth
   * endpoints: CIDR blocks (`10.0.0.0/8`, `127.0.0.1/32`, `::1/128`) or exact host names (`mcp.internal`).
   */
  allowed_private_networks: z.array(nameString(256)).max(256).default([]),
});
export type McpFileConfig = z.infer<typeof McpFileConfig>;
