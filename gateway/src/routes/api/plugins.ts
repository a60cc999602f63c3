// /api/plugins (reference paths and shapes): thin adapters over the plugin service (what is stored) and this
// pod's plugin host (what runs, and its status). Built-in plugins only; each is listed whether stored or not.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { documented } from '../../http/openapi.ts';
import { PLUGIN_NAMES, type PluginName } from '../../plugins/catalog.ts';
import type { EffectivePlugin, PluginHost } from '../../plugins/host.ts';
import { PathParam } from '../../schemas/api-views.ts';
import type { State } from '../../state/index.ts';
import { configHash, type PluginRow, pluginName } from '../../state/services/plugins/index.ts';

type N = { Params: { name: string } };

const Status = z.strictObject({
  name: z.string(),
  status: z.enum(['active', 'disabled', 'error']),
  logs: z.array(z.string()),
  types: z.array(z.enum(['llm', 'mcp', 'http', 'observability'])),
});

const PluginView = z
  .strictObject({
    id: z.int().optional().describe('Row id; absent while the plugin runs with its defaults'),
    name: z.enum(PLUGIN_NAMES),
    actualName: z.enum(PLUGIN_NAMES),
    enabled: z.boolean(),
    config: z.record(z.string(), z.unknown()).describe('The settings in effect (defaults filled in)'),
    isCustom: z.literal(false),
    source: z.enum(['default', 'api', 'config_file']).describe('Who set the settings in effect'),
    status: Status,
    version: z.int().describe('Incremented on every change of the stored settings; 0 for defaults'),
    config_hash: z.string(),
    created_at: z.string().optional(),
    updated_at: z.string().optional(),
  })
  .meta({ id: 'Plugin' });
const PluginList = z.strictObject({ plugins: z.array(PluginView), count: z.int() });
const PluginChanged = z.strictObject({ message: z.string(), plugin: PluginView });
const Message = z.strictObject({ message: z.string() });

const CreateBody = z.strictObject({
  name: z.enum(PLUGIN_NAMES),
  enabled: z.boolean().optional().describe('Default true'),
  config: z.record(z.string(), z.unknown()).optional().describe("Validated by the plugin's own schema"),
});
const UpdateBody = z.strictObject({
  enabled: z.boolean().optional(),
  config: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Replaces the stored settings (omitted fields: defaults)'),
});
const NameParams = z.object({ name: PathParam });

const doc = documented('Plugins');

export interface PluginRoutesRuntime {
  state: Pick<State, 'plugins'>;
  plugins: PluginHost;
}

export function registerPluginRoutes(app: FastifyInstance, rt: PluginRoutesRuntime): void {
  const svc = rt.state.plugins;
  const view = (p: EffectivePlugin<PluginName>) => {
    const row: PluginRow | undefined = p.row;
    return {
      ...(row ? { id: row.id } : {}),
      name: p.name,
      actualName: p.name,
      enabled: p.enabled,
      config: p.config,
      isCustom: false as const,
      source: row?.source ?? ('default' as const),
      status: rt.plugins.status(p.name),
      version: row?.version ?? 0,
      config_hash: row?.config_hash ?? configHash(p.config),
      ...(row ? { created_at: row.created_at, updated_at: row.updated_at } : {}),
    };
  };
  /** The stored rows read now (not this pod's snapshot), so an answer reflects the write just made. */
  const current = async () => rt.plugins.effective(await svc.rows());

  app.get(
    '/plugins',
    doc({
      operationId: 'listPlugins',
      summary: 'List the plugins',
      description:
        'Every built-in plugin with the settings in effect and its status; unconfigured ones run with defaults.',
      responses: { 200: { description: 'The plugins', json: PluginList } },
    }),
    async () => {
      const all = await current();
      const plugins = PLUGIN_NAMES.map((n) => view(all[n]));
      return { plugins, count: plugins.length };
    },
  );
  app.post(
    '/plugins',
    doc({
      operationId: 'createPlugin',
      summary: 'Configure a plugin',
      description: 'Stores settings for a built-in plugin that has none stored yet (409 otherwise: use PUT).',
      body: CreateBody,
      responses: { 201: { description: 'The plugin as configured', json: PluginChanged } },
      errors: [409],
    }),
    async (req, reply) => {
      const row = await svc.create(req.body);
      reply.code(201);
      return { message: `plugin ${row.name} configured`, plugin: view((await current())[row.name]) };
    },
  );
  app.get<N>(
    '/plugins/:name',
    doc({
      operationId: 'getPlugin',
      summary: 'Get a plugin',
      params: NameParams,
      responses: { 200: { description: 'The plugin', json: PluginView } },
      errors: [404],
    }),
    async (req) => view((await current())[pluginName(req.params.name)]),
  );
  app.put<N>(
    '/plugins/:name',
    doc({
      operationId: 'updatePlugin',
      summary: 'Update a plugin',
      description:
        'Partial update: `enabled` and/or `config` (which replaces the stored settings). Applied on every pod.',
      params: NameParams,
      body: UpdateBody,
      responses: { 200: { description: 'The plugin as updated', json: PluginChanged } },
      errors: [404],
    }),
    async (req) => {
      const row = await svc.update(req.params.name, req.body);
      return { message: `plugin ${row.name} updated`, plugin: view((await current())[row.name]) };
    },
  );
  app.delete<N>(
    '/plugins/:name',
    doc({
      operationId: 'deletePlugin',
      summary: 'Reset a plugin to its defaults',
      description: 'Built-in plugins cannot be removed: their stored settings are forgotten and the defaults apply.',
      params: NameParams,
      responses: { 200: { description: 'Reset', json: Message } },
      errors: [404],
    }),
    async (req) => {
      const { removed } = await svc.reset(req.params.name);
      const name = req.params.name;
      return {
        message: removed ? `plugin ${name} reset to its defaults` : `plugin ${name} already runs with its defaults`,
      };
    },
  );
}
