// What /api/mcp/* answers, as schemas for the API document (reference MCPClient, MCPClientConfig,
// OAuthFlowInitiation). The inputs are the MCP client service's own schemas (state/services/mcp/validate.ts).
import { z } from 'zod';

const Timestamp = z.string().describe('ISO 8601 timestamp');

export const McpClientConfigView = z
  .strictObject({
    client_id: z.string(),
    name: z.string().describe('prefix of the client\u2019s tool names: <name>-<tool>'),
    connection_type: z.enum(['http', 'sse']),
    connection_string: z.string(),
    auth_type: z.enum(['none', 'headers', 'oauth', 'per_user_oauth']),
    oauth_config_id: z.string().optional(),
    headers: z
      .record(z.string(), z.literal('[redacted]'))
      .optional()
      .describe('header names; values are never shown (send "[redacted]" back to keep one)'),
    tools_to_execute: z.array(z.string()),
    tools_to_auto_execute: z.array(z.string()),
    tool_pricing: z.record(z.string(), z.number()),
    is_ping_available: z.boolean(),
    disabled: z.boolean(),
    allow_on_all_virtual_keys: z.literal(false),
    source: z.string().describe('api, config or kubernetes'),
    owner_ref: z.string().optional().describe('the Kubernetes resource that owns this client'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'MCPClientConfig' });

export const McpToolView = z
  .strictObject({
    name: z.string().describe('the tool\u2019s name on its server'),
    qualified_name: z.string().describe('<client name>-<tool name>: the name callers and models see'),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).describe('JSON Schema of the arguments'),
  })
  .meta({ id: 'MCPTool' });

export const McpClientOAuthView = z.strictObject({
  status: z.string().describe('pending, authorized, failed or revoked'),
  message: z.string().optional(),
  authorize_url: z.string().optional().describe('while pending: where an admin authorizes'),
});

export const McpClientEntry = z
  .strictObject({
    config: McpClientConfigView,
    tools: z.array(McpToolView).describe('as this gateway pod last listed them'),
    state: z.enum(['connected', 'disconnected', 'error']).describe('as this gateway pod sees the connection'),
    state_message: z.string().optional(),
    vk_configs: z.array(
      z.strictObject({
        virtual_key_id: z.string(),
        virtual_key_name: z.string(),
        tools_to_execute: z.array(z.string()),
        tools_to_auto_execute: z.array(z.string()),
      }),
    ),
    oauth: McpClientOAuthView.optional(),
  })
  .meta({ id: 'MCPClient' });

export const McpClientList = z.array(McpClientEntry);
export const McpToolList = z.array(McpToolView);

export const McpSuccess = z.strictObject({ status: z.literal('success'), message: z.string() });
export const McpClientCreated = z.strictObject({
  status: z.literal('success'),
  message: z.string(),
  client: McpClientConfigView,
});

export const OAuthFlowInitiation = z
  .strictObject({
    status: z.literal('pending_oauth'),
    message: z.string(),
    oauth_config_id: z.string(),
    authorize_url: z.string(),
    expires_at: Timestamp,
    mcp_client_id: z.string(),
  })
  .describe('An OAuth flow started: open authorize_url to authorize (reference OAuthFlowInitiation)');
