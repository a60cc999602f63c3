// /api/mcp/* (MCP clients): placeholder until it lands.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';

export function registerMcpClientRoutes(_app: FastifyInstance, _rt: Runtime): void {}
