// GET /openapi.json: the API document, built once when the app is ready (every route is registered by then)
// from the route census, so a route added later is in it without edits here.
import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../http/openapi.ts';
import type { RouteRecord } from '../http/route-family.ts';
import { OpenApiView } from '../schemas/api-views.ts';

export function registerOpenApiRoute(app: FastifyInstance, routes: () => readonly RouteRecord[]): void {
  let text = '';
  app.addHook('onReady', async () => {
    text = JSON.stringify(buildOpenApiDocument(routes()));
  });
  const openapi = {
    operationId: 'getOpenApiDocument',
    summary: 'This API document (OpenAPI 3.1)',
    tags: ['Health'],
    responses: { 200: { description: 'The OpenAPI document', json: OpenApiView } },
  };
  app.get('/openapi.json', { config: { openapi } }, async (_req, reply) => {
    reply.type('application/json; charset=utf-8');
    return text;
  });
}
