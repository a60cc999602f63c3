// /api/oauth/callback (public browser redirect target): placeholder until it lands.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';

export function registerOAuthCallbackRoutes(_app: FastifyInstance, _rt: Runtime): void {}
