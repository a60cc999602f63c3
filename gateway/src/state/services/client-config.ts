// The client settings (`client` of config.json, `/api/config`): one row, validated, published on change.
import { z } from 'zod';
import { foldGovernanceHeader, GOVERNANCE_HEADER } from '../../config/reference-client.ts';
import { ClientConfig } from '../../config/schema.ts';
import type { Db, Queryable } from '../db/types.ts';
import { StateError } from '../errors.ts';
import type { ChangeEvent } from '../events.ts';
import { invalidInput } from './input.ts';

const REMOVED_FIELDS: Record<string, string> = {
  allow_direct_keys:
    'allow_direct_keys was removed in 1.5.0: direct provider keys are never accepted; pin a registered key with x-gateway-key-id / x-gateway-key-name or use virtual keys',
};

/**
 * The reference's framework settings: a remote price sheet (`pricing_url`) synced every `pricing_sync_interval`
 * seconds. This gateway prices from its shipped table and the pricing overrides, so both can only be empty; the
 * object is accepted so that a GET view sent back (or a reference client's body without them) goes through.
 */
const NO_PRICE_SHEET =
  'this gateway prices from its shipped table and pricing overrides (no remote price sheet); use /api/governance/pricing-overrides';
export const FrameworkConfigInput = z.strictObject({
  id: z.unknown().optional().describe('ignored (read-only)'),
  pricing_url: z.string().max(0, NO_PRICE_SHEET).nullish().describe('must be empty or null'),
  pricing_sync_interval: z
    .number()
    .nullish()
    .refine((v) => v == null, NO_PRICE_SHEET)
    .describe('must be null'),
});
const AUTH_CONFIG =
  'auth_config is not supported: the management API authenticates admin API keys (config.json auth.admin_api_keys, GATEWAY_ADMIN_API_KEY)';

export const ConfigPutBody = z.strictObject({
  client_config: z.record(z.string(), z.unknown()).optional(),
  framework_config: FrameworkConfigInput.nullish(),
});
/** What GET shows of the framework settings: nothing is configured (see FrameworkConfigInput). */
export const FRAMEWORK_CONFIG_VIEW = { pricing_url: null, pricing_sync_interval: null } as const;

export class ClientConfigService {
  private readonly db: Db;
  private readonly publish: (e: ChangeEvent) => Promise<void>;
  constructor(db: Db, publish: (e: ChangeEvent) => Promise<void>) {
    this.db = db;
    this.publish = publish;
  }

  async get(): Promise<ClientConfig> {
    return readClientConfig(this.db);
  }

  /**
   * PUT /api/config: replaces the client settings (omitted fields take their defaults); a body without
   * `client_config` keeps them.
   */
  async put(body: unknown, warn?: (message: string) => void): Promise<ClientConfig> {
    if (body && typeof body === 'object' && 'auth_config' in body) {
      throw new StateError('invalid', AUTH_CONFIG, 'auth_config');
    }
    const shape = ConfigPutBody.safeParse(body);
    if (!shape.success) throw invalidInput(shape.error);
    if (shape.data.client_config === undefined) return this.get();
    const cfg = parseClientConfig(shape.data.client_config, 'client_config', warn);
    await this.write(cfg);
    return cfg;
  }

  /** config.json `client` at start: the file's settings become the stored settings. */
  async applyConfigFile(cfg: ClientConfig): Promise<void> {
    await this.write(cfg);
  }

  private async write(cfg: ClientConfig): Promise<void> {
    await this.db.query(
      `INSERT INTO client_config (id, config) VALUES (1, $1)
       ON CONFLICT (id) DO UPDATE SET config = EXCLUDED.config, updated_at = now()`,
      [JSON.stringify(cfg)],
    );
    await this.publish({ kind: 'client_config' });
  }
}

export function parseClientConfig(
  given: Record<string, unknown>,
  path: string,
  warn?: (message: string) => void,
): ClientConfig {
  for (const [field, why] of Object.entries(REMOVED_FIELDS)) {
    if (field in given) throw new StateError('invalid', `${path}.${field}: ${why}`, field);
  }
  const folded = foldGovernanceHeader(given);
  if (!folded.ok) throw new StateError('invalid', `${path}.${folded.message}`, GOVERNANCE_HEADER);
  if (folded.used) warn?.(`${path}.${GOVERNANCE_HEADER} is deprecated: use enforce_auth_on_inference`);
  const raw = folded.raw;
  const r = ClientConfig.safeParse(raw);
  if (!r.success) throw invalidInput(r.error, path);
  return r.data;
}

export async function readClientConfig(q: Queryable, onDropped?: (fields: string[]) => void): Promise<ClientConfig> {
  const { rows } = await q.query<{ config: Record<string, unknown> }>('SELECT config FROM client_config WHERE id = 1');
  return storedClientConfig(rows[0]?.config ?? {}, onDropped);
}

/**
 * Stored settings were valid when written; parsing again fills defaults added by newer versions. A field a
 * newer version's rules refuse (e.g. a body limit below today's minimum) takes its default and is reported,
 * so a tightened rule never stops a gateway from starting on an older row.
 */
export function storedClientConfig(raw: Record<string, unknown>, onDropped?: (fields: string[]) => void): ClientConfig {
  const r = ClientConfig.safeParse(raw);
  if (r.success) return r.data;
  const bad = new Set<string>();
  for (const issue of r.error.issues) {
    if (issue.code === 'unrecognized_keys') for (const k of issue.keys) bad.add(k);
    else if (issue.path[0] !== undefined) bad.add(String(issue.path[0]));
  }
  onDropped?.([...bad]);
  const kept = ClientConfig.safeParse(Object.fromEntries(Object.entries(raw).filter(([k]) => !bad.has(k))));
  return kept.success ? kept.data : ClientConfig.parse({});
}
