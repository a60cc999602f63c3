// config.json, validated with zod. Field names follow the reference gateway's layout (snake_case).
// Values written as `env.NAME` are resolved from the environment before validation (see resolve-env.ts).
import { z } from 'zod';
import { allowList } from './allow-list.ts';
import { compatV1Governance, GovernanceFileConfig } from './governance.ts';

export const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,62}$/;

export const NetworkConfigInput = z.strictObject({
  base_url: z.url({ protocol: /^https?$/, error: 'base_url must be an http(s) URL' }).optional(),
  default_request_timeout_in_seconds: z.number().positive().max(3600).optional(),
  max_retries: z.number().int().min(0).max(10).optional(),
  retry_backoff_initial: z.number().int().min(0).max(60_000).optional().describe('milliseconds'),
  retry_backoff_max: z.number().int().min(0).max(300_000).optional().describe('milliseconds'),
  extra_headers: z.record(z.string(), z.string()).optional(),
});
export type NetworkConfigInput = z.infer<typeof NetworkConfigInput>;

export const AzureKeyConfig = z.strictObject({
  endpoint: z.url({ protocol: /^https?$/ }),
  api_version: z.string().min(1).optional(),
  /** Legacy per-provider deployments map; moved into `aliases` on load. */
  deployments: z.record(z.string(), z.string()).optional(),
});
export const BedrockKeyConfig = z.strictObject({
  access_key: z.string().min(1),
  secret_key: z.string().min(1),
  region: z.string().min(1),
  session_token: z.string().min(1).optional(),
  deployments: z.record(z.string(), z.string()).optional(),
});
export const VertexKeyConfig = z.strictObject({
  project_id: z.string().min(1),
  region: z.string().min(1),
  auth_credentials: z.string().min(1).optional(),
  deployments: z.record(z.string(), z.string()).optional(),
});
export const ReplicateKeyConfig = z.strictObject({
  use_deployments_endpoint: z.boolean().default(false),
  deployments: z.record(z.string(), z.string()).optional(),
});

/** A provider key as an API caller or config.json writes it. */
export const KeyInput = z.strictObject({
  id: z.string().min(1).max(128).optional(),
  name: z.string().min(1).max(128).optional(),
  value: z.string().max(8192).default(''),
  models: allowList('models'),
  weight: z.number().min(0).max(1_000_000).default(1),
  aliases: z.record(z.string().min(1), z.string().min(1)).default({}),
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
  max_request_body_size_mb: z.number().positive().max(1024).default(50),
  /** Browser origins allowed by CORS: exact origins (`https://app.example.com`) or `*`. */
  allowed_origins: z.array(z.string().min(1)).default([]),
  /** How long a session stays on the key it was first given (x-gateway-session-id). */
  session_stickiness_ttl_seconds: z
    .number()
    .int()
    .positive()
    .max(86_400 * 7)
    .default(3600),
  log_retention_days: z.number().int().positive().max(3650).default(30),
});
export type ClientConfig = z.infer<typeof ClientConfig>;

const Secret = z.string().min(8, 'must be at least 8 characters');
export const AuthConfig = z.strictObject({
  admin_api_keys: z.array(z.strictObject({ name: z.string().min(1), value: Secret })).default([]),
  inference_tokens: z.array(z.strictObject({ name: z.string().min(1), value: Secret })).default([]),
  basic_users: z.array(z.strictObject({ username: z.string().min(1), password: Secret })).default([]),
});
export type AuthConfig = z.infer<typeof AuthConfig>;

export const ConfigFile = z.preprocess(
  compatV1Governance,
  z.strictObject({
    $schema: z.string().optional(),
    /** `1` restores 1.4.x allow-list semantics for lists loaded from this file (compatibility mode). */
    version: z.union([z.literal(1), z.literal(2)]).default(2),
    client: ClientConfig.default(ClientConfig.parse({})),
    auth: AuthConfig.default(AuthConfig.parse({})),
    providers: z
      .record(
        z.string().regex(PROVIDER_NAME, 'provider names are lower-case letters, digits, - and _'),
        ProviderFileConfig,
      )
      .default({}),
    /** Teams, customers, virtual keys, pricing overrides and routing rules, applied at every start. */
    governance: GovernanceFileConfig.default(GovernanceFileConfig.parse({})),
  }),
);
export type ConfigFile = z.infer<typeof ConfigFile>;
