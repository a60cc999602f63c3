// config.json, validated with zod. Field names follow the reference gateway's layout (snake_case).
// Values written as `env.NAME` are resolved from the environment before validation (see resolve-env.ts).
import { z } from 'zod';
import {
  boundedRecord,
  headerNameString,
  headerValueString,
  httpUrlString,
  idString,
  nameMap,
  nameString,
  textString,
} from '../schemas/strings.ts';
import { allowList } from './allow-list.ts';
import { compatV1Governance, GovernanceFileConfig } from './governance.ts';
import { LogHeaderFields } from './log-headers.ts';
import { McpFileConfig } from './mcp.ts';
import { ClientPluginFields, clientPluginConflicts, PluginsFileConfig, pluginsFromClient } from './plugins.ts';
import { GOVERNANCE_HEADER, GOVERNANCE_HEADER_WARNING, ReferenceClientFields } from './reference-client.ts';
import { removedSettings14 } from './removed-14.ts';

export const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,62}$/;
/** Regions, projects and API versions become part of an upstream host name, path or query. */
const URL_SAFE = /^[A-Za-z0-9._:-]+$/;
const URL_SAFE_RULE = 'letters, digits, ., _, : and - only (it becomes part of the upstream URL)';
const Region = nameString(64).regex(/^[a-z0-9-]+$/, 'regions are lower-case letters, digits and -');

export const NetworkConfigInput = z.strictObject({
  base_url: httpUrlString().optional(),
  default_request_timeout_in_seconds: z.number().positive().max(3600).optional(),
  max_retries: z.number().int().min(0).max(10).optional(),
  retry_backoff_initial: z.number().int().min(0).max(60_000).optional().describe('milliseconds'),
  retry_backoff_max: z.number().int().min(0).max(300_000).optional().describe('milliseconds'),
  extra_headers: boundedRecord(headerNameString(), headerValueString(), 100).optional(),
  /** Bound on an upstream answer read whole and on one stream event; larger answers fail with 502. Default 32. */
  max_response_size_mb: z.number().positive().max(1024).optional(),
});
export type NetworkConfigInput = z.infer<typeof NetworkConfigInput>;

export const AzureKeyConfig = z.strictObject({
  endpoint: httpUrlString(),
  api_version: nameString(64).regex(URL_SAFE, URL_SAFE_RULE).optional(),
  /** Legacy per-provider deployments map; moved into `aliases` on load. */
  deployments: nameMap().optional(),
});
/** Without access_key and secret_key the gateway's own AWS credentials are used (the AWS default chain: IRSA, ...). */
export const BedrockKeyConfig = z
  .strictObject({
    access_key: headerValueString(1024, 1).optional(),
    secret_key: headerValueString(1024, 1).optional(),
    region: Region,
    session_token: headerValueString(8192, 1).optional(),
    deployments: nameMap().optional(),
  })
  .superRefine((c, ctx) => {
    if (!c.access_key !== !c.secret_key) {
      const missing = c.access_key ? 'secret_key' : 'access_key';
      ctx.addIssue({
        code: 'custom',
        path: [missing],
        message: 'access_key and secret_key go together: set both, or neither to use the AWS default credential chain',
      });
    }
    if (c.session_token && !c.access_key) {
      ctx.addIssue({
        code: 'custom',
        path: ['session_token'],
        message: 'session_token needs access_key and secret_key',
      });
    }
  });
export const VertexKeyConfig = z.strictObject({
  project_id: nameString(128).regex(URL_SAFE, URL_SAFE_RULE),
  region: Region,
  /** Service-account JSON: multi-line text. */
  auth_credentials: textString(65_536, 1).optional(),
  deployments: nameMap().optional(),
});
export const ReplicateKeyConfig = z.strictObject({
  use_deployments_endpoint: z.boolean().default(false),
  deployments: nameMap().optional(),
});

/** A provider key as an API caller or config.json writes it. */
export const KeyInput = z.strictObject({
  id: idString().optional(),
  name: nameString().optional(),
  /** Sent upstream as a header value (Authorization, x-api-key, ...). */
  value: headerValueString().default(''),
  models: allowList('models'),
  weight: z.number().min(0).max(1_000_000).default(1),
  aliases: nameMap().default({}),
  azure_key_config: AzureKeyConfig.optional(),
  bedrock_key_config: BedrockKeyConfig.optional(),
  vertex_key_config: VertexKeyConfig.optional(),
  replicate_key_config: ReplicateKeyConfig.optional(),
});
export type KeyInput = z.infer<typeof KeyInput>;

export const ProviderFileConfig = z.strictObject({
  keys: z.array(KeyInput).default([]),
  network_config: NetworkConfigInput.optional(),
});

export const ClientConfig = z.strictObject({
  enforce_auth_on_inference: z.boolean().default(true),
  // At least 1 MB: a tiny limit would refuse every body, the PUT /api/config that could raise it again too.
  max_request_body_size_mb: z.number().min(1).max(1024).default(50),
  /** Largest file a `/v1/files` upload streams through to a provider (OpenAI's own limit by default). */
  max_file_upload_size_mb: z.number().min(1).max(4096).default(512),
  /** Browser origins allowed by CORS: exact origins (`https://app.example.com`) or `*`. */
  allowed_origins: z.array(nameString(1024)).max(1000).default([]),
  /** How long a session stays on the key it was first given (x-gateway-session-id). */
  session_stickiness_ttl_seconds: z
    .number()
    .int()
    .positive()
    .max(86_400 * 7)
    .default(3600),
  log_retention_days: z.number().int().positive().max(3650).default(30),
  /**
   * Public base URL of the gateway for MCP OAuth (`redirect_uri` and consent URLs); by default they derive from
   * the request's Host header. A change clears stored OAuth client registrations so registration runs again.
   */
  mcp_external_client_url: httpUrlString().optional(),
  ...LogHeaderFields,
  ...ReferenceClientFields,
});
export type ClientConfig = z.infer<typeof ClientConfig>;

/** Compared with what callers send in headers, so header-safe. */
const Secret = headerValueString(1024).min(8, 'must be at least 8 characters');
export const AuthConfig = z.strictObject({
  admin_api_keys: z.array(z.strictObject({ name: nameString(), value: Secret })).default([]),
  inference_tokens: z.array(z.strictObject({ name: nameString(), value: Secret })).default([]),
  basic_users: z
    .array(
      z.strictObject({
        username: nameString().regex(/^[^:]*$/, 'must not contain ":"'),
        password: nameString(1024).min(8, 'must be at least 8 characters'),
      }),
    )
    .default([]),
});
export type AuthConfig = z.infer<typeof AuthConfig>;

/** config.json `client`: the stored client settings, plus reference-layout fields that configure plugins. */
const ClientFileConfig = ClientConfig.extend(ClientPluginFields).extend({
  /** Deprecated alias of enforce_auth_on_inference (folded in by the preprocess below). */
  [GOVERNANCE_HEADER]: z.boolean().optional(),
});

export const ConfigFile = z.preprocess(
  (raw, ctx) => {
    // Removed 1.4.x settings are named with their 1.5.0 replacement (removed-14.ts).
    for (const r of removedSettings14(raw)) ctx.addIssue({ code: 'custom', path: r.path, message: r.message });
    return compatV1Governance(withGovernanceHeaderFolded(raw));
  },
  z
    .strictObject({
      $schema: z.string().optional(),
      /** `1` restores 1.4.x allow-list semantics for lists loaded from this file (compatibility mode). */
      version: z.union([z.literal(1), z.literal(2)]).default(2),
      client: ClientFileConfig.default(ClientFileConfig.parse({})),
      auth: AuthConfig.default(AuthConfig.parse({})),
      providers: z
        .record(
          z.string().regex(PROVIDER_NAME, 'provider names are lower-case letters, digits, - and _'),
          ProviderFileConfig,
        )
        .default({}),
      /** Teams, customers, virtual keys, pricing overrides and routing rules, applied at every start. */
      governance: GovernanceFileConfig.default(GovernanceFileConfig.parse({})),
      /** MCP clients applied at every start, and the SSRF guard's allow-list. */
      mcp: McpFileConfig.default(McpFileConfig.parse({})),
      /** Plugin settings applied at every start (like /api/plugins); unlisted plugins run with their defaults. */
      plugins: PluginsFileConfig,
    })
    .superRefine((c, ctx) => {
      for (const field of clientPluginConflicts(c.client, c.plugins)) {
        ctx.addIssue({
          code: 'custom',
          path: ['client', field],
          message: 'this plugin is also configured in plugins[]: configure it in one place',
        });
      }
    })
    .transform(({ client, plugins, ...rest }) => {
      const { enable_logging, disable_content_logging, compat, [GOVERNANCE_HEADER]: deprecated, ...stored } = client;
      return {
        ...rest,
        client: stored,
        /** Deprecated settings the file used, for the start-up log. */
        ...(deprecated === undefined ? {} : { warnings: [`config.json ${GOVERNANCE_HEADER_WARNING}`] }),
        plugins: [...plugins, ...pluginsFromClient({ enable_logging, disable_content_logging, compat })],
      };
    }),
);
export type ConfigFile = z.infer<typeof ConfigFile>;

/** config.json `client.enforce_governance_header` alone sets enforce_auth_on_inference (reference-client.ts). */
function withGovernanceHeaderFolded(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || !('client' in raw)) return raw;
  const client = raw.client;
  if (typeof client !== 'object' || client === null || !(GOVERNANCE_HEADER in client)) return raw;
  if ('enforce_auth_on_inference' in client) return raw;
  const value = client[GOVERNANCE_HEADER];
  return { ...raw, client: { ...client, enforce_auth_on_inference: value } };
}
