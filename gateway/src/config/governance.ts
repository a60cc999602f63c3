// config.json `governance`: each entry is the body the REST API takes (the services' own input schemas), except
// that teams, customers and virtual keys are referred to by name: a virtual key names its owner in `team` or
// `customer`, and a routing rule's or pricing override's `scope_id` holds the team's, customer's or virtual
// key's name. Names are resolved to ids when the file is applied (state/services/governance/config-file.ts).
import { z } from 'zod';
import { nameString } from '../schemas/strings.ts';
import { OwnerInput } from '../state/services/governance/owners.ts';
import { PricingOverrideInput } from '../state/services/governance/pricing-overrides.ts';
import { RoutingRuleInput } from '../state/services/governance/routing-rules.ts';
import { stripIgnoredFields, VirtualKeyInput } from '../state/services/governance/validate.ts';
import { isRecord } from '../util/records.ts';
import { WILDCARD } from './allow-list.ts';

const OwnerName = nameString(128, { trim: true });

/** A virtual key in the file: the API's create body with a required `value` and `team` / `customer` names. */
export const FileVirtualKey = z.preprocess(
  stripIgnoredFields,
  VirtualKeyInput.safeExtend({ team: OwnerName.optional(), customer: OwnerName.optional() }).superRefine((vk, ctx) => {
    if (vk.value === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: 'required in config.json (usually "env.NAME"), so that clients can know the key',
      });
    }
    for (const [field, name] of [
      ['team_id', 'team'],
      ['customer_id', 'customer'],
    ] as const) {
      if (vk[field] !== null) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `config.json refers to a ${name} by name: use "${name}": "<${name} name>"`,
        });
      }
    }
    if (vk.team !== undefined && vk.customer !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['customer'], message: 'set team or customer, not both' });
    }
  }),
);
export type FileVirtualKey = z.infer<typeof FileVirtualKey>;

export const GovernanceFileConfig = z.strictObject({
  teams: z.array(OwnerInput).default([]),
  customers: z.array(OwnerInput).default([]),
  virtual_keys: z.array(FileVirtualKey).default([]),
  pricing_overrides: z.array(PricingOverrideInput).default([]),
  routing_rules: z.array(RoutingRuleInput).default([]),
});
export type GovernanceFileConfig = z.infer<typeof GovernanceFileConfig>;

/**
 * Compatibility mode (`version: 1`, raw file before validation): 1.4.x allow-list semantics for the file's
 * virtual keys, where an empty or omitted `allowed_models`, `key_ids` or `tools_to_execute` meant all. Runs
 * before validation so that, e.g., `tools_to_auto_execute` is checked against the widened list. Keys without
 * provider configs get every configured provider when the file is applied (that needs the database).
 */
export function compatV1Governance(raw: unknown): unknown {
  if (!isRecord(raw) || raw['version'] !== 1 || !isRecord(raw['governance'])) return raw;
  const gov = raw['governance'];
  if (!Array.isArray(gov['virtual_keys'])) return raw;
  const virtual_keys = gov['virtual_keys'].map((vk: unknown) => {
    if (!isRecord(vk)) return vk;
    const out = { ...vk };
    if (Array.isArray(vk['provider_configs'])) {
      out['provider_configs'] = vk['provider_configs'].map((pc: unknown) =>
        isRecord(pc) ? widen(pc, ['allowed_models', 'key_ids']) : pc,
      );
    }
    if (Array.isArray(vk['mcp_configs'])) {
      out['mcp_configs'] = vk['mcp_configs'].map((m: unknown) => (isRecord(m) ? widen(m, ['tools_to_execute']) : m));
    }
    return out;
  });
  return { ...raw, governance: { ...gov, virtual_keys } };
}

/** Omitted or empty lists become ["*"]; anything else (including invalid values) is left to validation. */
function widen(o: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out = { ...o };
  for (const f of fields) {
    const v = o[f];
    if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) out[f] = [WILDCARD];
  }
  return out;
}
