// The running plugins of one pod: the effective settings of each built-in plugin (its stored row, else its
// defaults), recomputed whenever the snapshot's plugin rows change, and the engine hooks they implement.
import type { CacheLookup, EngineHooks, StreamContent } from '../engine/hooks.ts';
import type { InferenceInput } from '../engine/inference.ts';
import type { OperationSpec } from '../engine/operations.ts';
import type { Principal } from '../http/auth.ts';
import type { RequestLog } from '../state/services/log-rows.ts';
import type { PluginRow } from '../state/services/plugins/index.ts';
import {
  PLUGIN_NAMES,
  PLUGINS,
  type PluginConfigs,
  type PluginName,
  type PluginType,
  parsePluginConfig,
} from './catalog.ts';
import { compatActive, compatOperation } from './compat/index.ts';
import { StreamContent as StreamContentCollector } from './logging/stream-content.ts';
import type { SemanticCache } from './semantic-cache/index.ts';

export interface EffectivePlugin<N extends PluginName> {
  name: N;
  enabled: boolean;
  config: PluginConfigs[N];
  /** The stored row; undefined when the plugin runs with its defaults. */
  row: PluginRow | undefined;
  /** Why the stored settings could not be used (the defaults run instead). */
  error: string | undefined;
}

export type EffectivePlugins = { [N in PluginName]: EffectivePlugin<N> };

export interface PluginStatus {
  name: PluginName;
  status: 'active' | 'disabled' | 'error';
  logs: string[];
  types: PluginType[];
}

/** A running plugin's own view of its health (telemetry: is an exporter configured). */
export type StatusSource = (enabled: boolean) => { status: 'active' | 'error'; logs: string[] };

export interface PluginHostOptions {
  /** Stored rows (the snapshot's), read again after every change. */
  rows: () => ReadonlyMap<string, PluginRow>;
  /** Registers a listener called after the snapshot reloaded the plugin rows. */
  onChange: (fn: () => void) => void;
  env: Record<string, string | undefined>;
  /** Where the logging plugin writes rows. */
  writeLog: (entry: RequestLog) => void;
  log: { error(obj: object, msg: string): void };
}

/** Pure: each built-in plugin's effective settings from the stored rows. */
export function effectivePlugins(
  rows: ReadonlyMap<string, PluginRow>,
  env: Record<string, string | undefined>,
): EffectivePlugins {
  const one = <N extends PluginName>(name: N): EffectivePlugin<N> => {
    const row = rows.get(name);
    const defaults = parsePluginConfig(name, {});
    if (!defaults.ok) throw new Error(`plugin ${name}: its defaults do not pass its own schema`);
    if (!row)
      return { name, enabled: PLUGINS[name].enabledByDefault(env), config: defaults.value, row, error: undefined };
    const stored = parsePluginConfig(name, row.config);
    if (stored.ok) return { name, enabled: row.enabled, config: stored.value, row, error: undefined };
    return { name, enabled: row.enabled, config: defaults.value, row, error: `stored config refused: ${stored.error}` };
  };
  return {
    logging: one('logging'),
    telemetry: one('telemetry'),
    semantic_cache: one('semantic_cache'),
    compat: one('compat'),
  };
}

export class PluginHost implements EngineHooks {
  private current: EffectivePlugins;
  private readonly opts: PluginHostOptions;
  private readonly statusSources = new Map<PluginName, StatusSource>();
  private readonly listeners = new Set<(p: EffectivePlugins) => void>();
  /** Wrapped operations for the current compat settings (cleared when they change). */
  private wrapped = new WeakMap<object, object>();
  private logContent = true;
  /** The refusal last logged per plugin. */
  private readonly reported = new Map<PluginName, string>();
  private logging = true;
  /** The semantic cache (boot attaches it once the runtime exists: its embedding calls run through the engine). */
  private cache: SemanticCache | undefined;

  constructor(opts: PluginHostOptions) {
    this.opts = opts;
    this.current = this.compute();
    opts.onChange(() => {
      this.current = this.compute();
      for (const fn of this.listeners) fn(this.current);
    });
  }

  private compute(): EffectivePlugins {
    const p = effectivePlugins(this.opts.rows(), this.opts.env);
    for (const name of PLUGIN_NAMES) {
      const e = p[name].error;
      // Once per new refusal, not at every periodic reload.
      if (e && this.reported.get(name) !== e) {
        this.opts.log.error({ plugin: name, err: e }, 'plugin settings refused; its defaults apply');
      }
      if (e) this.reported.set(name, e);
      else this.reported.delete(name);
    }
    this.wrapped = new WeakMap();
    this.logging = p.logging.enabled;
    this.logContent = p.logging.enabled && !p.logging.config.disable_content_logging;
    return p;
  }

  /** Effective settings from rows just read (an API answer right after a write). */
  effective(rows: ReadonlyMap<string, PluginRow>): EffectivePlugins {
    return effectivePlugins(rows, this.opts.env);
  }

  get plugins(): EffectivePlugins {
    return this.current;
  }

  /** Calls `fn` with the new settings after every change (a plugin that runs outside the hooks follows its switch). */
  onChange(fn: (p: EffectivePlugins) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** A running plugin reports its own health here (e.g. telemetry without an exporter). */
  setStatusSource(name: PluginName, fn: StatusSource): void {
    this.statusSources.set(name, fn);
  }

  status(name: PluginName): PluginStatus {
    const p = this.current[name];
    const types = PLUGINS[name].types;
    if (!p.enabled) return { name, status: 'disabled', logs: [], types };
    if (p.error) return { name, status: 'error', logs: [p.error], types };
    if (name === 'semantic_cache' && !this.cache) {
      return { name, status: 'error', logs: ['the semantic cache is not attached in this process'], types };
    }
    const own = this.statusSources.get(name)?.(p.enabled) ?? { status: 'active' as const, logs: [] };
    return { name, ...own, types };
  }

  // Engine hooks.

  operation<Req, Res, Chunk>(spec: OperationSpec<Req, Res, Chunk>): OperationSpec<Req, Res, Chunk> {
    const compat = this.current.compat;
    if (!compat.enabled || !compatActive(compat.config)) return spec;
    const hit = this.wrapped.get(spec);
    // Stored under the spec it wraps: same type parameters.
    if (hit) return hit as OperationSpec<Req, Res, Chunk>;
    const w = compatOperation(spec, compat.config);
    this.wrapped.set(spec, w);
    return w;
  }

  /** Attaches the semantic cache; its lookups run while the plugin is enabled. */
  attachCache(cache: SemanticCache): void {
    this.cache = cache;
  }

  get semanticCache(): SemanticCache | undefined {
    return this.cache;
  }

  cacheLookup(
    input: InferenceInput<unknown>,
    format: string,
    requestType: string,
    stream: boolean,
    principal: Principal | null,
  ): Promise<CacheLookup | undefined> | undefined {
    const c = this.current.semantic_cache;
    if (!c.enabled || !this.cache) return undefined;
    return this.cache.lookup(c.config, { input, format, requestType, stream, principal });
  }

  wantsContent(): boolean {
    return this.logContent;
  }

  streamContent(): StreamContent | undefined {
    return this.logContent ? new StreamContentCollector() : undefined;
  }

  finished(entry: RequestLog): void {
    if (this.logging) this.opts.writeLog(entry);
  }
}
