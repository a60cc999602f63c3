// Pure conversions for provider keys: API/config input -> stored row parts, stored row -> runtime key,
// and the redacted view every API response uses. Secret material lives only in the sealed `secret` column.
import { z } from 'zod';
import type { KeyInput } from '../../config/schema.ts';
import type { ProviderKey } from '../../providers/types.ts';

export const KeySecrets = z.object({
  value: z.string(),
  bedrock: z
    .object({ access_key: z.string(), secret_key: z.string(), session_token: z.string().optional() })
    .optional(),
  vertex_auth_credentials: z.string().optional(),
});
export type KeySecrets = z.infer<typeof KeySecrets>;

/** Non-secret columns of provider_keys. */
export interface KeyColumns {
  models: string[];
  weight: number;
  aliases: Record<string, string>;
  azure_key_config: { endpoint: string; api_version?: string } | null;
  bedrock_key_config: { region: string } | null;
  vertex_key_config: { project_id: string; region: string } | null;
  replicate_key_config: { use_deployments_endpoint: boolean } | null;
}

export interface KeyRow extends KeyColumns {
  id: string;
  provider: string;
  name: string;
  secret: string;
  source: string;
  owner_ref: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** Splits a validated input into columns and secrets. Legacy `deployments` maps move into `aliases`. */
export function splitKeyInput(
  input: KeyInput,
  opts: { compatV1?: boolean } = {},
): { columns: KeyColumns; secrets: KeySecrets } {
  const aliases: Record<string, string> = {
    ...input.azure_key_config?.deployments,
    ...input.bedrock_key_config?.deployments,
    ...input.vertex_key_config?.deployments,
    ...input.replicate_key_config?.deployments,
    ...input.aliases,
  };
  const models = opts.compatV1 && input.models.length === 0 ? ['*'] : input.models;
  const az = input.azure_key_config;
  const br = input.bedrock_key_config;
  const vx = input.vertex_key_config;
  return {
    columns: {
      models,
      weight: input.weight,
      aliases,
      azure_key_config: az
        ? { endpoint: az.endpoint, ...(az.api_version ? { api_version: az.api_version } : {}) }
        : null,
      bedrock_key_config: br ? { region: br.region } : null,
      vertex_key_config: vx ? { project_id: vx.project_id, region: vx.region } : null,
      replicate_key_config: input.replicate_key_config
        ? { use_deployments_endpoint: input.replicate_key_config.use_deployments_endpoint }
        : null,
    },
    secrets: {
      value: input.value,
      ...(br?.access_key && br.secret_key
        ? {
            bedrock: {
              access_key: br.access_key,
              secret_key: br.secret_key,
              ...(br.session_token ? { session_token: br.session_token } : {}),
            },
          }
        : {}),
      ...(vx?.auth_credentials ? { vertex_auth_credentials: vx.auth_credentials } : {}),
    },
  };
}

/**
 * On update, a secret field left empty or sent back exactly as the API showed it (redacted) keeps the stored
 * secret, so a client can GET, edit and PUT a key without knowing its value.
 */
export function mergeSecrets(next: KeySecrets, prev: KeySecrets): KeySecrets {
  const keep = (n: string | undefined, p: string | undefined) =>
    n === undefined || n === '' || n === redact(p) ? p : n;
  const merged: KeySecrets = { value: keep(next.value, prev.value) ?? '' };
  if (next.bedrock) {
    merged.bedrock = {
      access_key: keep(next.bedrock.access_key, prev.bedrock?.access_key) ?? '',
      secret_key: keep(next.bedrock.secret_key, prev.bedrock?.secret_key) ?? '',
    };
    const st = keep(next.bedrock.session_token, prev.bedrock?.session_token);
    if (next.bedrock.session_token !== undefined && st) merged.bedrock.session_token = st;
  }
  const vc = next.vertex_auth_credentials;
  if (vc !== undefined) merged.vertex_auth_credentials = keep(vc, prev.vertex_auth_credentials);
  else if (prev.vertex_auth_credentials) merged.vertex_auth_credentials = prev.vertex_auth_credentials;
  return merged;
}

export function toProviderKey(row: KeyRow, secrets: KeySecrets): ProviderKey {
  const key: ProviderKey = {
    id: row.id,
    name: row.name,
    value: secrets.value,
    models: row.models,
    weight: row.weight,
    aliases: row.aliases,
  };
  if (row.azure_key_config) key.azure_key_config = row.azure_key_config;
  // No stored static keys: the adapter asks the AWS default credential chain.
  if (row.bedrock_key_config) key.bedrock_key_config = { region: row.bedrock_key_config.region, ...secrets.bedrock };
  if (row.vertex_key_config) {
    key.vertex_key_config = {
      ...row.vertex_key_config,
      ...(secrets.vertex_auth_credentials ? { auth_credentials: secrets.vertex_auth_credentials } : {}),
    };
  }
  if (row.replicate_key_config) key.replicate_key_config = row.replicate_key_config;
  return key;
}

/** Shows at most the first and last 4 characters of long secrets, nothing of short ones. */
export function redact(secret: string | undefined): string | undefined {
  if (secret === undefined || secret === '') return secret;
  if (secret.length < 16) return '********';
  return `${secret.slice(0, 4)}********${secret.slice(-4)}`;
}

/** The API view of a key: every secret redacted. */
export function keyView(row: KeyRow, secrets: KeySecrets): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: row.id,
    name: row.name,
    value: redact(secrets.value) ?? '',
    models: row.models,
    weight: row.weight,
    aliases: row.aliases,
  };
  if (row.azure_key_config) view['azure_key_config'] = row.azure_key_config;
  if (row.bedrock_key_config) {
    view['bedrock_key_config'] = {
      region: row.bedrock_key_config.region,
      ...(secrets.bedrock
        ? { access_key: redact(secrets.bedrock.access_key), secret_key: redact(secrets.bedrock.secret_key) }
        : {}),
      ...(secrets.bedrock?.session_token ? { session_token: redact(secrets.bedrock.session_token) } : {}),
    };
  }
  if (row.vertex_key_config) {
    view['vertex_key_config'] = {
      ...row.vertex_key_config,
      ...(secrets.vertex_auth_credentials ? { auth_credentials: redact(secrets.vertex_auth_credentials) } : {}),
    };
  }
  if (row.replicate_key_config) view['replicate_key_config'] = row.replicate_key_config;
  view['source'] = row.source;
  if (row.owner_ref) view['owner_ref'] = row.owner_ref;
  view['created_at'] = iso(row.created_at);
  view['updated_at'] = iso(row.updated_at);
  return view;
}

export function iso(d: Date | string): string {
  return d instanceof Date ? d.toISOString() : new Date(d).toISOString();
}
