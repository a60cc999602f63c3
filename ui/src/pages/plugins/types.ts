// The shapes /api/plugins and /api/cache answer (gateway/src/routes/api/plugins.ts, cache.ts).

export interface Plugin {
  id?: number;
  name: string;
  enabled: boolean;
  /** The settings in effect, defaults filled in. */
  config: Record<string, unknown>;
  source: 'default' | 'api' | 'config_file';
  status: { name: string; status: 'active' | 'disabled' | 'error'; logs: string[]; types: string[] };
  version: number;
  config_hash: string;
  created_at?: string;
  updated_at?: string;
}

export interface PluginChanged {
  message: string;
  plugin: Plugin;
}

export interface CacheCleared {
  message: string;
  deleted: number;
}

export const pluginKeys = ['plugins'] as const;
