// /api/governance/customers: the same routes as teams, over the customer service.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../../runtime.ts';
import { registerOwnerRoutes } from './teams.ts';

export function registerCustomerRoutes(app: FastifyInstance, rt: Runtime): void {
  registerOwnerRoutes(app, '/api/governance/customers', 'customers', rt.state.customers);
}
