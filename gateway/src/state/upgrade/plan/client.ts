// Client settings: the few that exist here come across; the removed switches are named with their replacement.

import { formatIssues } from '../../../config/issues.ts';
import { isCredentialHeader } from '../../../config/log-headers.ts';
import { ClientConfig } from '../../../config/schema.ts';
import { bool, num, type Raw } from '../store14.ts';
import { planReferenceClientSettings } from './client-reference.ts';
import type { Notes } from './notes.ts';
import { stringList } from './values.ts';

const OBJECT = 'client settings';

export function planClientConfig(c: Raw | undefined, notes: Notes): ClientConfig | undefined {
  if (!c) return undefined;
  let clientConfig: ClientConfig | undefined;
  const origins = stringList(c['allowed_origins_json']) ?? [];
  const parsed = ClientConfig.safeParse({
    // enforce_governance_header is 1.4.x's older name of the same switch (kept in step with it).
    enforce_auth_on_inference: bool(c['enforce_auth_on_inference'], bool(c['enforce_governance_header'])),
    max_request_body_size_mb: num(c['max_request_body_size_mb']) ?? undefined,
    allowed_origins: origins,
    log_retention_days: num(c['log_retention_days']) ?? undefined,
    ...planReferenceClientSettings(c, notes),
    logging_headers: loggingHeaders(stringList(c['logging_headers_json']) ?? [], notes),
    required_headers: stringList(c['required_headers_json']) ?? [],
  });
  if (parsed.success) {
    clientConfig = parsed.data;
    notes.note(
      OBJECT,
      'enforce_auth_on_inference, max_request_body_size_mb, allowed_origins, log_retention_days, logging_headers, required_headers, mcp_agent_depth, mcp_tool_execution_timeout and header_filter_config carried over',
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

/** 1.4.x captured any header it was given; credentials are never logged here, so they stay behind (named). */
function loggingHeaders(names: string[], notes: Notes): string[] {
  const refused = names.filter(isCredentialHeader);
  if (refused.length > 0) {
    notes.warn(OBJECT, `logging_headers ${refused.join(', ')} carry credentials: never captured, not carried over`);
  }
  return names.filter((n) => !isCredentialHeader(n));
}
