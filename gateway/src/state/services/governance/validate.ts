// Validation of virtual-key payloads (pure): the wire body -> a checked input, or a message naming the field.
// References to other rows (teams, customers, provider keys) are checked by the service in its transaction.
import { z } from 'zod';
import { allowList, allowListIssue, WILDCARD } from '../../../config/allow-list.ts';
import { formatIssues, issueParam } from '../../../config/issues.ts';
import type { RateLimit } from '../../../governance/model.ts';
import { idString, nameString, textString } from '../../../schemas/strings.ts';
import { isRecord, omit } from '../../../util/records.ts';
import { isValueShaped, VALUE_RULE } from './virtual-keys-value.ts';

/** `<count><unit>`: m minute, h hour, d day, w week, M month, Y year. */
export const RESET_DURATION = /^[1-9][0-9]{0,3}[mhdwMY]$/;
/** The largest budget: its nano-USD amount must stay an exact JavaScript integer. */
export const MAX_BUDGET_USD = 9_000_000;
const MAX_BUDGETS = 20;
const MAX_LIST = 100;
/** RFC 9110 token characters, lower-cased; `*` only as the whole list. */
const HEADER_NAME = /^[!#$%&'+.^_`|~0-9a-z-]+$/;
const ID = idString();
/** Postgres cannot store year 0; past 9999 (UTC) the view's date could not be sent back. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(10_000, 0, 1);

export const ResetDuration = z
  .string()
  .regex(RESET_DURATION, 'expected a count (1-9999) and a unit m, h, d, w, M or Y, like 30d or 1M');

const Limit = z.number().int().min(0).max(1e15);

export const RateLimitInput = z
  .strictObject({
    request_max_limit: Limit.nullish(),
    request_reset_duration: ResetDuration.nullish(),
    token_max_limit: Limit.nullish(),
    token_reset_duration: ResetDuration.nullish(),
  })
  .superRefine((r, ctx) => {
    for (const kind of ['request', 'token'] as const) {
      if (r[`${kind}_max_limit`] != null && r[`${kind}_reset_duration`] == null) {
        ctx.addIssue({
          code: 'custom',
          path: [`${kind}_reset_duration`],
          message: `required when ${kind}_max_limit is set`,
        });
      }
    }
  })
  .transform((r): RateLimit | null => {
    const out: RateLimit = {};
    if (r.request_max_limit != null) out.request_max_limit = r.request_max_limit;
    if (r.request_reset_duration != null) out.request_reset_duration = r.request_reset_duration;
    if (r.token_max_limit != null) out.token_max_limit = r.token_max_limit;
    if (r.token_reset_duration != null) out.token_reset_duration = r.token_reset_duration;
    return Object.keys(out).length > 0 ? out : null;
  });

export const BudgetInput = z.strictObject({
  /** Repeating an existing budget's id on update keeps it (and so its usage). */
  id: ID.optional(),
  max_limit: z.number().min(0).max(MAX_BUDGET_USD),
  reset_duration: ResetDuration,
});
export type BudgetInput = z.infer<typeof BudgetInput>;

const Budgets = z.array(BudgetInput).max(MAX_BUDGETS).default([]);

export const ProviderConfigInput = z.strictObject({
  provider: nameString(64),
  allowed_models: allowList('allowed_models'),
  key_ids: allowList('key_ids'),
  weight: z
    .number()
    .min(0)
    .max(1_000_000)
    .nullish()
    .transform((w) => w ?? null),
  budgets: Budgets,
  rate_limit: RateLimitInput.nullish().transform((r) => r ?? null),
});
export type ProviderConfigInput = z.infer<typeof ProviderConfigInput>;

export const McpConfigInput = z
  .strictObject({
    mcp_client_name: nameString(128),
    tools_to_execute: allowList('tools_to_execute'),
    tools_to_auto_execute: allowList('tools_to_auto_execute'),
  })
  .superRefine((m, ctx) => {
    if (m.tools_to_execute[0] === WILDCARD) return;
    for (const [i, tool] of m.tools_to_auto_execute.entries()) {
      if (!m.tools_to_execute.includes(tool)) {
        ctx.addIssue({
          code: 'custom',
          path: ['tools_to_auto_execute', i],
          message: `tools_to_auto_execute: "${tool}" is not in tools_to_execute`,
        });
      }
    }
  });
export type McpConfigInput = z.infer<typeof McpConfigInput>;

const ExtraHeaders = z
  .array(z.string().min(1).max(256))
  .max(MAX_LIST)
  .default([])
  .transform((names) => names.map((n) => n.toLowerCase()))
  .superRefine((names, ctx) => {
    const issue = allowListIssue(names);
    if (issue) ctx.addIssue({ code: 'custom', message: `allowed_extra_headers: ${issue}` });
    for (const [i, n] of names.entries()) {
      if (n !== WILDCARD && !HEADER_NAME.test(n)) {
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `"${n}" is not a header name (token characters only; "*" only alone)`,
        });
      }
    }
  });

export const VirtualKeyInput = z
  .strictObject({
    id: ID.optional(),
    name: nameString(128, { trim: true }),
    description: textString(4096).default(''),
    is_active: z.boolean().default(true),
    expires_at: z.iso
      .datetime({ offset: true })
      .refine((d) => Date.parse(d) >= EARLIEST && Date.parse(d) < LATEST, 'must be a date from 1970 to 9999 (UTC)')
      .nullish()
      .transform((d) => d ?? null),
    value: z.string().max(512).refine(isValueShaped, VALUE_RULE).optional(),
    provider_configs: z.array(ProviderConfigInput).max(MAX_LIST).default([]),
    budgets: Budgets,
    calendar_aligned: z.boolean().default(false),
    rate_limit: RateLimitInput.nullish().transform((r) => r ?? null),
    mcp_configs: z.array(McpConfigInput).max(MAX_LIST).default([]),
    allowed_extra_headers: ExtraHeaders,
    team_id: ID.nullish().transform((v) => v ?? null),
    customer_id: ID.nullish().transform((v) => v ?? null),
  })
  .superRefine((vk, ctx) => {
    if (vk.team_id !== null && vk.customer_id !== null) {
      ctx.addIssue({ code: 'custom', path: ['customer_id'], message: 'set team_id or customer_id, not both' });
    }
    unique(vk.provider_configs, (pc) => pc.provider, ['provider_configs'], 'provider', ctx);
    unique(vk.mcp_configs, (m) => m.mcp_client_name, ['mcp_configs'], 'mcp_client_name', ctx);
    const budgetIds = new Set<string>();
    const budgetLists: [(string | number)[], BudgetInput[]][] = [
      [['budgets'], vk.budgets],
      ...vk.provider_configs.map((pc, i): [(string | number)[], BudgetInput[]] => [
        ['provider_configs', i, 'budgets'],
        pc.budgets,
      ]),
    ];
    for (const [path, list] of budgetLists) {
      for (const [i, b] of list.entries()) {
        if (b.id === undefined) continue;
        if (budgetIds.has(b.id)) {
          ctx.addIssue({ code: 'custom', path: [...path, i, 'id'], message: `budget ${b.id} is listed twice` });
        }
        budgetIds.add(b.id);
      }
    }
  });
export type VirtualKeyInput = z.infer<typeof VirtualKeyInput>;

function unique<T>(
  items: T[],
  keyOf: (t: T) => string,
  path: (string | number)[],
  field: string,
  ctx: z.RefinementCtx,
): void {
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    const k = keyOf(item);
    if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [...path, i, field], message: `duplicate ${field} "${k}"` });
    seen.add(k);
  }
}

export type Validation<T> = { ok: true; value: T } | { ok: false; error: { message: string; param?: string } };

/** Fields of the API view a client may send back unchanged (GET, edit, PUT); they are not inputs. */
const READ_ONLY_KEY_FIELDS = ['value_hint', 'source', 'owner_ref', 'created_at', 'updated_at'];
const READ_ONLY_PC_FIELDS = ['id'];
const READ_ONLY_BUDGET_FIELDS = ['current_usage', 'last_reset', 'next_reset', 'virtual_key_id', 'provider_config_id'];

/**
 * Checks a create (`mode: 'create'`) or update body. The old singular `budget` is ignored (spec, Errors 7);
 * the old `allowed_keys` is refused with its new name; an update cannot carry a value.
 */
export function validateVirtualKey(body: unknown, mode: 'create' | 'update'): Validation<VirtualKeyInput> {
  if (!isRecord(body)) return fail('(root): expected a JSON object');
  if (mode === 'update' && 'value' in body) {
    return fail('value: the value cannot be changed; create a new key', 'value');
  }
  if (Array.isArray(body['provider_configs'])) {
    for (const [i, pc] of body['provider_configs'].entries()) {
      if (!isRecord(pc) || !('allowed_keys' in pc)) continue;
      const param = `provider_configs[${i}].allowed_keys`;
      return fail(`${param}: allowed_keys was renamed key_ids (omitted or [] allows no keys; ["*"] allows all)`, param);
    }
  }
  const budgetAligned = findCalendarAligned(body);
  if (budgetAligned) {
    const message = `${budgetAligned}: calendar_aligned is set on the virtual key and applies to all its budgets`;
    return fail(message, budgetAligned);
  }
  const r = VirtualKeyInput.safeParse(stripIgnoredFields(body));
  if (!r.success) {
    return fail(formatIssues(r.error), issueParam(r.error));
  }
  return { ok: true, value: r.data };
}

/**
 * Drops what a virtual-key body may carry without meaning: the old singular `budget` (ignored, spec Errors 7)
 * and the read-only fields of the API view (a GET view sent back). Anything else is left to the schema.
 * config.json's virtual keys go through it too, so the file takes the same bodies as the API.
 */
export function stripIgnoredFields(body: unknown): unknown {
  if (!isRecord(body)) return body;
  const top = omit(body, ['budget', ...READ_ONLY_KEY_FIELDS]);
  if (Array.isArray(top['budgets'])) top['budgets'] = top['budgets'].map(stripBudget);
  if (Array.isArray(top['provider_configs'])) {
    top['provider_configs'] = top['provider_configs'].map((pc: unknown) => {
      if (!isRecord(pc)) return pc;
      const next = omit(pc, ['budget', ...READ_ONLY_PC_FIELDS]);
      if (Array.isArray(next['budgets'])) next['budgets'] = next['budgets'].map(stripBudget);
      return next;
    });
  }
  // The reference numbers MCP entries (`id`) in its answers and takes them back on update; entries here are keyed by
  // their client's name.
  if (Array.isArray(top['mcp_configs'])) {
    top['mcp_configs'] = top['mcp_configs'].map((m: unknown) => (isRecord(m) ? omit(m, ['id']) : m));
  }
  return top;
}

function stripBudget(b: unknown): unknown {
  return isRecord(b) ? omit(b, READ_ONLY_BUDGET_FIELDS) : b;
}

function findCalendarAligned(top: Record<string, unknown>): string | undefined {
  const lists: [string, unknown][] = [['budgets', top['budgets']]];
  if (Array.isArray(top['provider_configs'])) {
    for (const [i, pc] of top['provider_configs'].entries()) {
      if (isRecord(pc)) lists.push([`provider_configs[${i}].budgets`, pc['budgets']]);
    }
  }
  for (const [path, list] of lists) {
    if (!Array.isArray(list)) continue;
    for (const [i, b] of list.entries()) {
      if (isRecord(b) && 'calendar_aligned' in b) return `${path}[${i}].calendar_aligned`;
    }
  }
  return undefined;
}

function fail(message: string, param?: string): Validation<never> {
  return { ok: false, error: param === undefined ? { message } : { message, param } };
}
