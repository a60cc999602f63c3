import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Runtime } from '../../runtime.ts';
import { ClientConfigPut, ClientConfigView } from '../../schemas/api-views.ts';
import { GATEWAY_VERSION } from '../../version.ts';

const tags = ['Configuration'];

export function registerConfigRoutes(app: FastifyInstance, rt: Runtime): void {
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
