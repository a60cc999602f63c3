// /api/governance/teams: thin adapters over the team service. Customers share the same routes (customers.ts).
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../../runtime.ts';
import type { OwnerService } from '../../../state/services/governance/owners.ts';

type P = { Params: { id: string } };
const API = { source: 'api' } as const;

export function registerTeamRoutes(app: FastifyInstance, rt: Runtime): void {
  registerOwnerRoutes(app, '/api/governance/teams', 'teams', rt.state.teams);
}

/** CRUD for one owner kind: list (`{<listKey>, total}`), create (201), get, PUT replace, delete. */
export function registerOwnerRoutes(app: FastifyInstance, base: string, listKey: string, svc: OwnerService): void {
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
