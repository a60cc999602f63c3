// GET/PUT /api/proxy-config: the outbound proxy provider calls go through (state/services/proxy-config.ts).
import type { FastifyInstance } from 'fastify';
import { documented } from '../../http/openapi.ts';
import type { Runtime } from '../../runtime.ts';
import { ProxyConfigView, SuccessView } from '../../schemas/management-views.ts';
import { ProxyConfigInput, ProxyConfigService } from '../../state/services/proxy-config.ts';

const doc = documented('Configuration');

export function registerProxyConfigRoutes(app: FastifyInstance, rt: Runtime): void {
  const svc = new ProxyConfigService(rt.state.db, rt.state.box, (e) => rt.state.publish(e));
  app.get(
    '/proxy-config',
    doc({
      operationId: 'getProxyConfig',
      summary: 'Get the outbound proxy settings (password redacted)',
      responses: { 200: { description: 'The proxy settings', json: ProxyConfigView } },
    }),
    async () => svc.get(),
  );
  app.put(
    '/proxy-config',
    doc({
      operationId: 'updateProxyConfig',
      summary: 'Replace the outbound proxy settings',
      description:
        'Provider calls of every pod go through the proxy while `enabled` (hosts in `no_proxy` directly). A ' +
        'password omitted or sent back redacted keeps the stored one; null or "" removes it.',
      body: ProxyConfigInput,
      responses: {
        200: { description: 'Stored; `proxy_config` is the new state', json: SuccessView },
      },
    }),
    async (req) => {
      const proxy_config = await svc.put(req.body);
      return { status: 'success', message: 'proxy configuration updated', proxy_config };
    },
  );
}
