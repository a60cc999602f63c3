// Validation of MCP client payloads (pure): the management API's create and update bodies (reference
// MCPClientCreateRequest / MCPClientUpdateRequest, snake_case) -> a checked input, or a message naming the field.
// Rules that need the stored row (immutable fields, header placeholders) are in `merge.ts`.
import { z } from 'zod';
import { allowListIssue, WILDCARD } from '../../../config/allow-list.ts';
import { CLIENT_NAME, CLIENT_NAME_RULE } from '../../../mcp/policy.ts';
import {
  boundedRecord,
  headerNameString,
  headerValueString,
  httpUrlString,
  idString,
  nameString,
} from '../../../schemas/strings.ts';

/** What answers show instead of a static header's value; sent back in a PUT, it keeps the stored value. */
export const REDACTED = '[redacted]';
export const MAX_HEADERS = 64;
/** The most a tool execution may be priced at, in USD. */
export const MAX_TOOL_PRICE = 1_000_000;

export const CONNECTION_TYPES = ['http', 'sse'] as const;
export const AUTH_TYPES = ['none', 'headers', 'oauth', 'per_user_oauth'] as const;
export const OAUTH_AUTH_TYPES: readonly string[] = ['oauth', 'per_user_oauth'];

/**
 * Headers the MCP transport sets itself (or that would change how the request is framed or routed): a static
 * header may not replace them.
 */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);

const ConnectionType = z
  .string()
  .describe('http (streamable HTTP) or sse; stdio and inprocess are refused')
  .superRefine((t, ctx) => {
    if (t === 'stdio') {
      ctx.addIssue({
        code: 'custom',
        message: 'stdio is not supported: the gateway does not spawn processes; run the server over http or sse',
      });
    } else if (t === 'inprocess') {
      ctx.addIssue({ code: 'custom', message: 'inprocess is not supported: the gateway has no in-process servers' });
    } else if (!(CONNECTION_TYPES as readonly string[]).includes(t)) {
      ctx.addIssue({ code: 'custom', message: `expected one of ${CONNECTION_TYPES.join(', ')}` });
    }
  }) as unknown as z.ZodType<(typeof CONNECTION_TYPES)[number]>; // the refinement admits exactly these values

const AuthType = z.enum(AUTH_TYPES);

/** A client's own allow-list (its ceiling): the spec's rules, and all tools when omitted on create. */
function ceiling(name: string) {
  return z
    .array(nameString(256))
    .max(1000)
    .superRefine((values, ctx) => {
      const issue = allowListIssue(values);
      if (issue) ctx.addIssue({ code: 'custom', message: `${name}: ${issue}` });
    });
}

export const StaticHeaders = boundedRecord(headerNameString(256), headerValueString(8192, 1), MAX_HEADERS).superRefine(
  (headers, ctx) => {
    const seen = new Set<string>();
    for (const name of Object.keys(headers)) {
      const lower = name.toLowerCase();
      if (RESERVED_HEADERS.has(lower)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `${lower} is set by the MCP transport itself` });
      }
      if (seen.has(lower)) ctx.addIssue({ code: 'custom', path: [name], message: 'the same header twice' });
      seen.add(lower);
    }
  },
);

/** Reference OAuthConfigRequest, plus `flow_mode` for per-user OAuth; `scopes` also as a comma-separated string. */
export const OAuthConfigInput = z.strictObject({
  client_id: nameString(512).optional(),
  client_secret: headerValueString(4096, 1).optional(),
  authorize_url: httpUrlString().optional(),
  token_url: httpUrlString().optional(),
  registration_url: httpUrlString().optional(),
  server_url: httpUrlString().optional(),
  scopes: z
    .preprocess(
      (s) =>
        typeof s === 'string'
          ? s
              .split(',')
              .map((x) => x.trim())
              .filter((x) => x !== '')
          : s,
      z.array(nameString(256)).max(100),
    )
    .optional(),
  flow_mode: z.enum(['user', 'vk', 'session']).optional(),
});
export type OAuthConfigInput = z.infer<typeof OAuthConfigInput>;

const AllowOnAll = z
  .boolean()
  .refine(
    (v) => !v,
    'true is not supported: since 1.5 a virtual key gets an MCP client\u2019s tools only through its own ' +
      'mcp_configs entry for the client (deny by default); add the client to the keys that need it',
  );

/** Fields a GET view carries that a PUT may send back unchanged (ignored; `client_id` must match the path). */
const ReadOnly = {
  oauth_config_id: z.string().nullish(),
  source: z.string().optional(),
  owner_ref: z.string().nullish(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
};

/**
 * Reference MCPVKConfig (PUT only): which virtual keys may use this client, replacing every key's entry for it.
 * `tools_to_auto_execute` is optional: omitted, a key keeps the auto-executed tools it had that stay executable.
 */
export const VkConfigInput = z
  .strictObject({
    virtual_key_id: idString(),
    tools_to_execute: ceiling('tools_to_execute'),
    tools_to_auto_execute: ceiling('tools_to_auto_execute').optional(),
  })
  .superRefine((v, ctx) => {
    if (v.tools_to_execute[0] === WILDCARD || v.tools_to_auto_execute === undefined) return;
    for (const [i, tool] of v.tools_to_auto_execute.entries()) {
      if (!v.tools_to_execute.includes(tool)) {
        ctx.addIssue({
          code: 'custom',
          path: ['tools_to_auto_execute', i],
          message: `"${tool}" is not in tools_to_execute`,
        });
      }
    }
  });
export type VkConfigInput = z.infer<typeof VkConfigInput>;

const VkConfigs = z
  .array(VkConfigInput)
  .max(1000)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    for (const [i, v] of list.entries()) {
      if (seen.has(v.virtual_key_id)) {
        ctx.addIssue({ code: 'custom', path: [i, 'virtual_key_id'], message: 'the same virtual key twice' });
      }
      seen.add(v.virtual_key_id);
    }
  });

const Unsupported = {
  stdio_config: z.unknown().refine(() => false, 'stdio is not supported: the gateway does not spawn processes'),
  vk_configs: z
    .unknown()
    .refine(() => false, 'only when editing a client (PUT): create the client first, then grant it to virtual keys'),
  is_code_mode_client: z
    .boolean()
    .refine((v) => !v, 'code mode is not supported')
    .optional(),
};

const Fields = {
  client_id: idString().optional(),
  name: z.string().regex(CLIENT_NAME, CLIENT_NAME_RULE),
  connection_type: ConnectionType,
  connection_string: httpUrlString(),
  auth_type: AuthType,
  headers: StaticHeaders,
  oauth_config: OAuthConfigInput,
  tools_to_execute: ceiling('tools_to_execute'),
  tools_to_auto_execute: ceiling('tools_to_auto_execute'),
  tool_pricing: boundedRecord(nameString(256), z.number().min(0).max(MAX_TOOL_PRICE), 1000),
  is_ping_available: z.boolean(),
  disabled: z.boolean(),
  allow_on_all_virtual_keys: AllowOnAll,
};

export const McpClientCreateInput = z
  .strictObject({
    client_id: Fields.client_id,
    name: Fields.name,
    connection_type: Fields.connection_type,
    connection_string: Fields.connection_string,
    auth_type: Fields.auth_type.default('none'),
    headers: Fields.headers.optional(),
    oauth_config: Fields.oauth_config.optional(),
    tools_to_execute: Fields.tools_to_execute.default([WILDCARD]),
    tools_to_auto_execute: Fields.tools_to_auto_execute.default([WILDCARD]),
    tool_pricing: Fields.tool_pricing.default({}),
    is_ping_available: Fields.is_ping_available.default(true),
    disabled: Fields.disabled.default(false),
    allow_on_all_virtual_keys: Fields.allow_on_all_virtual_keys.optional(),
    ...Unsupported,
    stdio_config: Unsupported.stdio_config.optional(),
    vk_configs: Unsupported.vk_configs.optional(),
  })
  .superRefine((c, ctx) => {
    for (const issue of crossFieldIssues(c)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
export type McpClientCreateInput = z.infer<typeof McpClientCreateInput>;

export const McpClientUpdateInput = z.strictObject({
  client_id: z.string().optional(),
  name: Fields.name.optional(),
  connection_type: Fields.connection_type.optional(),
  connection_string: Fields.connection_string.optional(),
  auth_type: Fields.auth_type.optional(),
  headers: Fields.headers.optional(),
  oauth_config: Fields.oauth_config.optional(),
  tools_to_execute: Fields.tools_to_execute.optional(),
  tools_to_auto_execute: Fields.tools_to_auto_execute.optional(),
  tool_pricing: Fields.tool_pricing.optional(),
  is_ping_available: Fields.is_ping_available.optional(),
  disabled: Fields.disabled.optional(),
  allow_on_all_virtual_keys: Fields.allow_on_all_virtual_keys.optional(),
  /** Replaces every virtual key's grant of this client (reference MCPVKConfig); omitted, grants stay. */
  vk_configs: VkConfigs.optional(),
  ...ReadOnly,
  stdio_config: Unsupported.stdio_config.optional(),
  is_code_mode_client: Unsupported.is_code_mode_client,
});
export type McpClientUpdateInput = z.infer<typeof McpClientUpdateInput>;

/** The settings a client ends up with (after defaults on create, or the stored row merged with an update). */
export interface McpClientSettings {
  auth_type: (typeof AUTH_TYPES)[number];
  headers?: Record<string, string> | undefined;
  oauth_config?: OAuthConfigInput | undefined;
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
}

/**
 * Rules across fields: headers for (and only for) `headers`, OAuth settings only for the OAuth types, `flow_mode`
 * only per-user, and auto-executed tools within the executable ones.
 */
export function crossFieldIssues(c: McpClientSettings): { path: string[]; message: string }[] {
  const out: { path: string[]; message: string }[] = [];
  const headerCount = c.headers ? Object.keys(c.headers).length : 0;
  if (c.auth_type === 'headers' && headerCount === 0) {
    out.push({ path: ['headers'], message: 'required (at least one header) when auth_type is headers' });
  }
  if (c.auth_type !== 'headers' && headerCount > 0) {
    out.push({ path: ['headers'], message: `only for auth_type headers (this client's auth_type is ${c.auth_type})` });
  }
  if (c.oauth_config !== undefined && !OAUTH_AUTH_TYPES.includes(c.auth_type)) {
    out.push({
      path: ['oauth_config'],
      message: `only for auth_type oauth or per_user_oauth (this client's auth_type is ${c.auth_type})`,
    });
  }
  if (c.oauth_config?.flow_mode !== undefined && c.auth_type !== 'per_user_oauth') {
    out.push({ path: ['oauth_config', 'flow_mode'], message: 'only for auth_type per_user_oauth' });
  }
  if (c.tools_to_execute[0] !== WILDCARD) {
    for (const tool of c.tools_to_auto_execute) {
      // `*` here means every executable tool.
      if (tool !== WILDCARD && !c.tools_to_execute.includes(tool)) {
        out.push({
          path: ['tools_to_auto_execute'],
          message: `"${tool}" is not in tools_to_execute (auto-executed tools must be executable)`,
        });
        break;
      }
    }
  }
  return out;
}
