// /mcp, the gateway as an MCP server: placeholder until it lands.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../runtime.ts';

/** Registers the /mcp family (its own credential scheme). */
export function registerMcpServerFamily(_app: FastifyInstance, _rt: Runtime): void {}
