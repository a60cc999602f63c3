// /api/governance/{teams,customers,pricing-overrides,routing-rules}: the same thin CRUD adapters over each
// service: list (`{<listKey>, total, count}`), create (200 as in the reference; pricing overrides 201), get,
// PUT partial update, delete (`{deleted: id}`).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { documented, type ResponseDoc } from '../../../http/openapi.ts';
import type { Runtime } from '../../../runtime.ts';
import {
  CustomerList,
  CustomerView,
  Deleted,
  IdParams,
  PricingOverrideList,
  PricingOverrideView,
  RoutingRuleList,
  RoutingRuleView,
  TeamList,
  TeamListQuery,
  TeamView,
} from '../../../schemas/api-views.ts';
import type { Actor } from '../../../state/index.ts';
import { CustomerInput, TeamInput } from '../../../state/services/governance/owners.ts';
import { PricingOverrideInput } from '../../../state/services/governance/pricing-overrides.ts';
import { ROUTING_RULE_MERGE, RoutingRuleInput } from '../../../state/services/governance/routing-rules.ts';
import { type MergeRules, partialUpdate, type UpdateOptions } from '../../../state/services/partial.ts';

type P = { Params: { id: string } };
const API: Actor = { source: 'api' };

/** What a governance service offers the REST API; services that record no actor ignore the argument. */
export interface CrudService {
  list(): Promise<unknown[]>;
  get(id: string): Promise<unknown>;
  create(body: unknown, actor: Actor): Promise<unknown>;
  update(id: string, body: unknown, actor: Actor, opts?: UpdateOptions): Promise<unknown>;
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
  /** The create's status: 200 in the reference, 201 for pricing overrides there. */
  created?: 200 | 201;
  /** How the view maps back onto the input for partial updates. */
  merge: MergeRules;
  /** Query parameters the list filters by (documented; `filter` applies them). */
  listQuery?: z.ZodObject;
  filter?: (items: Record<string, unknown>[], query: Record<string, unknown>) => Record<string, unknown>[];
}

/** The fields an owner's view adds to its input. */
export const OWNER_MERGE: MergeRules = {
  readOnly: ['source', 'owner_ref', 'created_at', 'updated_at'],
  singular: { budget: 'budgets' },
};

/** A PUT body's documentation: every field of the input optional (a partial update). */
export function partialBody(input: z.ZodType): z.ZodType {
  const obj = input instanceof z.ZodPipe ? input.in : input;
  return obj instanceof z.ZodObject ? z.strictObject(obj.shape).partial() : input;
}

/** Runs a PUT as a partial update of `svc`'s row `id`. */
export function patchRow(svc: CrudService, id: string, body: unknown, merge: MergeRules): Promise<unknown> {
  return partialUpdate(
    async () => (await svc.get(id)) as Record<string, unknown>,
    (merged, opts) => svc.update(id, merged, API, opts),
    body,
    merge,
  );
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
      ...(d.listQuery ? { querystring: d.listQuery } : {}),
      responses: { 200: { description: `Every ${d.label}`, json: d.list } },
    }),
    async (req) => {
      const all = (await svc.list()) as Record<string, unknown>[];
      const items = d.filter ? d.filter(all, (req.query ?? {}) as Record<string, unknown>) : all;
      return { [d.listKey]: items, total: items.length, count: items.length };
    },
  );
  app.post(
    base,
    doc({
      operationId: `create${d.noun}`,
      summary: `Create a ${d.label}`,
      body: d.input,
      responses: { [d.created ?? 200]: { description: `The ${d.label}`, json: d.view, links: byId(d.noun) } },
      errors: [409],
    }),
    async (req, reply) => {
      reply.code(d.created ?? 200);
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
      summary: `Update a ${d.label}`,
      description: 'Changes the fields the body names and keeps the others; null clears a field that takes null.',
      params: IdParams,
      body: partialBody(d.input),
      responses: one,
      errors: [409],
    }),
    async (req) => patchRow(svc, req.params.id, req.body, d.merge),
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
  registerCrudRoutes(app, '/governance/teams', rt.state.teams, {
    listKey: 'teams',
    noun: 'Team',
    label: 'team',
    plural: 'Teams',
    input: TeamInput,
    view: TeamView,
    list: TeamList,
    merge: OWNER_MERGE,
    listQuery: TeamListQuery,
    filter: (items, q) => {
      const customer = q['customer_id'];
      return typeof customer === 'string' && customer !== ''
        ? items.filter((t) => t['customer_id'] === customer)
        : items;
    },
  });
  registerCrudRoutes(app, '/governance/customers', rt.state.customers, {
    listKey: 'customers',
    noun: 'Customer',
    label: 'customer',
    plural: 'Customers',
    input: CustomerInput,
    view: CustomerView,
    list: CustomerList,
    merge: OWNER_MERGE,
  });
  registerCrudRoutes(app, '/governance/pricing-overrides', rt.state.pricingOverrides, {
    listKey: 'pricing_overrides',
    noun: 'PricingOverride',
    label: 'pricing override',
    plural: 'PricingOverrides',
    input: PricingOverrideInput,
    view: PricingOverrideView,
    list: PricingOverrideList,
    created: 201,
    merge: { readOnly: ['created_at', 'updated_at'] },
  });
  registerCrudRoutes(app, '/governance/routing-rules', rt.state.routingRules, {
    listKey: 'routing_rules',
    noun: 'RoutingRule',
    label: 'routing rule',
    plural: 'RoutingRules',
    input: RoutingRuleInput,
    view: RoutingRuleView,
    list: RoutingRuleList,
    merge: ROUTING_RULE_MERGE,
  });
}
