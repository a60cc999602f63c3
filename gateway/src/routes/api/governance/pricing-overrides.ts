// /api/governance/pricing-overrides: thin adapters over the pricing override service.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../../runtime.ts';

type P = { Params: { id: string } };
const BASE = '/api/governance/pricing-overrides';

export function registerPricingOverrideRoutes(app: FastifyInstance, rt: Runtime): void {
  const svc = rt.state.pricingOverrides;
  app.get(BASE, async () => {
    const pricing_overrides = await svc.list();
    return { pricing_overrides, total: pricing_overrides.length };
  });
  app.post(BASE, async (req, reply) => {
    reply.code(201);
    return svc.create(req.body);
  });
  app.get<P>(`${BASE}/:id`, async (req) => svc.get(req.params.id));
  app.put<P>(`${BASE}/:id`, async (req) => svc.update(req.params.id, req.body));
  app.delete<P>(`${BASE}/:id`, async (req) => {
    await svc.delete(req.params.id);
    return { deleted: req.params.id };
  });
}
