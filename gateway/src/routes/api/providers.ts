// /api/providers and /api/providers/{provider}/keys: thin adapters over the provider service.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';

type P = { Params: { provider: string } };
type K = { Params: { provider: string; key_id: string } };
const API = { source: 'api' } as const;

export function registerProviderRoutes(app: FastifyInstance, rt: Runtime): void {
  const svc = rt.state.providers;

  app.get('/providers', async () => {
    const providers = await svc.list();
    return { providers, total: providers.length };
  });
  app.post('/providers', async (req, reply) => {
    reply.code(201);
    return svc.create(req.body, API);
  });
  app.get<P>('/providers/:provider', async (req) => svc.get(req.params.provider));
  app.put<P>('/providers/:provider', async (req) => svc.update(req.params.provider, req.body, API));
  app.delete<P>('/providers/:provider', async (req) => {
    await svc.delete(req.params.provider, API);
    return { deleted: req.params.provider };
  });

  app.get<P>('/providers/:provider/keys', async (req) => ({ keys: await svc.listKeys(req.params.provider) }));
  app.post<P>('/providers/:provider/keys', async (req, reply) => {
    reply.code(201);
    return svc.addKey(req.params.provider, req.body, API);
  });
  app.get<K>('/providers/:provider/keys/:key_id', async (req) => svc.getKey(req.params.provider, req.params.key_id));
  app.put<K>('/providers/:provider/keys/:key_id', async (req) =>
    svc.updateKey(req.params.provider, req.params.key_id, req.body, API),
  );
  app.delete<K>('/providers/:provider/keys/:key_id', async (req) => {
    await svc.deleteKey(req.params.provider, req.params.key_id, API);
    return { deleted: req.params.key_id };
  });
}
