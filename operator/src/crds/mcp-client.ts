// MCPClient: an upstream MCP tool server. Connection and auth type are immutable after creation (spec).
import { z } from 'zod';
import { allowListSet, BaseStatus, LocalObjectRef, SecretKeyRef } from './common.ts';

const immutable = (field: string) => ({
  'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: `${field} is immutable` }],
});

export const MCPClientSpec = z
  .strictObject({
    connectionType: z.enum(['http', 'sse']).meta(immutable('connectionType')),
    connectionString: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s]+$/, 'an http(s) URL')
      .meta(immutable('connectionString')),
    authType: z.enum(['oauth', 'per_user_oauth', 'headers']).meta(immutable('authType')),
    oauth: z
      .strictObject({
        clientId: z.string().min(1).max(512).optional().describe('omit for dynamic client registration'),
        clientSecretRef: SecretKeyRef.optional().describe('omit for a public client (PKCE)'),
        authorizeUrl: z
          .string()
          .max(2048)
          .regex(/^https?:\/\//)
          .optional(),
        tokenUrl: z
          .string()
          .max(2048)
          .regex(/^https?:\/\//)
          .optional(),
        registrationUrl: z
          .string()
          .max(2048)
          .regex(/^https?:\/\//)
          .optional(),
        serverUrl: z
          .string()
          .max(2048)
          .regex(/^https?:\/\//)
          .optional(),
        scopes: z.array(z.string().min(1).max(256)).max(64).optional().meta({ 'x-kubernetes-list-type': 'set' }),
      })
      .optional(),
    headersFrom: z
      .strictObject({ secretRef: LocalObjectRef })
      .optional()
      .describe('every key of the Secret becomes a header sent to the server'),
    toolsToExecute: allowListSet().optional(),
    toolsToAutoExecute: allowListSet().optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: "self.authType != 'headers' || has(self.headersFrom)", message: 'authType headers needs headersFrom' },
      {
        rule: "self.authType == 'headers' || !has(self.headersFrom)",
        message: 'headersFrom is only for authType headers',
      },
    ],
  });
export type MCPClientSpec = z.infer<typeof MCPClientSpec>;

export const MCPClientStatus = z.object({ ...BaseStatus });
