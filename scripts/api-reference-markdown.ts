// The readable API reference (docs/api/README.md), rendered (pure) from the OpenAPI document the gateway serves:
// one section per tag, one entry per operation (the same operation under several mounts is one entry listing its
// paths), with its credentials, parameters, request body fields and response statuses. Every entry links to its
// path in docs/api/openapi.json by line, so the JSON stays the one complete reference.

type Json = Record<string, unknown>;

const METHODS: readonly string[] = ['get', 'post', 'put', 'patch', 'delete'];
/** Enum values listed in a type before the rest is elided. */
const MAX_ENUM = 8;

function isJson(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
function obj(v: unknown): Json {
  return isJson(v) ? v : {};
}
function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
function text(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A table cell: one line, pipes escaped. */
function cell(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}

class Schemas {
  private readonly components: Json;
  constructor(components: Json) {
    this.components = components;
  }

  /** Follows `$ref`s to the schema they name (a few hops at most: components refer to components). */
  resolve(schema: unknown): Json {
    let s = obj(schema);
    for (let hops = 0; hops < 8; hops++) {
      const ref = text(s['$ref']);
      if (!ref) return s;
      s = obj(this.components[refName(ref)]);
    }
    return s;
  }

  /** The alternatives of a union body (nested anyOf/oneOf flattened), or the one schema. */
  variants(schema: unknown): Json[] {
    const s = this.resolve(schema);
    const alts = [...list(s['anyOf']), ...list(s['oneOf'])];
    return alts.length === 0 ? [s] : alts.flatMap((a) => this.variants(a));
  }
}

/** A short type for a table: `string (date-time)`, `array of Message`, `"auto" | "none"`, `integer or null`. */
export function typeOf(schema: unknown): string {
  const s = obj(schema);
  const ref = text(s['$ref']);
  if (ref) return refName(ref);
  if (s['const'] !== undefined) return JSON.stringify(s['const']);
  const values = list(s['enum']);
  if (values.length > 0) {
    const shown = values.slice(0, MAX_ENUM).map((v) => JSON.stringify(v));
    return values.length > MAX_ENUM ? `${shown.join(' \\| ')} \\| …` : shown.join(' \\| ');
  }
  const alts = [...list(s['anyOf']), ...list(s['oneOf'])];
  if (alts.length > 0) return [...new Set(alts.map(typeOf))].join(' or ');
  const type = s['type'];
  if (Array.isArray(type)) return type.map((t) => typeOf({ ...s, type: t })).join(' or ');
  switch (type) {
    case 'array':
      return s['items'] === undefined ? 'array' : `array of ${typeOf(s['items'])}`;
    case 'object': {
      const extra = s['additionalProperties'];
      const map = s['properties'] === undefined && isJson(extra) && Object.keys(extra).length > 0;
      return map ? `map of ${typeOf(extra)}` : 'object';
    }
    case 'string': {
      const format = text(s['format']);
      return format ? `string (${format})` : 'string';
    }
    case undefined:
      return 'any';
    default:
      return String(type);
  }
}

/** What a field's schema says about it in words: its description and default. */
function about(schema: unknown): string {
  const s = obj(schema);
  const parts: string[] = [];
  const description = text(s['description']);
  if (description) parts.push(description);
  if (s['default'] !== undefined) parts.push(`default \`${JSON.stringify(s['default'])}\``);
  return parts.join('; ');
}

interface Operation {
  method: string;
  path: string;
  op: Json;
}

/** One entry: an operation and the other paths (mounts) that serve the same one. */
interface Entry {
  method: string;
  /** The shortest path (the plain mount) first, then the others by name. */
  paths: string[];
  /** The operation of each path (they differ only in operation id). */
  ops: Map<string, Json>;
}

function byPathThenMethod(a: { path: string; method: string }, b: { path: string; method: string }): number {
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  return METHODS.indexOf(a.method) - METHODS.indexOf(b.method);
}

/** Shortest path first (the plain mount), then by name. */
function byLength(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** Operations of one tag, the same operation on several mounts merged (operation ids differ by mount prefix). */
function entries(ops: Operation[]): Entry[] {
  const groups = new Map<string, Entry>();
  for (const { method, path, op } of ops) {
    const { operationId: _id, ...rest } = op;
    const key = `${method} ${JSON.stringify(rest)}`;
    const group = groups.get(key) ?? { method, paths: [], ops: new Map<string, Json>() };
    group.paths.push(path);
    group.ops.set(path, op);
    groups.set(key, group);
  }
  const out = [...groups.values()];
  for (const e of out) {
    const [first = '', ...rest] = [...e.paths].sort(byLength);
    e.paths = [first, ...rest.sort()];
  }
  return out.sort((a, b) =>
    byPathThenMethod({ path: a.paths[0] ?? '', method: a.method }, { path: b.paths[0] ?? '', method: b.method }),
  );
}

/** Line (1-based) of each path item in the pretty-printed, key-sorted openapi.json. */
export function pathLines(openapiJson: string): Map<string, number> {
  const lines = openapiJson.split('\n');
  const out = new Map<string, number>();
  const start = lines.indexOf('  "paths": {');
  for (let i = start + 1; start >= 0 && i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('  }')) break;
    const m = /^ {4}("(?:[^"\\]|\\.)*"): \{$/.exec(line);
    if (m?.[1]) out.set(String(JSON.parse(m[1])), i + 1);
  }
  return out;
}

function credentials(op: Json): string {
  const names = list(op['security']).flatMap((req) => Object.keys(obj(req)));
  if (names.length === 0) return 'none (public)';
  const shown = names.map((n) => `[\`${n}\`](#credentials)`).join(', ');
  return names.length === 1 ? shown : `any one of ${shown}`;
}

function parametersTable(op: Json): string[] {
  const params = list(op['parameters']).map(obj);
  if (params.length === 0) return [];
  const out = ['Parameters:', '', '| name | in | type | required | about |', '| --- | --- | --- | --- | --- |'];
  for (const p of params) {
    const required = p['required'] === true ? 'yes' : 'no';
    const aboutIt = cell(about(p['schema']) || text(p['description']) || '');
    out.push(`| \`${text(p['name'])}\` | ${text(p['in'])} | ${cell(typeOf(p['schema']))} | ${required} | ${aboutIt} |`);
  }
  return [...out, ''];
}

function bodyTable(op: Json, schemas: Schemas): string[] {
  const media = obj(obj(obj(op['requestBody'])['content'])['application/json']);
  if (media['schema'] === undefined) return [];
  const ref = text(obj(media['schema'])['$ref']);
  const named = ref ? ` (\`${refName(ref)}\`)` : '';
  const variants = schemas.variants(media['schema']);
  const fields = new Map<string, { schemas: unknown[]; requiredIn: number }>();
  for (const v of variants) {
    const required = new Set(list(v['required']).map(String));
    for (const [name, s] of Object.entries(obj(v['properties']))) {
      const f = fields.get(name) ?? { schemas: [], requiredIn: 0 };
      f.schemas.push(s);
      if (required.has(name)) f.requiredIn++;
      fields.set(name, f);
    }
  }
  const shapes = variants.length > 1 ? `, one of ${variants.length} shapes` : '';
  if (fields.size === 0) return [`Request body${named}: JSON (\`${typeOf(media['schema'])}\`${shapes}).`, ''];
  const out = [
    `Request body${named}: JSON${shapes}, fields:`,
    '',
    '| field | type | required | about |',
    '| --- | --- | --- | --- |',
  ];
  for (const [name, f] of fields) {
    const required = f.requiredIn === variants.length ? 'yes' : f.requiredIn > 0 ? 'in some shapes' : 'no';
    const type = [...new Set(f.schemas.map(typeOf))].join(' or ');
    out.push(`| \`${name}\` | ${cell(type)} | ${required} | ${cell(about(f.schemas[0]))} |`);
  }
  return [...out, ''];
}

function responsesTable(op: Json): string[] {
  const out = ['Responses:', '', '| status | meaning | body |', '| --- | --- | --- |'];
  for (const [status, res] of Object.entries(obj(op['responses']))) {
    const content = Object.entries(obj(obj(res)['content'])).map(([type, media]) => {
      const ref = text(obj(obj(media)['schema'])['$ref']);
      return ref ? `\`${type}\` (\`${refName(ref)}\`)` : `\`${type}\``;
    });
    out.push(`| ${status} | ${cell(text(obj(res)['description']) ?? '')} | ${content.join(', ')} |`);
  }
  return [...out, ''];
}

function entry(e: Entry, lines: Map<string, number>, schemas: Schemas): string[] {
  const [path = '', ...others] = e.paths;
  const op = e.ops.get(path) ?? {};
  const line = lines.get(path);
  const summary = text(op['summary']) ?? '';
  const out = [`### ${e.method.toUpperCase()} \`${path}\``, '', `${summary}.`.replace(/\.\.$/, '.'), ''];
  const jsonLink = line === undefined ? '[openapi.json](openapi.json)' : `[openapi.json](openapi.json#L${line})`;
  out.push(`Operation \`${text(op['operationId'])}\` (${jsonLink}). Credentials: ${credentials(op)}.`, '');
  if (others.length > 0) out.push(`Also served at: ${others.map((p) => `\`${p}\``).join(', ')}.`, '');
  const description = text(op['description']);
  if (description) out.push(description, '');
  return [...out, ...parametersTable(op), ...bodyTable(op, schemas), ...responsesTable(op)];
}

function securityTable(doc: Json): string[] {
  const out = ['| scheme | sent as | meaning |', '| --- | --- | --- |'];
  for (const [name, scheme] of Object.entries(obj(obj(doc['components'])['securitySchemes']))) {
    const s = obj(scheme);
    const how =
      s['type'] === 'http'
        ? `\`Authorization: ${text(s['scheme']) === 'basic' ? 'Basic' : 'Bearer'} …\``
        : `${text(s['in'])} \`${text(s['name'])}\``;
    out.push(`| \`${name}\` | ${how} | ${cell(text(s['description']) ?? '')} |`);
  }
  return out;
}

/** A link to the first line of openapi.json that is `line` exactly (the file itself when none is). */
function lineLink(openapiJson: string, line: string): string {
  const i = openapiJson.split('\n').indexOf(line);
  return i < 0 ? 'openapi.json' : `openapi.json#L${i + 1}`;
}

/** docs/api/README.md from the document and its rendered JSON (for the line links). */
export function renderMarkdown(doc: Json, openapiJson: string): string {
  const info = obj(doc['info']);
  const schemas = new Schemas(obj(obj(doc['components'])['schemas']));
  const lines = pathLines(openapiJson);
  const byTag = new Map<string, Operation[]>();
  for (const [path, item] of Object.entries(obj(doc['paths']))) {
    for (const [method, op] of Object.entries(obj(item))) {
      if (!METHODS.includes(method)) continue;
      const tag = text(list(obj(op)['tags'])[0]) ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), { method, path, op: obj(op) }]);
    }
  }
  const tags = [...byTag.keys()].sort();
  const out = [
    '# API reference',
    '',
    '<!-- Generated by scripts/api-reference.ts from GET /openapi.json; do not edit: run `make api-docs`. -->',
    '',
    `${text(info['title'])} ${text(info['version'])}, generated from the OpenAPI ${text(doc['openapi'])} document the ` +
      'gateway serves at `GET /openapi.json` (the embedded default, no config.json). The whole document, schemas ' +
      'included: [openapi.json](openapi.json); run `make api-docs` to regenerate both files.',
    '',
    text(info['description']) ?? '',
    '',
    '## Credentials',
    '',
    'Each operation names the schemes it accepts; any one of them suffices.',
    '',
    ...securityTable(doc),
    '',
    `Errors are answered in the gateway error envelope ([\`ErrorEnvelope\`](${lineLink(openapiJson, '      "ErrorEnvelope": {')})) ` +
      'unless an operation names ' +
      'another body (the native wire formats answer in their clients’ shape).',
    '',
    '## Contents',
    '',
    ...tags.map((t) => `- [${t}](#${slug(t)}) (${byTag.get(t)?.length ?? 0} operations)`),
    '',
  ];
  for (const tag of tags) {
    out.push(`## ${tag}`, '');
    for (const e of entries(byTag.get(tag) ?? [])) out.push(...entry(e, lines, schemas));
  }
  const markdown = out.join('\n').replace(/\n{3,}/g, '\n\n');
  return `${markdown.trimEnd()}\n`;
}
