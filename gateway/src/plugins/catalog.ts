// The built-in plugins: their names, what they plug into, their settings schemas, the options 1.5.0 removed, and
// how each runs when nothing configures it. Pure (no I/O): config/ and state/services/plugins/ both read it.
import { z } from 'zod';
import { formatIssues, issueParam } from '../config/issues.ts';
import { COMPAT_REMOVED, CompatConfig } from './compat/config.ts';
import { LoggingConfig } from './logging/config.ts';
import { SEMANTIC_CACHE_REMOVED, SemanticCacheConfig } from './semantic-cache/config.ts';

/** Telemetry is configured by the standard OTEL_* variables; the plugin row only switches it on and off. */
export const TelemetryConfig = z.strictObject({});
export type TelemetryConfig = z.infer<typeof TelemetryConfig>;

export const PLUGIN_NAMES = ['logging', 'telemetry', 'semantic_cache', 'compat'] as const;
export type PluginName = (typeof PLUGIN_NAMES)[number];

export interface PluginConfigs {
  logging: LoggingConfig;
  telemetry: TelemetryConfig;
  semantic_cache: SemanticCacheConfig;
  compat: CompatConfig;
}

/** The interfaces a plugin implements, as the reference's `status.types` names them. */
export type PluginType = 'llm' | 'mcp' | 'http' | 'observability';

type Env = Record<string, string | undefined>;

export interface PluginDefinition<N extends PluginName> {
  name: N;
  types: PluginType[];
  schema: z.ZodType<PluginConfigs[N], unknown>;
  /** Options an earlier release had: refused with what replaced them. */
  removed: Record<string, string>;
  /** Whether the plugin runs when no row configures it. */
  enabledByDefault(env: Env): boolean;
}

export const PLUGINS: { [N in PluginName]: PluginDefinition<N> } = {
  logging: {
    name: 'logging',
    types: ['llm', 'observability'],
    schema: LoggingConfig,
    removed: {},
    enabledByDefault: () => true,
  },
  telemetry: {
    name: 'telemetry',
    types: ['llm', 'observability'],
    schema: TelemetryConfig,
    removed: {},
    // The gen_ai metrics always; traces when OTEL_* configures an exporter (plugins/telemetry).
    enabledByDefault: () => true,
  },
  semantic_cache: {
    name: 'semantic_cache',
    types: ['llm'],
    schema: SemanticCacheConfig,
    removed: SEMANTIC_CACHE_REMOVED,
    enabledByDefault: () => false,
  },
  compat: {
    name: 'compat',
    types: ['llm'],
    schema: CompatConfig,
    removed: COMPAT_REMOVED,
    enabledByDefault: () => false,
  },
};

export function isPluginName(name: string): name is PluginName {
  return (PLUGIN_NAMES as readonly string[]).includes(name);
}

export type ConfigResult<N extends PluginName> =
  | { ok: true; value: PluginConfigs[N] }
  | { ok: false; error: string; param: string };

/** Validates one plugin's settings; errors name the field under `path` (e.g. `config.threshold`). */
export function parsePluginConfig<N extends PluginName>(name: N, raw: unknown, path = 'config'): ConfigResult<N> {
  const def: PluginDefinition<N> = PLUGINS[name];
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [field, why] of Object.entries(def.removed)) {
      if (field in raw) return { ok: false, error: `${path}.${field}: ${why}`, param: `${path}.${field}` };
    }
  }
  const r = def.schema.safeParse(raw ?? {});
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, error: formatIssues(r.error, path), param: issueParam(r.error, path) ?? path };
}

export function unknownPluginMessage(name: string): string {
  const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
  return `unknown plugin ${JSON.stringify(shown)}: the built-in plugins are ${PLUGIN_NAMES.join(', ')} (custom plugins are not supported)`;
}
