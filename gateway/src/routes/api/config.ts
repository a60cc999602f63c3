import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';

export function registerConfigRoutes(app: FastifyInstance, rt: Runtime): void {
  app.get('/config', async () => ({ client_config: await rt.state.clientConfig.get() }));
  app.put('/config', async (req) => ({ client_config: await rt.state.clientConfig.put(req.body) }));
}
