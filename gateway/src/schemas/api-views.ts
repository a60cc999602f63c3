// What the management API answers, as schemas for the API document (the services build these views as plain
// objects: state/services/**). Inputs are not here: the document uses the services' own input schemas.
// Where a view passes stored data through unchanged, the schema says so (open objects) rather than invent fields.
import { z } from 'zod';
import { NetworkConfigInput } from '../config/schema.ts';
import { MAX_PATH_PARAM } from '../state/services/input.ts';

const Timestamp = z.string().describe('ISO 8601 timestamp');
/** Where a row came from: `api`, `config` (config.json) or `kubernetes` (with `owner_ref`). */
const Source = z.string().describe('api, config or kubernetes');
const Provenance = {
  source: Source,
  owner_ref: z.string().optional().describe('the Kubernetes resource that owns this row'),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** C0 and C1 controls, which no stored id or name holds (written as escapes: a pattern for the document). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const NO_CONTROLS = /^[^\u0000-\u001f\u007f-\u009f]*$/;
/**
 * An id or name taken from the path: the services refuse longer ones or control characters with 400 before any
 * lookup (state/services/input.ts checkPathParam); this mirrors that rule for the document.
 */
export const PathParam = z.string().min(1).max(MAX_PATH_PARAM).regex(NO_CONTROLS, 'no control characters');
export const ProviderParams = z.object({ provider: PathParam });
export const ProviderKeyParams = z.object({ provider: PathParam, key_id: PathParam });
export const IdParams = z.object({ id: PathParam });

export const Deleted = z.strictObject({ deleted: z.string().describe('the id or name of the deleted row') });

export const ProviderView = z
  .strictObject({
    name: z.string(),
    network_config: NetworkConfigInput,
    ...Provenance,
  })
  .meta({ id: 'Provider' });
export const ProviderList = z.strictObject({ providers: z.array(ProviderView), total: z.int() });

const Redacted = z.string().describe('redacted: at most the first and last 4 characters');
export const ProviderKeyView = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    value: Redacted,
    models: z.array(z.string()),
    weight: z.number(),
    aliases: z.record(z.string(), z.string()),
    azure_key_config: z.strictObject({ endpoint: z.string(), api_version: z.string().optional() }).optional(),
    bedrock_key_config: z
      .strictObject({
        region: z.string(),
        access_key: Redacted.optional(),
        secret_key: Redacted.optional(),
        session_token: Redacted.optional(),
      })
      .optional(),
    vertex_key_config: z
      .strictObject({ project_id: z.string(), region: z.string(), auth_credentials: Redacted.optional() })
      .optional(),
    replicate_key_config: z.strictObject({ use_deployments_endpoint: z.boolean() }).optional(),
    ...Provenance,
  })
  .meta({ id: 'ProviderKey' });
export const ProviderKeyList = z.strictObject({ keys: z.array(ProviderKeyView), total: z.int() });

export const RateLimitView = z
  .strictObject({
    request_max_limit: z.number().optional(),
    request_reset_duration: z.string().optional(),
    token_max_limit: z.number().optional(),
    token_reset_duration: z.string().optional(),
  })
  .meta({ id: 'RateLimit' })
  .nullable();

/** A budget's limit and owner (the virtual-key list); exactly one of the owner fields is set. */
const budgetFields = {
  id: z.string(),
  max_limit: z.number().describe('USD'),
  reset_duration: z.string(),
  virtual_key_id: z.string().optional(),
  provider_config_id: z.string().optional(),
  team_id: z.string().optional(),
  customer_id: z.string().optional(),
  model_config_id: z.string().optional(),
  provider: z.string().optional().describe('the provider whose governance owns the budget'),
};
export const BudgetSummaryView = z.strictObject(budgetFields).meta({ id: 'BudgetSummary' });
/** A budget with its usage in the current period. */
export const BudgetView = z
  .strictObject({
    ...budgetFields,
    current_usage: z.number().describe('USD spent in the current period'),
    last_reset: Timestamp,
    next_reset: Timestamp.nullable(),
  })
  .meta({ id: 'Budget' });
export const BudgetList = z.strictObject({ budgets: z.array(BudgetView), total: z.int() });

const ownerFields = {
  id: z.string(),
  name: z.string(),
  description: z.string(),
  rate_limit: RateLimitView,
  budgets: z.array(BudgetView),
  ...Provenance,
};
export const TeamView = z
  .strictObject({ ...ownerFields, customer_id: z.string().nullable().describe('the customer the team belongs to') })
  .meta({ id: 'Team' });
export const CustomerView = z.strictObject({ ...ownerFields, email: z.string().nullable() }).meta({ id: 'Customer' });
/** `count` is the reference's name for `total`; both are sent. */
const counted = { total: z.int(), count: z.int() };
export const TeamList = z.strictObject({ teams: z.array(TeamView), ...counted });
export const TeamListQuery = z.object({ customer_id: z.string().max(128).optional().describe('only its teams') });
export const CustomerList = z.strictObject({ customers: z.array(CustomerView), ...counted });

/** A virtual key as shown; `budget` is how its budgets are shown (with usage, or only limits in the list). */
function virtualKeyView(budget: z.ZodType) {
  return z.strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    value_hint: z.string(),
    is_active: z.boolean(),
    expires_at: Timestamp.nullable(),
    calendar_aligned: z.boolean(),
    rate_limit: RateLimitView,
    allowed_extra_headers: z.array(z.string()),
    mcp_configs: z.array(
      z.strictObject({
        mcp_client_name: z.string(),
        tools_to_execute: z.array(z.string()),
        tools_to_auto_execute: z.array(z.string()),
      }),
    ),
    team_id: z.string().nullable(),
    customer_id: z.string().nullable(),
    provider_configs: z.array(
      z.strictObject({
        id: z.string(),
        provider: z.string(),
        allowed_models: z.array(z.string()),
        key_ids: z.array(z.string()),
        weight: z.number().nullable(),
        rate_limit: RateLimitView,
        budgets: z.array(budget),
      }),
    ),
    budgets: z.array(budget),
    ...Provenance,
  });
}
export const VirtualKeyView = virtualKeyView(BudgetView).meta({ id: 'VirtualKey' });

/** The create answer: the only one that carries the full value. */
export const VirtualKeyCreated = VirtualKeyView.extend({ value: z.string().describe('the full key, shown once') }).meta(
  { id: 'VirtualKeyCreated' },
);
/** The list shows each budget's limit only (no usage lookups for every key). */
export const VirtualKeyList = z.strictObject({
  virtual_keys: z.array(virtualKeyView(BudgetSummaryView).meta({ id: 'VirtualKeySummary' })),
  ...counted,
});

export const PricingOverrideView = z
  .strictObject({
    id: z.string(),
    scope: z.enum(['global', 'provider', 'provider_key', 'virtual_key']),
    scope_id: z.string().nullable(),
    provider: z.string(),
    model: z.string(),
    input_cost_per_token: z.number(),
    output_cost_per_token: z.number(),
    cache_read_cost_per_token: z.number().nullable(),
    cache_write_cost_per_token: z.number().nullable(),
    output_cost_per_image: z.number().nullable(),
    output_cost_per_image_variants: z.record(z.string(), z.number()).nullable(),
    input_cost_per_audio_per_second: z.number().nullable(),
    output_cost_per_audio_per_second: z.number().nullable(),
    input_cost_per_character: z.number().nullable(),
    cost_per_page: z.number().nullable(),
    output_cost_per_video_per_second: z.number().nullable(),
    output_cost_per_video_per_second_variants: z.record(z.string(), z.number()).nullable(),
    cost_per_search_unit: z.number().nullable(),
    cost_per_container: z.number().nullable(),
    input_cost_per_audio_token: z.number().nullable(),
    output_cost_per_audio_token: z.number().nullable(),
    cache_read_input_audio_token_cost: z.number().nullable(),
    input_cost_per_image_token: z.number().nullable(),
    output_cost_per_image_token: z.number().nullable(),
    cache_read_input_image_token_cost: z.number().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'PricingOverride' });
export const PricingOverrideList = z.strictObject({ pricing_overrides: z.array(PricingOverrideView), ...counted });

export const RoutingRuleView = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    enabled: z.boolean(),
    cel_expression: z.string(),
    targets: z.array(
      z.strictObject({
        provider: z.string().optional().describe('absent: the request’s provider'),
        model: z.string().optional().describe('absent: the request’s model'),
        weight: z.number(),
      }),
    ),
    fallbacks: z.array(z.string()),
    scope: z.enum(['global', 'team', 'customer', 'virtual_key']),
    scope_id: z.string().nullable(),
    priority: z.int(),
    query: z.record(z.string(), z.unknown()).nullable().describe('the dashboard’s rule tree, as sent'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'RoutingRule' });
export const RoutingRuleList = z.strictObject({ routing_rules: z.array(RoutingRuleView), ...counted });

/** One configured rate limit with its owner and the counters of its current windows. */
export const RateLimitEntryView = z
  .strictObject({
    owner_kind: z.enum(['virtual_key', 'provider_config', 'team', 'customer', 'model_config', 'provider']),
    owner_id: z.string(),
    owner_name: z.string(),
    virtual_key_id: z.string().nullable().optional().describe('provider configs only'),
    provider: z.string().nullable().optional().describe('provider configs and model configs of one provider'),
    request_max_limit: z.number().nullable(),
    request_reset_duration: z.string().nullable(),
    request_current_usage: z.number().nullable(),
    request_reset_at: Timestamp.nullable(),
    token_max_limit: z.number().nullable(),
    token_reset_duration: z.string().nullable(),
    token_current_usage: z.number().nullable(),
    token_reset_at: Timestamp.nullable(),
  })
  .meta({ id: 'RateLimitEntry' });
export const RateLimitList = z.strictObject({ rate_limits: z.array(RateLimitEntryView), total: z.int() });

const OwnerBudgets = z.strictObject({ id: z.string(), name: z.string(), budgets: z.array(BudgetView) });
export const QuotaView = z.strictObject({
  virtual_key: z.strictObject({ id: z.string(), name: z.string() }),
  budgets: z.array(BudgetView),
  provider_configs: z.array(z.strictObject({ provider: z.string(), budgets: z.array(BudgetView) })),
  team: OwnerBudgets.optional(),
  customer: OwnerBudgets.optional(),
  rate_limits: z.array(RateLimitEntryView),
});

/** A request-log row as stored: the columns below always, others (tokens, cost, owners, trail) as recorded. */
export const LogEntryView = z
  .looseObject({
    id: z.string(),
    created_at: Timestamp,
    request_type: z.string(),
    status: z.enum(['success', 'error']),
    status_code: z.int(),
    stream: z.boolean(),
    latency_ms: z.number(),
    metadata: z
      .record(z.string(), z.string())
      .nullable()
      .describe('Header values captured for the log (client setting logging_headers, x-gateway-lh-*); null: none'),
  })
  .meta({ id: 'RequestLog' });
export const LogList = z.strictObject({
  logs: z.array(LogEntryView),
  total: z.int(),
  limit: z.int(),
  offset: z.int(),
});

export const HealthView = z.strictObject({ status: z.literal('ok') });
const Dependency = z.strictObject({ kind: z.string(), ok: z.boolean() });
export const ReadyView = z.strictObject({
  status: z.enum(['ready', 'not_ready']),
  database: Dependency,
  coordination: Dependency,
  draining: z.boolean(),
});

/** The API document itself (OpenAPI 3.1). */
export const OpenApiView = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

/** A model config's or provider's budget, with its own calendar alignment and usage in the current period. */
const LimitBudgetView = z.strictObject({
  id: z.string(),
  max_limit: z.number().describe('USD'),
  reset_duration: z.string(),
  calendar_aligned: z.boolean(),
  current_usage: z.number().describe('USD spent in the current period'),
  last_reset: Timestamp,
  next_reset: Timestamp.nullable(),
});
/** A model config's or provider's rate limit, with the counters of its current windows. */
const LimitRateView = z.strictObject({
  request_max_limit: z.number().nullable(),
  request_reset_duration: z.string().nullable(),
  request_current_usage: z.number().nullable(),
  request_reset_at: Timestamp.nullable(),
  token_max_limit: z.number().nullable(),
  token_reset_duration: z.string().nullable(),
  token_current_usage: z.number().nullable(),
  token_reset_at: Timestamp.nullable(),
});
export const ModelConfigView = z
  .strictObject({
    id: z.string(),
    model_name: z.string(),
    provider: z.string().optional().describe('absent: the model on every provider'),
    budget: LimitBudgetView.optional(),
    rate_limit: LimitRateView.optional(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'ModelConfig' });
export const ModelConfigList = z.strictObject({ model_configs: z.array(ModelConfigView), count: z.int() });
export const ModelConfigOne = z.strictObject({ model_config: ModelConfigView });
export const ModelConfigChanged = z.strictObject({ message: z.string(), model_config: ModelConfigView });
export const ProviderGovernanceView = z
  .strictObject({
    provider: z.string(),
    budget: LimitBudgetView.optional(),
    rate_limit: LimitRateView.optional(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'ProviderGovernance' });
export const ProviderGovernanceList = z.strictObject({ providers: z.array(ProviderGovernanceView), count: z.int() });
export const Message = z.strictObject({ message: z.string() });
