// POST /v1/mcp/tool/execute: placeholder until it lands.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';

export function registerToolExecuteRoute(_app: FastifyInstance, _rt: Runtime): void {}
