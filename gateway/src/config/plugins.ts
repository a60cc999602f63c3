// The `plugins` section of config.json, and the client fields of the reference layout that configure a plugin
// (`client.enable_logging`, `client.disable_content_logging`, `client.compat`): all become plugin rows at start
// through the plugin service, the same path /api/plugins takes.
import { z } from 'zod';
import { isPluginName, PLUGINS, type PluginName, unknownPluginMessage } from '../plugins/catalog.ts';
import { CompatConfig } from '../plugins/compat/config.ts';

export const PluginFileEntry = z
  .strictObject({
    name: z.string().max(1024),
    /** Listing a plugin runs it unless it says otherwise. */
    enabled: z.boolean().default(true),
    config: z.record(z.string(), z.unknown()).default({}),
  })
  .superRefine((e, ctx) => {
    if (!isPluginName(e.name)) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: unknownPluginMessage(e.name) });
      return;
    }
    const def = PLUGINS[e.name];
    for (const [field, why] of Object.entries(def.removed)) {
      if (field in e.config) ctx.addIssue({ code: 'custom', path: ['config', field], message: why });
    }
    const r = def.schema.safeParse(e.config);
    if (!r.success) for (const i of r.error.issues) nest(ctx, ['config'], i);
  });

/** Reports a nested schema's issue under `prefix` (its message keeps naming unknown keys). */
function nest(ctx: z.RefinementCtx, prefix: PropertyKey[], i: z.core.$ZodIssue): void {
  const keys = i.code === 'unrecognized_keys' ? i.keys : [];
  if (keys.length > 0) {
    for (const k of keys) ctx.addIssue({ code: 'custom', path: [...prefix, ...i.path, k], message: 'unknown field' });
    return;
  }
  ctx.addIssue({ code: 'custom', path: [...prefix, ...i.path], message: i.message });
}

/** `client.compat`: the compat plugin's settings, with the removed option named with its replacements. */
const ClientCompat = z
  .record(z.string(), z.unknown())
  .superRefine((v, ctx) => {
    for (const [field, why] of Object.entries(PLUGINS.compat.removed)) {
      if (field in v) ctx.addIssue({ code: 'custom', path: [field], message: why });
    }
    const r = CompatConfig.safeParse(v);
    if (!r.success) for (const i of r.error.issues) nest(ctx, [], i);
  })
  .transform((v) => CompatConfig.parse(v));
export type PluginFileEntry = { name: PluginName; enabled: boolean; config: Record<string, unknown> };

export const PluginsFileConfig = z
  .array(PluginFileEntry)
  .max(100)
  .default([])
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((e, i) => {
      if (seen.has(e.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `${e.name} is listed twice` });
      seen.add(e.name);
    });
  })
  // Names were checked above; this narrows their type.
  .transform((list): PluginFileEntry[] =>
    list.flatMap((e) => (isPluginName(e.name) ? [{ name: e.name, enabled: e.enabled, config: e.config }] : [])),
  );

/** Client fields of the reference layout that are plugin settings here (kept out of the stored client settings). */
export const ClientPluginFields = {
  /** The logging plugin's switch. */
  enable_logging: z.boolean().optional(),
  /** The logging plugin's `disable_content_logging`. */
  disable_content_logging: z.boolean().optional(),
  /** The compat plugin's settings; it runs when one of them is on. */
  compat: ClientCompat.optional(),
};

interface ClientPluginValues {
  enable_logging?: boolean | undefined;
  disable_content_logging?: boolean | undefined;
  compat?: CompatConfig | undefined;
}

/** Where the client fields and `plugins[]` both configure one plugin, the file is refused: one place each. */
export function clientPluginConflicts(client: ClientPluginValues, plugins: readonly { name: string }[]): string[] {
  const named = new Set(plugins.map((p) => p.name));
  const out: string[] = [];
  if (named.has('logging')) {
    if (client.enable_logging !== undefined) out.push('enable_logging');
    if (client.disable_content_logging !== undefined) out.push('disable_content_logging');
  }
  if (named.has('compat') && client.compat !== undefined) out.push('compat');
  return out;
}

/** The plugin rows the client fields stand for, after `plugins[]`. */
export function pluginsFromClient(client: ClientPluginValues): PluginFileEntry[] {
  const out: PluginFileEntry[] = [];
  if (client.enable_logging !== undefined || client.disable_content_logging !== undefined) {
    out.push({
      name: 'logging',
      enabled: client.enable_logging ?? true,
      config:
        client.disable_content_logging === undefined ? {} : { disable_content_logging: client.disable_content_logging },
    });
  }
  if (client.compat !== undefined) {
    const c = client.compat;
    out.push({
      name: 'compat',
      enabled: c.convert_text_to_chat || c.convert_chat_to_responses || c.should_drop_params,
      config: { ...c },
    });
  }
  return out;
}
