// /api/oauth/config/* (server-level OAuth, admin): placeholder until it lands.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';

export function registerOAuthRoutes(_app: FastifyInstance, _rt: Runtime): void {}
