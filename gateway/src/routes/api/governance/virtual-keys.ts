// /api/governance/virtual-keys and /api/governance/budgets: thin adapters over the virtual-key and budget services.
// (The self-service /api/governance/virtual-keys/quota, authenticated by x-gateway-vk, is registered elsewhere.)
import type { FastifyInstance } from 'fastify';
import type { BudgetService } from '../../../state/services/governance/budgets.ts';
import type { VirtualKeyService } from '../../../state/services/governance/virtual-keys.ts';

type I = { Params: { id: string } };
const API = { source: 'api' } as const;

/** What these routes need of the Runtime. */
export interface VirtualKeyRoutesRuntime {
  state: { virtualKeys: VirtualKeyService; budgets: BudgetService };
}

export function registerVirtualKeyRoutes(app: FastifyInstance, rt: VirtualKeyRoutesRuntime): void {
  const svc = rt.state.virtualKeys;

  app.get('/governance/virtual-keys', async () => {
    const virtual_keys = await svc.list();
    return { virtual_keys, total: virtual_keys.length };
  });
  app.post('/governance/virtual-keys', async (req, reply) => {
    // The only response that carries the full value: keep it out of every cache.
    reply.code(201).header('cache-control', 'no-store');
    return svc.create(req.body, API);
  });
  app.get<I>('/governance/virtual-keys/:id', async (req) => svc.get(req.params.id));
  app.put<I>('/governance/virtual-keys/:id', async (req) => svc.update(req.params.id, req.body, API));
  app.delete<I>('/governance/virtual-keys/:id', async (req) => {
    await svc.delete(req.params.id, API);
    return { deleted: req.params.id };
  });

  app.get('/governance/budgets', async () => {
    const budgets = await rt.state.budgets.list();
    return { budgets, total: budgets.length };
  });
}
