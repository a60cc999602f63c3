// The client settings (`client` of config.json, `/api/config`): one row, validated, published on change.
import { z } from 'zod';
import { ClientConfig } from '../../config/schema.ts';
import type { Db, Queryable } from '../db/types.ts';
import { StateError } from '../errors.ts';
import type { ChangeEvent } from '../events.ts';
import { invalidInput } from './input.ts';

const REMOVED_FIELDS: Record<string, string> = {
  allow_direct_keys:
    'allow_direct_keys was removed in 1.5.0: direct provider keys are never accepted; pin a registered key with x-gateway-key-id / x-gateway-key-name or use virtual keys',
};

const PutBody = z.strictObject({ client_config: z.record(z.string(), z.unknown()) });

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

  /** PUT /api/config: replaces the client settings; omitted fields take their defaults. */
  async put(body: unknown): Promise<ClientConfig> {
    const shape = PutBody.safeParse(body);
    if (!shape.success) throw invalidInput(shape.error);
    const cfg = parseClientConfig(shape.data.client_config, 'client_config');
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

export function parseClientConfig(raw: Record<string, unknown>, path: string): ClientConfig {
  for (const [field, why] of Object.entries(REMOVED_FIELDS)) {
    if (field in raw) throw new StateError('invalid', `${path}.${field}: ${why}`, field);
  }
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
