// the per-user consent page (public): placeholder until it lands.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';

export function registerConsentRoutes(_app: FastifyInstance, _rt: Runtime): void {}
