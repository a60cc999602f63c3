// Writes an upgrade plan into this gateway's tables, inside the caller's transaction (the upgrade is one
// transaction: all of it or nothing). Secrets are sealed with the secret box (GATEWAY_ENCRYPTION_KEY) here.
import type { SecretBox } from '../../crypto/secretbox.ts';
import type { Queryable } from '../db/types.ts';
import type { Plan } from './plan/index.ts';

const j = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** Created on the first upgrade or import: one row per run; its presence means "never again". */
export const HISTORY_TABLE = `CREATE TABLE IF NOT EXISTS legacy_upgrades (
  id           serial PRIMARY KEY,
  origin       text NOT NULL,
  from_version text NOT NULL,
  to_version   text NOT NULL,
  applied_at   timestamptz NOT NULL DEFAULT now(),
  summary      jsonb NOT NULL
)`;

export async function writePlan(tx: Queryable, plan: Plan, box: SecretBox): Promise<void> {
  if (plan.clientConfig) {
    await tx.query(
      `INSERT INTO client_config (id, config) VALUES (1, $1)
       ON CONFLICT (id) DO UPDATE SET config = EXCLUDED.config, updated_at = now()`,
      [JSON.stringify(plan.clientConfig)],
    );
  }
  for (const p of plan.providers) {
    await tx.query('INSERT INTO providers (name, network_config, source) VALUES ($1, $2, $3)', [
      p.name,
      JSON.stringify(p.networkConfig),
      p.source,
    ]);
  }
  for (const k of plan.keys) {
    const c = k.columns;
    await tx.query(
      `INSERT INTO provider_keys (id, provider, name, secret, models, weight, aliases, azure_key_config,
         bedrock_key_config, vertex_key_config, replicate_key_config, source)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        k.id,
        k.provider,
        k.name,
        box.seal(JSON.stringify(k.secrets)),
        JSON.stringify(c.models),
        c.weight,
        JSON.stringify(c.aliases),
        j(c.azure_key_config),
        j(c.bedrock_key_config),
        j(c.vertex_key_config),
        j(c.replicate_key_config),
        k.source,
      ],
    );
  }
  for (const m of plan.mcpClients) {
    await tx.query(
      `INSERT INTO mcp_clients (id, name, connection_type, connection_string, auth_type, headers, tools_to_execute,
         tools_to_auto_execute, tool_pricing, is_ping_available, source)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        m.id,
        m.name,
        m.connectionType,
        m.connectionString,
        m.authType,
        m.headers ? box.seal(JSON.stringify(m.headers)) : null,
        JSON.stringify(m.toolsToExecute),
        JSON.stringify(m.toolsToAutoExecute),
        JSON.stringify(m.toolPricing),
        m.isPingAvailable,
        m.source,
      ],
    );
  }
  for (const c of plan.customers) {
    await tx.query('INSERT INTO customers (id, name, rate_limit, source) VALUES ($1, $2, $3, $4)', [
      c.id,
      c.name,
      j(c.rateLimit),
      c.source,
    ]);
  }
  for (const t of plan.teams) {
    await tx.query('INSERT INTO teams (id, name, rate_limit, customer_id, source) VALUES ($1, $2, $3, $4, $5)', [
      t.id,
      t.name,
      j(t.rateLimit),
      t.customerId,
      t.source,
    ]);
  }
  for (const m of plan.modelConfigs) {
    await tx.query('INSERT INTO model_configs (id, model_name, provider, rate_limit) VALUES ($1, $2, $3, $4)', [
      m.id,
      m.modelName,
      m.provider,
      j(m.rateLimit),
    ]);
  }
  for (const p of plan.providerGovernance) {
    await tx.query('INSERT INTO provider_governance (provider, rate_limit) VALUES ($1, $2)', [
      p.provider,
      j(p.rateLimit),
    ]);
  }
  for (const vk of plan.virtualKeys) {
    await tx.query(
      `INSERT INTO virtual_keys (id, name, description, value_hash, value_hint, is_active, calendar_aligned, rate_limit,
         mcp_configs, team_id, customer_id, source, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, COALESCE($13, now()))`,
      [
        vk.id,
        vk.name,
        vk.description,
        vk.valueHash,
        vk.valueHint,
        vk.isActive,
        vk.calendarAligned,
        j(vk.rateLimit),
        JSON.stringify(vk.mcpConfigs),
        vk.teamId,
        vk.customerId,
        vk.source,
        vk.createdAt,
      ],
    );
    for (const pc of vk.configs) {
      await tx.query(
        `INSERT INTO vk_provider_configs (id, virtual_key_id, provider, allowed_models, key_ids, weight, rate_limit, position)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          pc.id,
          vk.id,
          pc.provider,
          JSON.stringify(pc.allowedModels),
          JSON.stringify(pc.keyIds),
          pc.weight,
          j(pc.rateLimit),
          pc.position,
        ],
      );
    }
  }
  for (const b of plan.budgets) {
    // The column name comes from the plan's fixed set, never from input. Budgets keep the 1.4.x order.
    await tx.query(
      `INSERT INTO budgets (id, ${b.column}, max_limit_nano, reset_duration, anchor_at, calendar_aligned, created_at)
       VALUES ($1, $2, $3, $4, COALESCE($5, now()), $6, clock_timestamp() + $7::int * interval '1 microsecond')`,
      [b.id, b.ownerId, b.maxLimitNano, b.resetDuration, b.anchorAt, b.calendarAligned, b.position],
    );
  }
  for (const o of plan.pricingOverrides) {
    await tx.query(
      `INSERT INTO pricing_overrides (id, scope, scope_id, provider, model, input_cost_per_token, output_cost_per_token,
         cache_read_cost_per_token, cache_write_cost_per_token)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        o.id,
        o.scope,
        o.scope_id ?? null,
        o.provider,
        o.model,
        String(o.input_cost_per_token ?? 0),
        String(o.output_cost_per_token ?? 0),
        o.cache_read_cost_per_token == null ? null : String(o.cache_read_cost_per_token),
        o.cache_write_cost_per_token == null ? null : String(o.cache_write_cost_per_token),
      ],
    );
  }
  for (const r of plan.routingRules) {
    await tx.query(
      `INSERT INTO routing_rules (id, name, description, enabled, condition, targets, fallbacks, scope, scope_id,
         priority, query)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        r.id,
        r.name,
        r.description,
        r.enabled,
        r.cel_expression,
        JSON.stringify(r.targets),
        JSON.stringify(r.fallbacks),
        r.scope,
        r.scope === 'global' ? null : (r.scope_id ?? null),
        r.priority,
        j(r.query),
      ],
    );
  }
}

export async function recordUpgrade(tx: Queryable, plan: Plan, origin: string): Promise<void> {
  await tx.exec(HISTORY_TABLE);
  await tx.query(
    `INSERT INTO legacy_upgrades (origin, from_version, to_version, summary) VALUES ($1, '1.4.x', '1.5.0', $2)`,
    [origin, JSON.stringify({ report: plan.report })],
  );
}
