import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ClientConfig } from '../../config/schema.ts';
import type { Runtime } from '../../runtime.ts';
import { ProxyConfigView } from '../../schemas/management-views.ts';
import { ConfigPutBody, FRAMEWORK_CONFIG_VIEW } from '../../state/services/client-config.ts';
import { ProxyConfigService } from '../../state/services/proxy-config.ts';
import { GATEWAY_VERSION } from '../../version.ts';
import { registerPricingRoutes } from './pricing.ts';
import { registerProxyConfigRoutes } from './proxy-config.ts';

const tags = ['Configuration'];

const FrameworkConfigView = z.strictObject({ pricing_url: z.null(), pricing_sync_interval: z.null() });
/** The stored settings and, as the reference shows it, the deprecated alias (always enforce_auth_on_inference). */
const ClientConfigView = ClientConfig.extend({
  enforce_governance_header: z.boolean().describe('deprecated: use enforce_auth_on_inference (always the same value)'),
});
const clientConfigView = (c: ClientConfig) => ({ ...c, enforce_governance_header: c.enforce_auth_on_inference });
const ConfigView = z.strictObject({
  client_config: ClientConfigView,
  framework_config: FrameworkConfigView.describe('no remote price sheet: prices are the shipped table and overrides'),
  proxy_config: ProxyConfigView,
  is_db_connected: z.boolean(),
  is_cache_connected: z.boolean().describe('Redis (or the in-process coordinator) answers'),
  is_logs_connected: z.boolean().describe('request logs live in the same database'),
  restart_required: z.strictObject({ required: z.boolean() }),
});
const ConfigPutView = z.strictObject({
  status: z.literal('success'),
  message: z.string(),
  client_config: ClientConfigView,
});

export function registerConfigRoutes(app: FastifyInstance, rt: Runtime): void {
  const proxy = new ProxyConfigService(rt.state.db, rt.state.box, (e) => rt.state.publish(e));
  app.get(
    '/version',
    {
      config: {
        openapi: {
          operationId: 'getVersion',
          summary: 'The gateway release',
          description: 'The release of the specification this gateway implements, as a JSON string (e.g. "1.5.0").',
          tags,
          responses: { 200: { description: 'The release', json: z.string() } },
        },
      },
    },
    async (_req, reply) => reply.type('application/json').send(JSON.stringify(GATEWAY_VERSION)),
  );
  app.get(
    '/config',
    {
      config: {
        openapi: {
          operationId: 'getConfig',
          summary: 'Get the configuration',
          description: 'The client settings, the outbound proxy (password redacted) and the stores’ state.',
          tags,
          responses: { 200: { description: 'The configuration', json: ConfigView } },
        },
      },
    },
    async () => {
      const client_config = clientConfigView(await rt.state.clientConfig.get());
      const cache = await rt.state.coord.healthy().catch(() => false);
      return {
        client_config,
        framework_config: FRAMEWORK_CONFIG_VIEW,
        proxy_config: await proxy.get(),
        // Both were just read from the database.
        is_db_connected: true,
        is_cache_connected: cache,
        is_logs_connected: true,
        // Every setting applies on every pod without a restart.
        restart_required: { required: false },
      };
    },
  );
  app.put(
    '/config',
    {
      config: {
        openapi: {
          operationId: 'updateConfig',
          summary: 'Replace the client settings',
          description:
            'Omitted client settings take their defaults; a body without `client_config` keeps them. The ' +
            'framework settings only take empty values (no remote price sheet); `auth_config` is refused.',
          tags,
          body: ConfigPutBody,
          responses: { 200: { description: 'The stored client settings', json: ConfigPutView } },
        },
      },
    },
    async (req) => ({
      status: 'success',
      message: 'configuration updated',
      client_config: clientConfigView(await rt.state.clientConfig.put(req.body, (m) => rt.logger.warn(m))),
    }),
  );
  registerProxyConfigRoutes(app, rt);
  registerPricingRoutes(app, rt);
}
