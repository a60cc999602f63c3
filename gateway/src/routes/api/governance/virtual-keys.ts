// /api/governance/virtual-keys and /api/governance/budgets: thin adapters over the virtual-key and budget services.
// (The self-service /api/governance/virtual-keys/quota, authenticated by x-gateway-vk, is registered elsewhere.)
import type { FastifyInstance } from 'fastify';
import { documented } from '../../../http/openapi.ts';
import {
  BudgetList,
  Deleted,
  IdParams,
  VirtualKeyCreated,
  VirtualKeyList,
  VirtualKeyView,
} from '../../../schemas/api-views.ts';
import type { BudgetService } from '../../../state/services/governance/budgets.ts';
import { VirtualKeyInput } from '../../../state/services/governance/validate.ts';
import type { VirtualKeyService } from '../../../state/services/governance/virtual-keys.ts';
import { partialUpdate } from '../../../state/services/partial.ts';
import { byId, partialBody } from './crud.ts';

/** The view's fields that are not inputs. */
const VIRTUAL_KEY_MERGE = {
  readOnly: ['value_hint', 'source', 'owner_ref', 'created_at', 'updated_at'],
  exclusive: [['team_id', 'customer_id']],
};

type I = { Params: { id: string } };
const API = { source: 'api' } as const;

/** What these routes need of the Runtime. */
export interface VirtualKeyRoutesRuntime {
  state: { virtualKeys: VirtualKeyService; budgets: BudgetService };
}

const doc = documented('Governance');
const one = { 200: { description: 'The virtual key (never its value)', json: VirtualKeyView } };

export function registerVirtualKeyRoutes(app: FastifyInstance, rt: VirtualKeyRoutesRuntime): void {
  const svc = rt.state.virtualKeys;

  app.get(
    '/governance/virtual-keys',
    doc({
      operationId: 'listVirtualKeys',
      summary: 'List virtual keys',
      responses: { 200: { description: 'Every virtual key', json: VirtualKeyList } },
    }),
    async () => {
      const virtual_keys = await svc.list();
      return { virtual_keys, total: virtual_keys.length, count: virtual_keys.length };
    },
  );
  app.post(
    '/governance/virtual-keys',
    doc({
      operationId: 'createVirtualKey',
      summary: 'Create a virtual key',
      description: 'The answer is the only one that carries the full value (`sk-vk-...`).',
      body: VirtualKeyInput,
      responses: {
        200: { description: 'The virtual key with its value', json: VirtualKeyCreated, links: byId('VirtualKey') },
      },
      errors: [409],
    }),
    async (req, reply) => {
      // The only response that carries the full value: keep it out of every cache.
      reply.header('cache-control', 'no-store');
      return svc.create(req.body, API);
    },
  );
  app.get<I>(
    '/governance/virtual-keys/:id',
    doc({ operationId: 'getVirtualKey', summary: 'Get a virtual key', params: IdParams, responses: one }),
    async (req) => svc.get(req.params.id),
  );
  app.put<I>(
    '/governance/virtual-keys/:id',
    doc({
      operationId: 'updateVirtualKey',
      summary: 'Update a virtual key',
      description:
        'Changes the fields the body names and keeps the others (`{"is_active": false}` deactivates); a list ' +
        '(`provider_configs`, `budgets`, `mcp_configs`) is replaced whole; budgets sent with their id keep their ' +
        'usage; `value` cannot be sent.',
      params: IdParams,
      body: partialBody(VirtualKeyInput),
      responses: one,
      errors: [409],
    }),
    async (req) =>
      partialUpdate(
        () => svc.get(req.params.id),
        (merged, opts) => svc.update(req.params.id, merged, API, opts),
        req.body,
        VIRTUAL_KEY_MERGE,
      ),
  );
  app.delete<I>(
    '/governance/virtual-keys/:id',
    doc({
      operationId: 'deleteVirtualKey',
      summary: 'Delete a virtual key',
      params: IdParams,
      responses: { 200: { description: 'Deleted', json: Deleted } },
      errors: [409],
    }),
    async (req) => {
      await svc.delete(req.params.id, API);
      return { deleted: req.params.id };
    },
  );

  app.get(
    '/governance/budgets',
    doc({
      operationId: 'listBudgets',
      summary: 'List every budget with its owner and usage',
      responses: { 200: { description: 'Every budget', json: BudgetList } },
    }),
    async () => {
      const budgets = await rt.state.budgets.list();
      return { budgets, total: budgets.length };
    },
  );
}
