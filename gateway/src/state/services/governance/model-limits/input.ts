// What the model-config and provider-governance endpoints accept: the bodies' schemas, and a GET view sent back as
// an update (the view's read-only fields are dropped before validation).
import { z } from 'zod';
import { nameString } from '../../../../schemas/strings.ts';
import { isRecord, omit } from '../../../../util/records.ts';
import { invalidInput } from '../../input.ts';
import { MAX_BUDGET_USD, ResetDuration } from '../validate.ts';

export const BudgetFields = z.strictObject({
  max_limit: z.number().min(0).max(MAX_BUDGET_USD).optional(),
  reset_duration: ResetDuration.optional(),
  calendar_aligned: z.boolean().nullish(),
});
export type BudgetFields = z.infer<typeof BudgetFields>;

export const RateLimitFields = z.strictObject({
  request_max_limit: z.number().int().min(0).max(1e15).nullish(),
  request_reset_duration: ResetDuration.nullish(),
  token_max_limit: z.number().int().min(0).max(1e15).nullish(),
  token_reset_duration: ResetDuration.nullish(),
});
export type RateLimitFields = z.infer<typeof RateLimitFields>;

export const ModelConfigBody = z.strictObject({
  model_name: nameString(256, { trim: true }).optional(),
  /** `null` or absent on create: the model on every provider. */
  provider: nameString(64, { trim: true }).nullish(),
  budget: BudgetFields.nullish(),
  rate_limit: RateLimitFields.nullish(),
});

export const ProviderGovernanceBody = z.strictObject({
  budget: BudgetFields.nullish(),
  rate_limit: RateLimitFields.nullish(),
});

/** What a GET view adds; a client may send a view back as an update. */
const READ_ONLY = ['id', 'created_at', 'updated_at'];
const READ_ONLY_BUDGET = ['id', 'current_usage', 'last_reset', 'next_reset', 'created_at', 'updated_at'];
const READ_ONLY_RATE = [
  'id',
  'request_current_usage',
  'request_reset_at',
  'token_current_usage',
  'token_reset_at',
  'created_at',
  'updated_at',
];

/** The body validated by `schema` once a GET view's read-only fields are dropped; an empty body is `{}`. */
export function parseLimitBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(stripReadOnly(body ?? {}));
  if (!r.success) throw invalidInput(r.error);
  return r.data;
}

/** A GET view sent back as an update body: drop what the view adds. */
function stripReadOnly(body: unknown): unknown {
  if (!isRecord(body)) return body;
  const top = omit(body, [...READ_ONLY, 'provider_name']);
  if (isRecord(top['budget'])) top['budget'] = omit(top['budget'], READ_ONLY_BUDGET);
  if (isRecord(top['rate_limit'])) top['rate_limit'] = omit(top['rate_limit'], READ_ONLY_RATE);
  return top;
}
