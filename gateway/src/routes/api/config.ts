import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';
import { ClientConfigPut, ClientConfigView } from '../../schemas/api-views.ts';

const tags = ['Configuration'];

export function registerConfigRoutes(app: FastifyInstance, rt: Runtime): void {
  app.get(
    '/config',
    {
      config: {
        openapi: {
          operationId: 'getConfig',
          summary: 'Get the client settings',
          tags,
          responses: { 200: { description: 'The client settings', json: ClientConfigView } },
        },
      },
    },
    async () => ({ client_config: await rt.state.clientConfig.get() }),
  );
  app.put(
    '/config',
    {
      config: {
        openapi: {
          operationId: 'updateConfig',
          summary: 'Replace the client settings',
          description: 'Omitted fields take their defaults.',
          tags,
          body: ClientConfigPut,
          responses: { 200: { description: 'The stored client settings', json: ClientConfigView } },
        },
      },
    },
    async (req) => ({ client_config: await rt.state.clientConfig.put(req.body) }),
  );
}
