// GET /api/governance/virtual-keys/quota: self-service for the key in x-gateway-vk (authenticated by its
// family's virtual_key scheme): its budgets (and its provider configs', team's or customer's) and rate
// limits, with usage.
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../../http/errors.ts';
import type { Runtime } from '../../../runtime.ts';
import { QuotaView } from '../../../schemas/api-views.ts';

export function registerQuotaRoute(app: FastifyInstance, rt: Runtime): void {
  const openapi = {
    operationId: 'getVirtualKeyQuota',
    summary: 'The calling virtual key’s budgets and rate limits, with usage',
    tags: ['Governance'],
    responses: { 200: { description: 'Budgets and rate limits of the key in x-gateway-vk', json: QuotaView } },
  };
  app.get('/governance/virtual-keys/quota', { config: { openapi } }, async (request) => {
    const p = request.principal;
    if (p?.kind !== 'virtual_key')
      throw new GatewayError('authentication_failed', 'send the virtual key in x-gateway-vk');
    const vk = p.vk;
    const key = await rt.state.virtualKeys.get(vk.id);
    const owners = new Set<string>([vk.id, ...vk.provider_configs.map((c) => c.id)]);
    if (vk.team_id) owners.add(vk.team_id);
    if (vk.customer_id) owners.add(vk.customer_id);
    const rateLimits = (await rt.state.rateLimits.list()).filter((e) => owners.has(String(e['owner_id'])));
    const team = vk.team_id ? await rt.state.teams.get(vk.team_id) : undefined;
    const customer = vk.customer_id ? await rt.state.customers.get(vk.customer_id) : undefined;
    return {
      virtual_key: { id: vk.id, name: vk.name },
      budgets: key['budgets'] ?? [],
      provider_configs: (Array.isArray(key['provider_configs']) ? key['provider_configs'] : []).map(
        (c: Record<string, unknown>) => ({ provider: c['provider'], budgets: c['budgets'] ?? [] }),
      ),
      ...(team ? { team: { id: team['id'], name: team['name'], budgets: team['budgets'] ?? [] } } : {}),
      ...(customer
        ? { customer: { id: customer['id'], name: customer['name'], budgets: customer['budgets'] ?? [] } }
        : {}),
      rate_limits: rateLimits,
    };
  });
}
