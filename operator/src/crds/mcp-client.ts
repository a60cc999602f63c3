// MCPClient: an upstream MCP tool server, reconciled into one MCP client row of the gateway. Connection string,
// connection type and auth type are immutable after creation (spec); secrets (static headers, the OAuth client
// secret) come from Secrets, never from the spec, and the status never carries one.
import { z } from 'zod';
import { allowListSet, BaseStatus, LocalObjectRef, SecretKeyRef } from './common.ts';

const immutable = (field: string) => ({
  'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: `${field} is immutable` }],
});

/** The gateway's rule for MCP client names (gateway/src/mcp/policy.ts CLIENT_NAME): they prefix tool names. */
export const MCP_CLIENT_NAME = /^[A-Za-z0-9_]{1,32}$/;

const httpUrl = () =>
  z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s]+$/, 'an http(s) URL');

export const MCPClientSpec = z
  .strictObject({
    clientName: z
      .string()
      .regex(MCP_CLIENT_NAME, 'letters, digits and _ only, at most 32')
      .optional()
      .describe(
        'the client name in the gateway: tools are called <clientName>-<tool> and VirtualKeys name it in ' +
          'mcpConfigs[].mcpClientName; default: the resource name with - and . replaced by _',
      ),
    connectionType: z.enum(['http', 'sse']).meta(immutable('connectionType')),
    connectionString: httpUrl().meta(immutable('connectionString')),
    authType: z
      .enum(['none', 'headers', 'oauth', 'per_user_oauth'])
      .meta(immutable('authType'))
      .describe('none, headers (from headersFrom), oauth (one server-level token) or per_user_oauth'),
    oauth: z
      .strictObject({
        clientId: z.string().min(1).max(512).optional().describe('omit for dynamic client registration'),
        clientSecretRef: SecretKeyRef.optional().describe('omit for a public client (PKCE)'),
        authorizeUrl: httpUrl().optional(),
        tokenUrl: httpUrl().optional(),
        registrationUrl: httpUrl().optional(),
        serverUrl: httpUrl().optional().describe('where discovery starts when the endpoints are omitted'),
        scopes: z.array(z.string().min(1).max(256)).max(64).optional().meta({ 'x-kubernetes-list-type': 'set' }),
        flowMode: z
          .enum(['user', 'vk', 'session'])
          .optional()
          .describe('per_user_oauth only: what a token is bound to (default vk)'),
      })
      .optional(),
    headersFrom: z
      .strictObject({ secretRef: LocalObjectRef })
      .optional()
      .describe('every key of the Secret becomes a header sent to the server'),
    toolsToExecute: allowListSet()
      .optional()
      .describe('the client ceiling: tools any caller may execute; default ["*"], empty denies all'),
    toolsToAutoExecute: allowListSet()
      .optional()
      .describe('the client ceiling for auto-execution; default ["*"], empty denies all'),
    toolPricing: z
      .record(z.string().min(1).max(256), z.number().min(0).max(1_000_000))
      .optional()
      .meta({ maxProperties: 1000 })
      .describe('tool name -> USD per execution'),
    isPingAvailable: z
      .boolean()
      .optional()
      .describe('health checks use ping (default true); false lists tools instead'),
    disabled: z.boolean().optional().describe('a disabled client is not connected and its tools are not offered'),
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: "self.authType != 'headers' || has(self.headersFrom)", message: 'authType headers needs headersFrom' },
      {
        rule: "self.authType == 'headers' || !has(self.headersFrom)",
        message: 'headersFrom is only for authType headers',
      },
      {
        rule: "self.authType in ['oauth', 'per_user_oauth'] || !has(self.oauth)",
        message: 'oauth is only for authType oauth or per_user_oauth',
      },
      {
        rule: "self.authType == 'per_user_oauth' || !has(self.oauth) || !has(self.oauth.flowMode)",
        message: 'oauth.flowMode is only for authType per_user_oauth',
      },
    ],
  });
export type MCPClientSpec = z.infer<typeof MCPClientSpec>;

export const MCPClientStatus = z.object({
  ...BaseStatus,
  clientId: z.string().optional().describe('id of the synced MCP client row (the API client_id)'),
  clientName: z.string().optional().describe('the client name in the gateway (tool prefix)'),
  connectionState: z
    .enum(['connected', 'disconnected', 'error'])
    .optional()
    .describe('as last reported by a gateway pod'),
  oauthStatus: z.enum(['pending', 'authorized', 'failed', 'revoked']).optional().describe('OAuth clients only'),
  authorizeUrl: z
    .string()
    .optional()
    .describe('while oauthStatus is pending: the URL an admin opens to authorize (carries no secret)'),
});
