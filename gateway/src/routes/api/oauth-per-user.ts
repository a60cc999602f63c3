// /api/oauth/per-user/* (admin): placeholder until it lands.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';

export function registerPerUserFlowRoutes(_app: FastifyInstance, _rt: Runtime): void {}
