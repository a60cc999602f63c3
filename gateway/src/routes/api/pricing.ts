// POST /api/pricing/force-sync: every pod reads its pricing again. Prices come from the table shipped with the
// gateway and the pricing overrides in the database (there is no remote price sheet to fetch): the overrides are
// reloaded on every pod and each pod's price cache starts over.
import type { FastifyInstance } from 'fastify';
import { PRICE_TABLE } from '../../governance/pricing/table.ts';
import { documented } from '../../http/openapi.ts';
import type { Runtime } from '../../runtime.ts';
import { SuccessView } from '../../schemas/management-views.ts';

const doc = documented('Configuration');

export function registerPricingRoutes(app: FastifyInstance, rt: Runtime): void {
  app.post(
    '/pricing/force-sync',
    doc({
      operationId: 'forceSyncPricing',
      summary: 'Reload pricing on every pod',
      description:
        'Reloads the pricing overrides from the database on this pod before answering and tells the other pods ' +
        'to do the same; the price table is the one shipped with the gateway.',
      responses: { 200: { description: 'Reloaded', json: SuccessView } },
    }),
    async () => {
      await rt.state.publish({ kind: 'governance' });
      const overrides = rt.state.snapshot.governance.pricingOverrides.length;
      const models = Object.values(PRICE_TABLE).reduce((n, t) => n + Object.keys(t).length, 0);
      return {
        status: 'success',
        message: `pricing reloaded on every pod: ${overrides} pricing overrides over the shipped table of ${models} models`,
      };
    },
  );
}
