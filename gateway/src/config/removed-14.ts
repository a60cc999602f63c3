// Settings of a 1.4.x config.json that 1.5.0 removed (spec, Versioning, breaking changes 8, 10 and 14; `cleanup_on_shutdown`, 16, is refused by the semantic cache plugin's own schema): each is
// refused with its path and the 1.5.0 replacement, instead of a bare "unknown field" or a silent conversion.
// Only config.json needs this manual update (the database is migrated automatically, state/upgrade).

export interface RemovedSetting {
  path: (string | number)[];
  message: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const CLIENT: Record<string, string> = {
  allow_direct_keys:
    'allow_direct_keys was removed in 1.5.0 (breaking change 14): raw provider keys in request headers are refused; register the key under providers and pin it per request with x-gateway-key-id / x-gateway-key-name, or use virtual keys',
  enable_litellm_fallbacks:
    'enable_litellm_fallbacks was removed in 1.5.0 (breaking change 8): configure the compat plugin instead (client.compat or plugins[] "compat") with convert_text_to_chat, convert_chat_to_responses and should_drop_params',
};

const DEPLOYMENTS =
  'deployments was removed in 1.5.0 (breaking change 10): move each entry into the key\'s top-level "aliases" (model name → deployment, inference profile or endpoint id); a Replicate key that called its deployments endpoint also sets replicate_key_config.use_deployments_endpoint: true';

const KEY_CONFIGS = ['azure_key_config', 'bedrock_key_config', 'vertex_key_config', 'replicate_key_config'];

/** Every removed 1.4.x setting in a raw (env-resolved, unvalidated) config.json. */
export function removedSettings14(raw: unknown): RemovedSetting[] {
  if (!isRecord(raw)) return [];
  const out: RemovedSetting[] = [];
  const client = raw['client'];
  if (isRecord(client)) {
    for (const [field, message] of Object.entries(CLIENT)) {
      if (field in client) out.push({ path: ['client', field], message });
    }
  }
  const providers = raw['providers'];
  if (isRecord(providers)) {
    for (const [name, provider] of Object.entries(providers)) {
      if (!isRecord(provider)) continue;
      if ('deployments' in provider) out.push({ path: ['providers', name, 'deployments'], message: DEPLOYMENTS });
      const keys = provider['keys'];
      if (!Array.isArray(keys)) continue;
      keys.forEach((key, i) => {
        if (!isRecord(key)) return;
        for (const cfg of KEY_CONFIGS) {
          const c = key[cfg];
          if (isRecord(c) && 'deployments' in c) {
            out.push({ path: ['providers', name, 'keys', i, cfg, 'deployments'], message: DEPLOYMENTS });
          }
        }
      });
    }
  }
  return out;
}
