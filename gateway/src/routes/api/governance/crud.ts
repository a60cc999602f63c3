// /api/governance/{teams,customers,pricing-overrides,routing-rules}: the same thin CRUD adapters over each
// service: list (`{<listKey>, total}`), create (201), get, PUT replace, delete (`{deleted: id}`).
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../../runtime.ts';
import type { Actor } from '../../../state/index.ts';

type P = { Params: { id: string } };
const API: Actor = { source: 'api' };

/** What a governance service offers the REST API; services that record no actor ignore the argument. */
export interface CrudService {
  list(): Promise<unknown[]>;
  get(id: string): Promise<unknown>;
  create(body: unknown, actor: Actor): Promise<unknown>;
  update(id: string, body: unknown, actor: Actor): Promise<unknown>;
  delete(id: string, actor: Actor): Promise<void>;
}

export function registerCrudRoutes(app: FastifyInstance, base: string, listKey: string, svc: CrudService): void {
  app.get(base, async () => {
    const items = await svc.list();
    return { [listKey]: items, total: items.length };
  });
  app.post(base, async (req, reply) => {
    reply.code(201);
    return svc.create(req.body, API);
  });
  app.get<P>(`${base}/:id`, async (req) => svc.get(req.params.id));
  app.put<P>(`${base}/:id`, async (req) => svc.update(req.params.id, req.body, API));
  app.delete<P>(`${base}/:id`, async (req) => {
    await svc.delete(req.params.id, API);
    return { deleted: req.params.id };
  });
}

export function registerGovernanceCrudRoutes(app: FastifyInstance, rt: Runtime): void {
  registerCrudRoutes(app, '/governance/teams', 'teams', rt.state.teams);
  registerCrudRoutes(app, '/governance/customers', 'customers', rt.state.customers);
  registerCrudRoutes(app, '/governance/pricing-overrides', 'pricing_overrides', rt.state.pricingOverrides);
  registerCrudRoutes(app, '/governance/routing-rules', 'routing_rules', rt.state.routingRules);
}
