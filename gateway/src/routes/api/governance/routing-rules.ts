// /api/governance/routing-rules: thin adapters over the routing rule service.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../../runtime.ts';

type P = { Params: { id: string } };
const BASE = '/api/governance/routing-rules';

export function registerRoutingRuleRoutes(app: FastifyInstance, rt: Runtime): void {
  const svc = rt.state.routingRules;
  app.get(BASE, async () => {
    const routing_rules = await svc.list();
    return { routing_rules, total: routing_rules.length };
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
