// The OpenAPI 3.1 document of the whole API, built (pure) from the route census: every route carries its own
// documentation in `config.openapi`, whose schemas are the very zod objects its handler or service validates
// with, converted by zod's own JSON Schema generator. A route without documentation still appears (with its
// security and the error envelope), so the document never misses a route.
import { z } from 'zod';
import { ErrorEnvelopeSchema } from '../schemas/errors.ts';
import type { CredentialScheme, RouteRecord } from './route-family.ts';

/** One response of a route: a JSON body, or another content type (text, SSE) described in words. */
export interface ResponseDoc {
  description: string;
  /** The JSON body (`application/json`). */
  json?: z.ZodType;
  /** A non-JSON body: its content type (e.g. `text/plain`, `text/event-stream`), a string in the document. */
  text?: string | readonly string[];
  /** OpenAPI links: operations that take a value of this answer (a created row's id), by link name. */
  links?: Record<string, { operationId: string; parameters: Record<string, string> }>;
}

/** What a route says about itself for the document; schemas are documentation only, never validated twice. */
export interface RouteDoc {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Path parameters, one property each (fastify `:name`). */
  params?: z.ZodObject;
  /** Query parameters, one property each. */
  querystring?: z.ZodObject;
  /** The JSON request body, as the handler's schema takes it (its input side). */
  body?: z.ZodType;
  /** The body's media type when it is not JSON (`multipart/form-data` for uploads; `body` then describes the form). */
  bodyType?: 'multipart/form-data';
  /** Examples of a valid body (the first is the body's `example`). */
  bodyExamples?: unknown[];
  /** Success responses by status code. */
  responses: Record<number, ResponseDoc>;
  /** Error statuses this route answers besides those every route of its kind does (see errorStatuses). */
  errors?: number[];
  /**
   * The body of every error of this route when it is not the gateway envelope (a native wire format's routes
   * answer errors in their clients' shape): a named component, shared by the format's routes.
   */
  errorBody?: { name: string; schema: z.ZodType; description: string };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's OpenAPI documentation (`/openapi.json`). */
    openapi?: RouteDoc;
  }
}

/** A route option documenting one operation under `tag`: `app.get(path, documented('Providers')({...}), handler)`. */
export function documented(tag: string): (d: Omit<RouteDoc, 'tags'>) => { config: { openapi: RouteDoc } } {
  return (d) => ({ config: { openapi: { ...d, tags: [tag] } } });
}

type Json = Record<string, unknown>;

export const OPENAPI_INFO = {
  title: 'Model gateway API',
  version: '1.0.0',
  description:
    'One HTTP interface in front of many AI providers (`/v1`, OpenAI wire format), with the management API (`/api`). ' +
    'Errors use the gateway error envelope.',
  license: { name: 'Apache 2.0', identifier: 'Apache-2.0' },
} as const;

const SECURITY_SCHEMES: Json = {
  adminBearer: { type: 'http', scheme: 'bearer', description: 'The admin API key.' },
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'A gateway inference token, the admin API key or a virtual key (`sk-vk-...`).',
  },
  basic: { type: 'http', scheme: 'basic', description: 'A Basic user from config.json `auth.basic_users`.' },
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'A virtual key.' },
  virtualKey: { type: 'apiKey', in: 'header', name: 'x-gateway-vk', description: 'A virtual key.' },
};

/** Who may call, per credential scheme (OpenAPI: any one requirement of the list suffices). */
const SECURITY: Record<CredentialScheme, Json[]> = {
  admin: [{ adminBearer: [] }],
  inference: [{ bearer: [] }, { basic: [] }, { apiKey: [] }, { virtualKey: [] }],
  virtual_key: [{ virtualKey: [] }],
  public: [],
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing or invalid credentials',
  402: 'Budget exceeded',
  403: 'Not allowed',
  404: 'Not found',
  408: 'Request not received in time',
  409: 'Conflict',
  413: 'Request body too large',
  414: 'Path parameter too long',
  415: 'Not JSON',
  426: 'Not a WebSocket upgrade',
  429: 'Rate limited',
  502: 'Upstream provider failed',
  503: 'Unavailable',
  504: 'Upstream provider timed out',
};

/** One server-sent event as API tools read a `text/event-stream` body: event by event, the data as text. */
const SSE_EVENT: Json = {
  type: 'object',
  properties: { event: { type: 'string' }, data: { type: 'string' }, id: { type: 'string' } },
  required: ['data'],
};

const ENVELOPE_REF = { $ref: '#/components/schemas/ErrorEnvelope' };

/** The error statuses every route of this shape can answer (before reaching its handler, mostly). */
export function errorStatuses(
  method: string,
  scheme: CredentialScheme | undefined,
  doc: RouteDoc | undefined,
): number[] {
  const s = new Set<number>(doc?.errors ?? []);
  if (scheme !== 'public') s.add(401);
  if (doc?.params || doc?.querystring || doc?.body) s.add(400);
  if (doc?.params) {
    s.add(404);
    s.add(414);
  }
  if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
    s.add(400);
    s.add(413);
    s.add(415);
  }
  return [...s].sort((a, b) => a - b);
}

/** `/api/providers/:provider` -> `/api/providers/{provider}` (and the parameter names). */
export function openApiPath(url: string): { path: string; names: string[] } {
  const names: string[] = [];
  const path = url.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    names.push(name);
    return `{${name}}`;
  });
  return { path, names };
}

/**
 * Collects component schemas. zod's generator puts a schema's named parts (`.meta({ id })`) and recursive parts
 * under its own `$defs` (and a schema that contains itself refers to `#`), which would resolve against the document
 * root inside OpenAPI: they are hoisted into `components.schemas`, named parts under their id (one component
 * however many operations use them), the others under a prefix of their own.
 */
class SchemaSink {
  readonly components: Json = {};
  private n = 0;
  /** The schemas of named() components, converted once each. */
  private readonly byName = new Map<string, z.ZodType>();

  constructor() {
    this.components['ErrorEnvelope'] = this.convert(ErrorEnvelopeSchema, 'output', 'ErrorEnvelope');
  }

  convert(schema: z.ZodType, io: 'input' | 'output', hint?: string): Json {
    const json: Json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
    delete json['$schema'];
    const defs = isJson(json['$defs']) ? json['$defs'] : {};
    delete json['$defs'];
    const selfRef = JSON.stringify(json).includes('"$ref":"#"');
    if (Object.keys(defs).length === 0 && !selfRef) return json;
    const prefix = `${hint ?? 'Schema'}${++this.n}_`;
    /** zod's own names for unnamed parts; any other name is a `.meta({ id })`. */
    const named = (name: string) => !/^__schema\d+$/.test(name);
    const target = (name: string) => (named(name) ? name : `${prefix}${name}`);
    const renamed = new Map<string, string>([['#', `#/components/schemas/${prefix}root`]]);
    for (const name of Object.keys(defs)) renamed.set(`#/$defs/${name}`, `#/components/schemas/${target(name)}`);
    const rewrite = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(rewrite);
      if (v === null || typeof v !== 'object') return v;
      const out: Json = {};
      for (const [k, x] of Object.entries(v)) {
        out[k] = k === '$ref' && typeof x === 'string' ? (renamed.get(x) ?? x) : rewrite(x);
      }
      return out;
    };
    for (const [name, def] of Object.entries(defs)) this.add(target(name), rewrite(def));
    const top = rewrite(json);
    if (!selfRef) return isJson(top) ? top : {};
    // A schema that refers to itself (`#`) becomes a component of its own, referred to by name.
    this.components[`${prefix}root`] = top;
    return { $ref: `#/components/schemas/${prefix}root` };
  }

  /** A reference to `schema` as the component `name` (added once; a different schema under the name is a bug). */
  named(name: string, schema: z.ZodType): Json {
    const ref = `#/components/schemas/${name}`;
    const known = this.byName.get(name);
    if (known === undefined) {
      this.byName.set(name, schema);
      const json = this.convert(schema, 'output', name);
      // A schema carrying `.meta({ id: name })` is already the component of that name.
      if (json['$ref'] !== ref) this.add(name, json);
    } else if (known !== schema) {
      throw new Error(`two different schemas are named ${name} in the API document`);
    }
    return { $ref: ref };
  }

  /** Two different schemas under one id would make every reference to it ambiguous: a bug, caught at start. */
  private add(name: string, schema: unknown): void {
    const known = this.components[name];
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(schema)) {
      throw new Error(`two different schemas are named ${name} (.meta({ id })) in the API document`);
    }
    this.components[name] = schema;
  }
}

function isJson(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parameters(sink: SchemaSink, where: 'path' | 'query', obj: z.ZodObject | undefined, names: string[]): Json[] {
  const out: Json[] = [];
  const shape = obj?.shape ?? {};
  if (where === 'path') {
    for (const name of names) {
      const s = shape[name];
      out.push({ name, in: 'path', required: true, schema: s ? sink.convert(s, 'input') : { type: 'string' } });
    }
    return out;
  }
  for (const [name, s] of Object.entries(shape)) {
    const schema = sink.convert(s, 'input');
    const optional = s.safeParse(undefined).success;
    out.push({ name, in: 'query', required: !optional, schema });
  }
  return out;
}

/** `GET /api/things/:id` -> `getApiThingsId`: unique per method and path, for a route that documents nothing. */
function fallbackOperationId(r: RouteRecord): string {
  return `${r.method.toLowerCase()}${r.url.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c?: string) => (c ?? '').toUpperCase())}`;
}

function operation(sink: SchemaSink, r: RouteRecord, names: string[]): Json {
  const doc = r.doc;
  const op: Json = {
    operationId: doc?.operationId ?? fallbackOperationId(r),
    summary: doc?.summary ?? `${r.method} ${r.url}`,
    tags: doc?.tags ?? ['Other'],
    security: SECURITY[r.scheme ?? 'public'],
  };
  if (doc?.description) op['description'] = doc.description;
  const params = [...parameters(sink, 'path', doc?.params, names), ...parameters(sink, 'query', doc?.querystring, [])];
  if (params.length > 0) op['parameters'] = params;
  if (doc?.body) {
    const schema = sink.convert(doc.body, 'input', doc.operationId);
    const media: Json = { schema };
    if (doc.bodyExamples && doc.bodyExamples.length > 0) {
      media['examples'] = Object.fromEntries(doc.bodyExamples.map((value, i) => [`example${i + 1}`, { value }]));
    }
    op['requestBody'] = { required: true, content: { [doc.bodyType ?? 'application/json']: media } };
  }
  const errorRef = doc?.errorBody ? sink.named(doc.errorBody.name, doc.errorBody.schema) : ENVELOPE_REF;
  const errorWords = doc?.errorBody?.description ?? 'in the gateway error envelope';
  const responses: Json = {};
  for (const [status, res] of Object.entries(doc?.responses ?? { 200: { description: 'Success' } })) {
    const content: Json = {};
    if (res.json) content['application/json'] = { schema: sink.convert(res.json, 'output', doc?.operationId) };
    for (const t of typeof res.text === 'string' ? [res.text] : (res.text ?? [])) {
      content[t] = { schema: t === 'text/event-stream' ? SSE_EVENT : { type: 'string' } };
    }
    const out: Json = { description: res.description };
    if (Object.keys(content).length > 0) out['content'] = content;
    if (res.links) out['links'] = res.links;
    responses[status] = out;
  }
  for (const status of errorStatuses(r.method, r.scheme, doc)) {
    // A status the route documents itself (503 of /ready) keeps its own body.
    if (responses[String(status)] !== undefined) continue;
    responses[String(status)] = {
      description: STATUS_TEXT[status] ?? 'Error',
      content: { 'application/json': { schema: errorRef } },
    };
  }
  // Malformed or oversized HTTP is answered by the parser before any route or format is known: the envelope.
  if (doc?.errorBody && responses['431'] === undefined) {
    responses['431'] = {
      description: 'Request headers too large (answered before routing, in the gateway error envelope)',
      content: { 'application/json': { schema: ENVELOPE_REF } },
    };
  }
  responses['default'] = {
    description: `Any other error, ${errorWords}`,
    content: { 'application/json': { schema: errorRef } },
  };
  op['responses'] = responses;
  return op;
}

/** The whole document from the census (HEAD routes fastify adds for GETs are left out). */
export function buildOpenApiDocument(routes: readonly RouteRecord[]): Json {
  const sink = new SchemaSink();
  const paths: Record<string, Json> = {};
  const tags = new Set<string>();
  for (const r of routes) {
    if (r.method === 'HEAD') continue;
    const { path, names } = openApiPath(r.url);
    const item = paths[path] ?? {};
    item[r.method.toLowerCase()] = operation(sink, r, names);
    paths[path] = item;
    for (const t of r.doc?.tags ?? ['Other']) tags.add(t);
  }
  return {
    openapi: '3.1.0',
    info: OPENAPI_INFO,
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: { schemas: sink.components, securitySchemes: SECURITY_SCHEMES },
  };
}
