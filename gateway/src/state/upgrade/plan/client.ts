// Client settings: the few that exist here come across; the removed switches are named with their replacement.

import { formatIssues } from '../../../config/issues.ts';
import { ClientConfig } from '../../../config/schema.ts';
import { bool, num, type Raw } from '../store14.ts';
import type { Notes } from './notes.ts';
import { stringList } from './values.ts';

const OBJECT = 'client settings';

export function planClientConfig(c: Raw | undefined, notes: Notes): ClientConfig | undefined {
  if (!c) return undefined;
  let clientConfig: ClientConfig | undefined;
  const origins = stringList(c['allowed_origins_json']) ?? [];
  const parsed = ClientConfig.safeParse({
    enforce_auth_on_inference: bool(c['enforce_auth_on_inference']),
    max_request_body_size_mb: num(c['max_request_body_size_mb']) ?? undefined,
    allowed_origins: origins,
    log_retention_days: num(c['log_retention_days']) ?? undefined,
  });
  if (parsed.success) {
    clientConfig = parsed.data;
    notes.note(
      OBJECT,
      'enforce_auth_on_inference, max_request_body_size_mb, allowed_origins and log_retention_days carried over',
    );
  } else {
    notes.warn(OBJECT, `left at their defaults: ${formatIssues(parsed.error)}`);
  }
  if (bool(c['allow_direct_keys'])) {
    notes.warn(
      OBJECT,
      'allow_direct_keys was on: removed in 1.5.0, raw provider keys in headers now fail; pin a registered key with x-gateway-key-id / x-gateway-key-name or use virtual keys',
    );
  }
  if (bool(c['enable_litellm_fallbacks'])) {
    notes.warn(
      OBJECT,
      'enable_litellm_fallbacks was on: removed in 1.5.0; enable the compat plugin with convert_text_to_chat, convert_chat_to_responses and should_drop_params',
    );
  }
  return clientConfig;
}
