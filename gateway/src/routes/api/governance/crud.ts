// /api/governance/{teams,customers,pricing-overrides,routing-rules}: the same thin CRUD adapters over each
// service: list (`{<listKey>, total}`), create (201), get, PUT replace, delete (`{deleted: id}`).
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { documented, type ResponseDoc } from '../../../http/openapi.ts';
import type { Runtime } from '../../../runtime.ts';
import {
  CustomerList,
  Deleted,
  IdParams,
  OwnerView,
  PricingOverrideList,
  PricingOverrideView,
  RoutingRuleList,
  RoutingRuleView,
  TeamList,
} from '../../../schemas/api-views.ts';
import type { Actor } from '../../../state/index.ts';
import { OwnerInput } from '../../../state/services/governance/owners.ts';
import { PricingOverrideInput } from '../../../state/services/governance/pricing-overrides.ts';
import { RoutingRuleInput } from '../../../state/services/governance/routing-rules.ts';

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

/** How one collection is documented: its names (operation ids `listTeams`, `getTeam`, ...) and schemas. */
export interface CrudDocs {
  listKey: string;
  /** `Team`: operation ids and summaries. */
  noun: string;
  plural: string;
  /** `team`, `pricing override`: summaries. */
  label: string;
  input: z.ZodType;
  view: z.ZodType;
  list: z.ZodType;
}

const doc = documented('Governance');

/** The operations that take the id of a row just created (OpenAPI links). */
export function byId(noun: string): NonNullable<ResponseDoc['links']> {
  const parameters = { id: '$response.body#/id' };
  return {
    [`get${noun}`]: { operationId: `get${noun}`, parameters },
    [`update${noun}`]: { operationId: `update${noun}`, parameters },
    [`delete${noun}`]: { operationId: `delete${noun}`, parameters },
  };
}

export function registerCrudRoutes(app: FastifyInstance, base: string, svc: CrudService, d: CrudDocs): void {
  const one = { 200: { description: `The ${d.label}`, json: d.view } };
  app.get(
    base,
    doc({
      operationId: `list${d.plural}`,
      summary: `List ${d.label}s`,
      responses: { 200: { description: `Every ${d.label}`, json: d.list } },
    }),
    async () => {
      const items = await svc.list();
      return { [d.listKey]: items, total: items.length };
    },
  );
  app.post(
    base,
    doc({
      operationId: `create${d.noun}`,
      summary: `Create a ${d.label}`,
      body: d.input,
      responses: { 201: { description: `The ${d.label}`, json: d.view, links: byId(d.noun) } },
      errors: [409],
    }),
    async (req, reply) => {
      reply.code(201);
      return svc.create(req.body, API);
    },
  );
  app.get<P>(
    `${base}/:id`,
    doc({ operationId: `get${d.noun}`, summary: `Get a ${d.label}`, params: IdParams, responses: one }),
    async (req) => svc.get(req.params.id),
  );
  app.put<P>(
    `${base}/:id`,
    doc({
      operationId: `update${d.noun}`,
      summary: `Replace a ${d.label}`,
      params: IdParams,
      body: d.input,
      responses: one,
      errors: [409],
    }),
    async (req) => svc.update(req.params.id, req.body, API),
  );
  app.delete<P>(
    `${base}/:id`,
    doc({
      operationId: `delete${d.noun}`,
      summary: `Delete a ${d.label}`,
      params: IdParams,
      responses: { 200: { description: 'Deleted', json: Deleted } },
      errors: [409],
    }),
    async (req) => {
      await svc.delete(req.params.id, API);
      return { deleted: req.params.id };
    },
  );
}

export function registerGovernanceCrudRoutes(app: FastifyInstance, rt: Runtime): void {
  const owner = { input: OwnerInput, view: OwnerView };
  registerCrudRoutes(app, '/governance/teams', rt.state.teams, {
    listKey: 'teams',
    noun: 'Team',
    label: 'team',
    plural: 'Teams',
    list: TeamList,
    ...owner,
  });
  registerCrudRoutes(app, '/governance/customers', rt.state.customers, {
    listKey: 'customers',
    noun: 'Customer',
    label: 'customer',
    plural: 'Customers',
    list: CustomerList,
    ...owner,
  });
  registerCrudRoutes(app, '/governance/pricing-overrides', rt.state.pricingOverrides, {
    listKey: 'pricing_overrides',
    noun: 'PricingOverride',
    label: 'pricing override',
    plural: 'PricingOverrides',
    input: PricingOverrideInput,
    view: PricingOverrideView,
    list: PricingOverrideList,
  });
  registerCrudRoutes(app, '/governance/routing-rules', rt.state.routingRules, {
    listKey: 'routing_rules',
    noun: 'RoutingRule',
    label: 'routing rule',
    plural: 'RoutingRules',
    input: RoutingRuleInput,
    view: RoutingRuleView,
    list: RoutingRuleList,
  });
}
