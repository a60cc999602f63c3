// Provider keys (rules 1 and 5): `models: []` becomes `["*"]`, per-cloud deployments become aliases. Keys whose
// secrets 1.4.x encrypted cannot be read and stop the upgrade; disabled keys stay behind.

import { formatIssues } from '../../../config/issues.ts';
import { KeyInput } from '../../../config/schema.ts';
import type { ProviderCatalog } from '../../services/catalog.ts';
import { splitKeyInput } from '../../services/key-record.ts';
import { bool, json, num, type Raw, str, text, time } from '../store14.ts';
import type { Notes } from './notes.ts';
import type { PlannedKey, PlannedProvider } from './types.ts';
import { list, sourceOf, stringList, tidyList, WILDCARD } from './values.ts';

/** Azure AD and Bedrock role settings and vLLM URLs 1.4.x had on keys; nothing here takes them. */
const UNSUPPORTED = [
  'azure_client_id',
  'azure_client_secret',
  'azure_tenant_id',
  'bedrock_arn',
  'bedrock_role_arn',
  'vllm_url',
];

export interface KeysPlanned {
  keys: PlannedKey[];
  /** 1.4.x row id → key id, for provider configs' allowed keys. */
  keyIdByRow: Map<number, string>;
  keyNameById: Map<string, string>;
}

export function planKeys(
  rows: Raw[],
  providers: PlannedProvider[],
  providerById: Map<number, string>,
  catalog: ProviderCatalog,
  notes: Notes,
): KeysPlanned {
  const out: KeysPlanned = { keys: [], keyIdByRow: new Map(), keyNameById: new Map() };
  const carriedProviders = providers.map((p) => p.name);
  for (const k of rows) {
    const provider = text(k['provider']) ?? providerById.get(num(k['provider_id']) ?? -1) ?? '';
    const name = String(k['name']);
    const object = `provider key ${provider}/${name}`;
    if (!carriedProviders.includes(provider)) continue;
    if (str(k['encryption_status']) !== 'plain_text') {
      notes.fail(
        object,
        'its secrets are encrypted by the 1.4.x gateway, which this gateway cannot decrypt; re-save the key with 1.4.x without an encryption key, or add it again after the upgrade',
      );
      continue;
    }
    if (!bool(k['enabled'], true)) {
      notes.warn(object, 'disabled in 1.4.x: not carried over (this gateway has no disabled keys)');
      continue;
    }
    const models = stringList(k['models_json']);
    if (models === undefined) {
      notes.fail(object, 'models_json is not a list of names');
      continue;
    }
    const deny = stringList(k['blacklisted_models_json']) ?? [];
    if (deny.length > 0)
      notes.warn(object, `blacklisted models ${JSON.stringify(deny)} are not carried over (no deny-list here)`);
    const { input, aliasSource } = keyInput(k, provider, name, models, object, notes);
    const parsed = KeyInput.safeParse(input);
    if (!parsed.success) {
      notes.fail(object, formatIssues(parsed.error));
      continue;
    }
    const { columns, secrets } = splitKeyInput(parsed.data);
    const id = String(k['key_id']);
    out.keys.push({ id, provider, name, columns, secrets, source: sourceOf(k), createdAt: time(k['created_at']) });
    out.keyIdByRow.set(num(k['id']) ?? -1, id);
    out.keyNameById.set(id, name);
    if (models.length === 0) notes.note(object, 'models [] → ["*"]', 1);
    else if (list(tidyList(models)) !== list(models))
      notes.note(object, `models ${list(models)} → ${list(columns.models)} (wildcard beside names or duplicates)`);
    if (aliasSource) {
      notes.note(object, `${aliasSource} deployments → aliases ${JSON.stringify(columns.aliases)}`, 5);
      if (aliasSource === 'replicate')
        notes.note(
          object,
          'use_deployments_endpoint: true (1.4.x called the deployments endpoint for mapped models)',
          5,
        );
    }
    const problem = catalog.checkKey(
      provider,
      parsed.data,
      Boolean(providers.find((p) => p.name === provider)?.networkConfig.base_url),
    );
    if (problem) notes.warn(object, `carried over, but it cannot serve requests as it is: ${problem}`);
  }
  return out;
}

/** The key as config.json would give it, from the 1.4.x columns; `aliasSource` names the cloud whose map moved. */
function keyInput(
  k: Raw,
  provider: string,
  name: string,
  models: string[],
  object: string,
  notes: Notes,
): { input: Record<string, unknown>; aliasSource: string | undefined } {
  const deployments = (col: string): Record<string, string> | undefined => {
    const d = json(k[col]);
    return d && typeof d === 'object' && !Array.isArray(d) && Object.keys(d).length > 0
      ? (d as Record<string, string>)
      : undefined;
  };
  const input: Record<string, unknown> = {
    id: String(k['key_id']),
    name,
    value: str(k['value']) ?? '',
    models: models.length === 0 ? [WILDCARD] : tidyList(models),
    weight: num(k['weight']) ?? 1,
  };
  let aliasSource: string | undefined;
  if (text(k['azure_endpoint'])) {
    input['azure_key_config'] = {
      endpoint: text(k['azure_endpoint']),
      ...(text(k['azure_api_version']) ? { api_version: text(k['azure_api_version']) } : {}),
      ...(deployments('azure_deployments_json') ? { deployments: deployments('azure_deployments_json') } : {}),
    };
    if (deployments('azure_deployments_json')) aliasSource = 'azure';
  }
  for (const col of UNSUPPORTED) {
    if (text(k[col])) notes.warn(object, `${col} is not carried over (not supported here)`);
  }
  if (text(k['bedrock_region']) || text(k['bedrock_access_key'])) {
    input['bedrock_key_config'] = {
      region: text(k['bedrock_region']) ?? 'us-east-1',
      ...(text(k['bedrock_access_key']) ? { access_key: text(k['bedrock_access_key']) } : {}),
      ...(text(k['bedrock_secret_key']) ? { secret_key: text(k['bedrock_secret_key']) } : {}),
      ...(text(k['bedrock_session_token']) ? { session_token: text(k['bedrock_session_token']) } : {}),
      ...(deployments('bedrock_deployments_json') ? { deployments: deployments('bedrock_deployments_json') } : {}),
    };
    if (deployments('bedrock_deployments_json')) aliasSource = 'bedrock';
  }
  if (text(k['vertex_project_id'])) {
    input['vertex_key_config'] = {
      project_id: text(k['vertex_project_id']),
      region: text(k['vertex_region']) ?? 'us-central1',
      ...(text(k['vertex_auth_credentials']) ? { auth_credentials: text(k['vertex_auth_credentials']) } : {}),
      ...(deployments('vertex_deployments_json') ? { deployments: deployments('vertex_deployments_json') } : {}),
    };
    if (deployments('vertex_deployments_json')) aliasSource = 'vertex';
  }
  if (provider === 'replicate' || deployments('replicate_deployments_json')) {
    // 1.4.x sent a mapped model to Replicate's deployments endpoint: keep doing so where a map existed.
    const d = deployments('replicate_deployments_json');
    input['replicate_key_config'] = { use_deployments_endpoint: d !== undefined, ...(d ? { deployments: d } : {}) };
    if (d) aliasSource = 'replicate';
  }
  return { input, aliasSource };
}
