import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toEnvelope } from '../../src/http/errors.ts';
import { buildOpenApiDocument, errorStatuses, openApiPath } from '../../src/http/openapi.ts';
import type { RouteRecord } from '../../src/http/route-family.ts';
import { ErrorEnvelopeSchema } from '../../src/schemas/errors.ts';
import { StateError } from '../../src/state/errors.ts';

type Json = Record<string, unknown>;
const at = (v: unknown, ...path: string[]): unknown =>
  // Walks plain JSON objects read back from the document.
  path.reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Json)[k] : undefined), v);

describe('openApiPath', () => {
  it('turns fastify parameters into OpenAPI templates', () => {
    expect(openApiPath('/api/providers/:provider/keys/:key_id')).toEqual({
      path: '/api/providers/{provider}/keys/{key_id}',
      names: ['provider', 'key_id'],
    });
  });
});

describe('buildOpenApiDocument', () => {
  const Body = z.strictObject({ name: z.string().max(8), note: z.string().default('') });
  const routes: RouteRecord[] = [
    {
      method: 'POST',
      url: '/api/things/:id',
      scheme: 'admin',
      doc: {
        operationId: 'createThing',
        summary: 'Create',
        tags: ['Things'],
        params: z.object({ id: z.string().max(5) }),
        querystring: z.object({ dry: z.enum(['yes', 'no']).optional(), n: z.coerce.number() }),
        body: Body,
        responses: { 201: { description: 'made', json: z.object({ id: z.string() }) } },
        errors: [409],
      },
    },
    { method: 'GET', url: '/undocumented', scheme: 'inference', doc: undefined },
    { method: 'HEAD', url: '/undocumented', scheme: 'inference', doc: undefined },
  ];
  const doc = buildOpenApiDocument(routes);

  it('documents path and query parameters, the body’s input side and the responses', () => {
    const op = at(doc, 'paths', '/api/things/{id}', 'post');
    expect(at(op, 'parameters')).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 5 } },
      { name: 'dry', in: 'query', required: false, schema: { type: 'string', enum: ['yes', 'no'] } },
      { name: 'n', in: 'query', required: true, schema: { type: 'number' } },
    ]);
    // Input side: a field with a default is optional for the caller.
    expect(at(op, 'requestBody', 'content', 'application/json', 'schema')).toMatchObject({
      required: ['name'],
      additionalProperties: false,
    });
    expect(at(op, 'responses', '201', 'content', 'application/json', 'schema')).toMatchObject({ type: 'object' });
    for (const s of ['400', '401', '404', '409', '413', '414', '415', 'default']) {
      expect(at(op, 'responses', s, 'content', 'application/json', 'schema'), s).toEqual({
        $ref: '#/components/schemas/ErrorEnvelope',
      });
    }
    expect(at(op, 'security')).toEqual([{ adminBearer: [] }]);
  });

  it('lists a route without documentation too, with its family’s security, and leaves out HEAD', () => {
    const item = at(doc, 'paths', '/undocumented') as Json;
    expect(Object.keys(item)).toEqual(['get']);
    expect(at(item, 'get', 'security')).toContainEqual({ basic: [] });
    expect(at(item, 'get', 'responses', '401')).toBeDefined();
    expect(at(item, 'get', 'operationId')).toBe('getUndocumented');
  });

  it('keeps a status the route documents itself instead of the envelope', () => {
    const Ready = z.object({ status: z.string() });
    const d = buildOpenApiDocument([
      {
        method: 'GET',
        url: '/ready',
        scheme: 'admin',
        doc: {
          operationId: 'ready',
          summary: 'Ready',
          tags: ['H'],
          responses: { 200: { description: 'ok', json: Ready }, 401: { description: 'own', json: Ready } },
        },
      },
    ]);
    expect(at(d, 'paths', '/ready', 'get', 'responses', '401', 'description')).toBe('own');
  });

  it('hoists the definitions of recursive schemas into components', () => {
    interface Node {
      name: string;
      children: Node[];
    }
    const NodeSchema: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(NodeSchema) }));
    const d = buildOpenApiDocument([
      {
        method: 'PUT',
        url: '/tree',
        scheme: 'public',
        doc: { operationId: 'putTree', summary: 'Tree', tags: ['T'], body: NodeSchema, responses: {} },
      },
      {
        method: 'POST',
        url: '/forest',
        scheme: 'public',
        doc: { operationId: 'postForest', summary: 'F', tags: ['T'], body: z.object({ a: NodeSchema }), responses: {} },
      },
    ]);
    const text = JSON.stringify(d);
    expect(text).not.toContain('#/$defs/');
    expect(text).not.toContain('"$ref":"#"');
    expect(at(d, 'paths', '/tree', 'put', 'requestBody', 'content', 'application/json', 'schema')).toEqual({
      $ref: expect.stringMatching(/^#\/components\/schemas\//),
    });
    for (const m of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      expect(at(d, 'components', 'schemas', m[1] ?? ''), m[1]).toBeDefined();
    }
    expect(at(d, 'paths', '/tree', 'put', 'security')).toEqual([]);
  });

  it('makes each named schema (.meta id) one component, and refuses two different schemas under one name', () => {
    const Item = z.object({ n: z.int() }).meta({ id: 'TestItem' });
    const route = (url: string, json: z.ZodType): RouteRecord => ({
      method: 'GET',
      url,
      scheme: 'public',
      doc: { operationId: url, summary: url, tags: ['T'], responses: { 200: { description: 'ok', json } } },
    });
    const d = buildOpenApiDocument([route('/one', Item), route('/many', z.object({ items: z.array(Item) }))]);
    expect(at(d, 'paths', '/one', 'get', 'responses', '200', 'content', 'application/json', 'schema')).toEqual({
      $ref: '#/components/schemas/TestItem',
    });
    expect(JSON.stringify(at(d, 'paths', '/many'))).toContain('"$ref":"#/components/schemas/TestItem"');
    expect(at(d, 'components', 'schemas', 'TestItem')).toMatchObject({ type: 'object', required: ['n'] });
    const Other = z.object({ s: z.string() }).meta({ id: 'TestItem2' });
    const Clash = z.object({ t: z.string() }).meta({ id: 'TestItem2' });
    expect(() => buildOpenApiDocument([route('/a', Other), route('/b', Clash)])).toThrow(/TestItem2/);
  });

  it('adds the edge’s errors by route shape', () => {
    expect(errorStatuses('GET', 'public', undefined)).toEqual([]);
    expect(errorStatuses('PUT', 'admin', undefined)).toEqual([400, 401, 413, 415]);
  });
});

describe('ErrorEnvelopeSchema', () => {
  it('describes what toEnvelope builds', () => {
    for (const err of [new StateError('not_found', 'gone', 'id'), new Error('boom')]) {
      expect(ErrorEnvelopeSchema.safeParse(toEnvelope(err, 'req-1', { provider: 'openai' })).success).toBe(true);
    }
  });
});
