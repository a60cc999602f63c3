// GET /openapi.json: public, OpenAPI 3.1, every route of the census in it with its family's security, schemas
// generated from the zod objects the services validate with, and errors in the envelope the gateway really sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorEnvelopeSchema } from '../../gateway/src/schemas/errors.ts';
import { VirtualKeyInput } from '../../gateway/src/state/services/governance/validate.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  security: Json[];
  requestBody?: { content: { 'application/json': { schema: Json } } };
  responses: Record<string, { content?: Record<string, { schema: Json }> }>;
}
interface Doc {
  openapi: string;
  info: { version: string; license: { name: string; identifier: string } };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> };
}

let gw: TestGateway;
let doc: Doc;

beforeAll(async () => {
  gw = await startTestGateway();
  const res = await fetch(`${gw.url}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = (await res.json()) as Doc;
});
afterAll(async () => {
  await gw?.close();
});

function op(path: string, method: string): Operation {
  const o = doc.paths[path]?.[method];
  if (!o) throw new Error(`${method} ${path} is not in the document`);
  return o;
}

function refs(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) refs(x, out);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string') out.push(x);
      else refs(x, out);
    }
  }
  return out;
}

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1, version 1.0.0, Apache 2.0, served without credentials', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info.license).toEqual({ name: 'Apache 2.0', identifier: 'Apache-2.0' });
  });

  it('has every registered route, each with a unique operation id and its family’s security', () => {
    const ids = new Set<string>();
    for (const r of gw.app.routes()) {
      if (r.method === 'HEAD') continue;
      const o = op(r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}'), r.method.toLowerCase());
      expect(ids.has(o.operationId), o.operationId).toBe(false);
      ids.add(o.operationId);
      expect(r.doc, `${r.method} ${r.url} documents itself`).toBeDefined();
      if (r.scheme === 'public') expect(o.security).toEqual([]);
      if (r.scheme === 'admin') expect(o.security).toEqual([{ adminBearer: [] }]);
      if (r.scheme === 'virtual_key') expect(o.security).toEqual([{ virtualKey: [] }]);
      if (r.scheme === 'inference') expect(o.security).toContainEqual({ virtualKey: [] });
      if (r.scheme !== 'public') expect(o.responses['401']).toBeDefined();
    }
    expect(op('/api/providers/{provider}/keys/{key_id}', 'put').operationId).toBe('updateProviderKey');
  });

  it('describes request bodies with the services’ own zod schemas', () => {
    const body = op('/api/governance/virtual-keys', 'post').requestBody?.content['application/json'].schema;
    const expected = z.toJSONSchema(VirtualKeyInput, { io: 'input', unrepresentable: 'any' });
    delete expected['$schema'];
    expect(body).toEqual(expected);
    expect(body).toMatchObject({ required: ['name'], additionalProperties: false });
  });

  it('resolves every $ref inside the document', () => {
    for (const ref of refs(doc)) {
      expect(ref.startsWith('#/components/schemas/'), ref).toBe(true);
      expect(doc.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
    }
  });

  it('documents errors with the envelope the gateway sends', async () => {
    const notFound = await gw.admin('/api/providers/nothing-here');
    expect(notFound.status).toBe(404);
    expect(ErrorEnvelopeSchema.safeParse(await notFound.json()).success).toBe(true);
    const unauthenticated = await fetch(`${gw.url}/api/providers`);
    expect(ErrorEnvelopeSchema.safeParse(await unauthenticated.json()).success).toBe(true);
    expect(op('/api/providers/{provider}', 'get').responses['404']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/ErrorEnvelope',
    });
  });
});
