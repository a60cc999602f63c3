// docs/api (openapi.json and the reference README.md) is what a gateway on the embedded default serves at
// GET /openapi.json, rendered by scripts/api-reference.ts (make api-docs); the reference covers every operation
// and links each to its place in the JSON.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  API_DOCS_DIR,
  type RenderedFile,
  renderApiReference,
  servedOpenApiDocument,
  sortKeys,
  staleFiles,
  writeApiReference,
} from '../../scripts/api-reference.ts';
import { pathLines } from '../../scripts/api-reference-markdown.ts';
import { tempDir } from '../harness/tmpdir.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

type Json = Record<string, unknown>;
let doc: Json;
let files: RenderedFile[];

beforeAll(async () => {
  doc = await servedOpenApiDocument();
  files = renderApiReference(doc);
});

function rendered(name: string): string {
  const f = files.find((x) => x.file === `${API_DOCS_DIR}/${name}`);
  if (!f) throw new Error(`${name} is not rendered`);
  return f.text;
}

/** The first line where two texts differ, for a readable failure (a 3 MB string diff is not). */
function firstDifference(actual: string, expected: string): string | undefined {
  if (actual === expected) return undefined;
  const a = actual.split('\n');
  const e = expected.split('\n');
  for (let i = 0; i < Math.max(a.length, e.length); i++) {
    if (a[i] !== e[i]) return `line ${i + 1}: on disk ${JSON.stringify(a[i])}, served ${JSON.stringify(e[i])}`;
  }
  return 'differs';
}

function isJson(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function operations(d: Json): { path: string; method: string }[] {
  const out: { path: string; method: string }[] = [];
  const paths = isJson(d['paths']) ? d['paths'] : {};
  for (const [path, item] of Object.entries(paths)) {
    for (const method of Object.keys(isJson(item) ? item : {})) out.push({ path, method });
  }
  return out;
}

/** A copy with every object's keys in reverse order. */
function reversed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversed);
  if (!isJson(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .reverse()
      .map(([k, x]) => [k, reversed(x)]),
  );
}

describe('docs/api', () => {
  it('is what the gateway serves (else: run make api-docs)', async () => {
    for (const { file, text } of files) {
      const onDisk = await readFile(join(root, file), 'utf8').catch(() => undefined);
      expect(onDisk, `${file} is missing: run make api-docs`).toBeDefined();
      expect(firstDifference(onDisk ?? '', text), `${file} is stale: run make api-docs`).toBeUndefined();
    }
    expect(await staleFiles(root, files), 'stale or orphaned files in docs/api: run make api-docs').toEqual([]);
  });

  it('openapi.json is the served document, pretty, keys sorted, the same text whatever the key order served', () => {
    const json = rendered('openapi.json');
    expect(JSON.parse(json)).toEqual(doc);
    expect(json.startsWith('{\n  "components": {\n')).toBe(true);
    const paths = Object.keys(JSON.parse(json).paths);
    expect(paths).toEqual([...paths].sort());
    // The same document with every key order reversed renders to the same files.
    const backwards = reversed(doc);
    expect(isJson(backwards) && renderApiReference(backwards)).toEqual(files);
    expect(sortKeys({ b: 1, a: [{ d: 1, c: 2 }] })).toStrictEqual({ a: [{ c: 2, d: 1 }], b: 1 });
  });

  it('README.md has every operation of the document, each linked to its path’s line in openapi.json', () => {
    const md = rendered('README.md');
    const json = rendered('openapi.json').split('\n');
    const lines = pathLines(rendered('openapi.json'));
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(100);
    for (const { path } of ops) {
      expect(md, path).toContain(`\`${path}\``);
      const line = lines.get(path);
      expect(json[(line ?? 0) - 1], path).toBe(`    ${JSON.stringify(path)}: {`);
    }
    for (const m of md.matchAll(/\(openapi\.json#L(\d+)\)/g)) {
      expect(json[Number(m[1]) - 1], m[0]).toMatch(/^ {4}"\/.*": \{$|^ {6}"ErrorEnvelope": \{$/);
    }
    // Management operations: credentials, body fields and statuses, as the document says.
    const create = md.slice(md.indexOf('### POST `/api/governance/virtual-keys`'));
    expect(create).toMatch(/^### POST `\/api\/governance\/virtual-keys`\n\nCreate a virtual key\./);
    expect(create.slice(0, create.indexOf('\n### '))).toContain('Credentials: [`adminBearer`](#credentials).');
    expect(create.slice(0, create.indexOf('\n### '))).toContain('| `name` | string | yes |');
    expect(create.slice(0, create.indexOf('\n### '))).toContain('| 200 | The virtual key with its value |');
    const health = md.slice(md.indexOf('### GET `/health`'));
    expect(health.slice(0, health.indexOf('\n### '))).toContain('Credentials: none (public).');
    // One entry per operation, its other mounts listed in it.
    expect(md.match(/^### POST `\/v1\/chat\/completions`$/gm)).toHaveLength(1);
    expect(md).toContain('`/aggregator/v1/chat/completions`');
  });

  it('a changed, missing or foreign file in docs/api is reported, and writing the files clears it', async () => {
    const dir = await tempDir('api-reference-');
    try {
      expect(await staleFiles(dir.path, files)).toEqual(files.map((f) => f.file));
      await writeApiReference(dir.path, files);
      expect(await staleFiles(dir.path, files)).toEqual([]);
      await dir.write(`${API_DOCS_DIR}/README.md`, `${rendered('README.md')}edited\n`);
      await dir.write(`${API_DOCS_DIR}/old.md`, 'gone\n');
      expect(await staleFiles(dir.path, files)).toEqual([`${API_DOCS_DIR}/README.md`, `${API_DOCS_DIR}/old.md`]);
      await writeApiReference(dir.path, files);
      expect(await staleFiles(dir.path, files)).toEqual([]);
    } finally {
      await dir.remove();
    }
  });
});
