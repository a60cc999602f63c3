// GET /openapi.json: the API document, built from the route census by the first request that asks for it (every
// route is registered once the app is ready), so a route added later is in it without edits here. The ~4 MB text
// is not kept for the life of the process: it stays behind a WeakRef, so the next GC may take it back and a
// later request builds it again (docs/decisions.md: the figures).
import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../http/openapi.ts';
import type { RouteRecord } from '../http/route-family.ts';
import { OpenApiView } from '../schemas/api-views.ts';

export function registerOpenApiRoute(app: FastifyInstance, routes: () => readonly RouteRecord[]): void {
  let kept: WeakRef<Buffer> | undefined;
  // Bytes, not a string: a WeakRef needs an object, and the UTF-8 is encoded once per build, not per request.
  const documentBytes = (): Buffer => {
    let body = kept?.deref();
    if (!body) {
      body = Buffer.from(JSON.stringify(buildOpenApiDocument(routes())));
      kept = new WeakRef(body);
    }
    return body;
  };
  const openapi = {
    operationId: 'getOpenApiDocument',
    summary: 'This API document (OpenAPI 3.1)',
    tags: ['Health'],
    responses: { 200: { description: 'The OpenAPI document', json: OpenApiView } },
  };
  app.get('/openapi.json', { config: { openapi } }, async (_req, reply) => {
    reply.type('application/json; charset=utf-8');
    return documentBytes();
  });
}
