// Plugin settings (/api/plugins, config.json `plugins[]`): validated against the plugin's own schema, written to
// the `plugins` table, published so every pod applies them. A built-in plugin without a row runs with its defaults.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  isPluginName,
  PLUGINS,
  type PluginConfigs,
  type PluginName,
  parsePluginConfig,
  unknownPluginMessage,
} from '../../../plugins/catalog.ts';
import type { Db, Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import type { ChangeEvent } from '../../events.ts';
import { checkPathParam, invalidInput } from '../input.ts';

export type PluginSource = 'api' | 'config_file';

/** A stored plugin row; `config` as stored (parsed again on read: a newer schema may refuse it). */
export interface PluginRow {
  id: number;
  name: PluginName;
  enabled: boolean;
  config: Record<string, unknown>;
  version: number;
  config_hash: string;
  source: PluginSource;
  created_at: string;
  updated_at: string;
}

/** One entry of config.json `plugins[]`, already validated (config/schema.ts). */
export interface PluginFileEntry {
  name: PluginName;
  enabled: boolean;
  config: Record<string, unknown>;
}

const NO_CUSTOM = 'custom plugins loaded from a path are not supported: only the built-in plugins can be configured';

const CreateBody = z.strictObject({
  name: z.string().max(1024),
  enabled: z.boolean().optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  path: z.unknown().optional(),
});
const UpdateBody = z.strictObject({
  enabled: z.boolean().optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  path: z.unknown().optional(),
});

export class PluginService {
  private readonly db: Db;
  private readonly publish: (e: ChangeEvent) => Promise<void>;
  /** Where defaults that follow the environment (telemetry: OTEL_*) are read. */
  private readonly env: Record<string, string | undefined>;
  constructor(opts: {
    db: Db;
    publish: (e: ChangeEvent) => Promise<void>;
    env?: Record<string, string | undefined>;
  }) {
    this.db = opts.db;
    this.publish = opts.publish;
    this.env = opts.env ?? process.env;
  }

  /** Stored rows by name (plugins without a row run with their defaults). */
  async rows(): Promise<Map<PluginName, PluginRow>> {
    return new Map((await readPluginRows(this.db)).map((r) => [r.name, r]));
  }

  /** POST /api/plugins: stores the settings of a built-in plugin that has none stored yet (409 otherwise). */
  async create(body: unknown): Promise<PluginRow> {
    const r = CreateBody.safeParse(body);
    if (!r.success) throw invalidInput(r.error);
    const b = r.data;
    if (b.path !== undefined) throw new StateError('invalid', `path: ${NO_CUSTOM}`, 'path');
    if (!isPluginName(b.name)) throw new StateError('invalid', `name: ${unknownPluginMessage(b.name)}`, 'name');
    const config = checkedConfig(b.name, b.config ?? {});
    const { rows } = await this.db.query<RawRow>(
      `INSERT INTO plugins (name, enabled, config, config_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO NOTHING RETURNING *`,
      [b.name, b.enabled ?? true, JSON.stringify(config), configHash(config)],
    );
    if (!rows[0]) {
      throw new StateError(
        'conflict',
        `plugin ${b.name} is already configured: change it with PUT /api/plugins/${b.name}`,
        'name',
      );
    }
    await this.publish({ kind: 'plugins' });
    return toRow(rows[0]);
  }

  /**
   * PUT /api/plugins/{name}: a partial update. `enabled` and `config` each replace the stored value when given;
   * a plugin without a row starts from its defaults. The row becomes the API's (config.json no longer resets it).
   */
  async update(name: string, body: unknown): Promise<PluginRow> {
    const n = pluginName(name);
    const r = UpdateBody.safeParse(body);
    if (!r.success) throw invalidInput(r.error);
    const b = r.data;
    if (b.path !== undefined) throw new StateError('invalid', `path: ${NO_CUSTOM}`, 'path');
    if (b.enabled === undefined && b.config === undefined) {
      throw new StateError('invalid', '(root): give enabled, config or both', 'enabled');
    }
    const config = b.config === undefined ? undefined : checkedConfig(n, b.config);
    const row = await this.db.transaction(async (tx) => {
      const { rows: cur } = await tx.query<RawRow>('SELECT * FROM plugins WHERE name = $1 FOR UPDATE', [n]);
      const was = cur[0] ? toRow(cur[0]) : undefined;
      const enabled = b.enabled ?? was?.enabled ?? PLUGINS[n].enabledByDefault(this.env);
      const next = config ?? storedOrDefault(n, was);
      const { rows } = await tx.query<RawRow>(
        `INSERT INTO plugins (name, enabled, config, config_hash, source) VALUES ($1, $2, $3, $4, 'api')
         ON CONFLICT (name) DO UPDATE SET enabled = EXCLUDED.enabled, config = EXCLUDED.config,
           config_hash = EXCLUDED.config_hash, source = 'api', version = plugins.version + 1, updated_at = now()
         RETURNING *`,
        [n, enabled, JSON.stringify(next), configHash(next)],
      );
      return toRow(rows[0]!);
    });
    await this.publish({ kind: 'plugins' });
    return row;
  }

  /** DELETE /api/plugins/{name}: forgets the stored settings; the built-in plugin runs with its defaults again. */
  async reset(name: string): Promise<{ removed: boolean }> {
    const n = pluginName(name);
    const { rowCount } = await this.db.query('DELETE FROM plugins WHERE name = $1', [n]);
    await this.publish({ kind: 'plugins' });
    return { removed: rowCount > 0 };
  }

  /**
   * config.json `plugins[]` at start: each listed plugin's row is written as the file says; rows an earlier file
   * wrote for plugins it no longer lists are removed (back to defaults). Rows written through the API stay unless
   * the file lists that plugin.
   */
  async applyConfigFile(entries: readonly PluginFileEntry[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const e of entries) {
        const config = checkedConfig(e.name, e.config, `plugins.${e.name}.config`);
        await tx.query(
          `INSERT INTO plugins (name, enabled, config, config_hash, source) VALUES ($1, $2, $3, $4, 'config_file')
           ON CONFLICT (name) DO UPDATE SET enabled = EXCLUDED.enabled, config = EXCLUDED.config,
             config_hash = EXCLUDED.config_hash, source = 'config_file',
             version = CASE WHEN plugins.enabled = EXCLUDED.enabled AND plugins.config_hash = EXCLUDED.config_hash
                            THEN plugins.version ELSE plugins.version + 1 END,
             updated_at = CASE WHEN plugins.enabled = EXCLUDED.enabled AND plugins.config_hash = EXCLUDED.config_hash
                            THEN plugins.updated_at ELSE now() END`,
          [e.name, e.enabled, JSON.stringify(config), configHash(config)],
        );
      }
      await tx.query(`DELETE FROM plugins WHERE source = 'config_file' AND NOT (name = ANY($1::text[]))`, [
        entries.map((e) => e.name),
      ]);
    });
    await this.publish({ kind: 'plugins' });
  }
}

type RawRow = Omit<PluginRow, 'created_at' | 'updated_at' | 'name'> & {
  name: string;
  created_at: Date | string;
  updated_at: Date | string;
};

/** Every stored row of a built-in plugin (a row naming a plugin this build does not have is skipped). */
export async function readPluginRows(q: Queryable): Promise<PluginRow[]> {
  const { rows } = await q.query<RawRow>('SELECT * FROM plugins ORDER BY name');
  return rows.filter((r) => isPluginName(r.name)).map(toRow);
}

function toRow(r: RawRow): PluginRow {
  if (!isPluginName(r.name)) throw new StateError('not_found', unknownPluginMessage(r.name), 'name');
  const iso = (v: Date | string) => (v instanceof Date ? v.toISOString() : v);
  return {
    id: Number(r.id),
    name: r.name,
    enabled: r.enabled,
    config: r.config,
    version: Number(r.version),
    config_hash: r.config_hash,
    source: r.source,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** A path name that is no built-in plugin is a 404 (a name no row could have is a 400). */
export function pluginName(name: string): PluginName {
  checkPathParam(name, 'name');
  if (!isPluginName(name)) throw new StateError('not_found', unknownPluginMessage(name), 'name');
  return name;
}

function checkedConfig<N extends PluginName>(name: N, raw: unknown, path = 'config'): PluginConfigs[N] {
  const r = parsePluginConfig(name, raw, path);
  if (!r.ok) throw new StateError('invalid', r.error, r.param);
  return r.value;
}

/** The stored settings when the current schema still accepts them, else the defaults. */
function storedOrDefault<N extends PluginName>(name: N, row: PluginRow | undefined): PluginConfigs[N] {
  const stored = row ? parsePluginConfig(name, row.config) : undefined;
  if (stored?.ok) return stored.value;
  const defaults = parsePluginConfig(name, {});
  if (!defaults.ok) throw new Error(`plugin ${name}: its defaults do not pass its own schema`);
  return defaults.value;
}

/** sha256 of the settings with sorted keys: equal settings, equal hash, whatever the key order. */
export function configHash(config: unknown): string {
  return createHash('sha256').update(stableJson(config)).digest('hex');
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${stableJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
