// docs/api/: the OpenAPI document the gateway serves (openapi.json, keys sorted) and the reference read from it
// (README.md). `node scripts/api-reference.ts` (make api-docs) boots a gateway in-process on the embedded default
// (PGlite in a throwaway directory, in-process coordination, no config.json), fetches GET /openapi.json and writes
// both files; `--check` exits 1 listing the stale ones. The output holds no time, id or path of the run.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootGateway, createLogger } from '../gateway/src/boot.ts';
import { readEnvSettings } from '../gateway/src/config/load.ts';
import { renderMarkdown } from './api-reference-markdown.ts';

export const API_DOCS_DIR = 'docs/api';

export interface RenderedFile {
  /** Path relative to the repository root. */
  file: string;
  text: string;
}

type Json = Record<string, unknown>;

function isJson(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A copy with every object's keys in code-point order (arrays keep theirs): one text per document. */
export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isJson(v)) return v;
  const out: Json = {};
  for (const key of Object.keys(v).sort()) out[key] = sortKeys(v[key]);
  return out;
}

/** GET /openapi.json of a gateway booted for the purpose on the embedded default, closed and removed after. */
export async function servedOpenApiDocument(): Promise<Json> {
  const dataDir = await mkdtemp(join(tmpdir(), 'api-reference-'));
  try {
    // Only these settings: the caller's GATEWAY_* or DATABASE_URL must not change what is documented.
    const env = readEnvSettings({
      GATEWAY_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      // A fixed admin key, so no generated one is printed; the document does not depend on it.
      GATEWAY_ADMIN_API_KEY: 'api-reference-admin-key-not-used',
      GATEWAY_LOG_LEVEL: 'silent',
      GATEWAY_DATA_DIR: dataDir,
    });
    const gw = await bootGateway({ env, processEnv: {}, logger: createLogger('silent') });
    try {
      const res = await fetch(`${gw.url}/openapi.json`);
      if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
      const doc: unknown = await res.json();
      if (!isJson(doc)) throw new Error('GET /openapi.json is not a JSON object');
      return doc;
    } finally {
      await gw.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** docs/api/openapi.json (pretty, sorted keys) and docs/api/README.md from the served document (pure). */
export function renderApiReference(doc: Json): RenderedFile[] {
  const sorted = sortKeys(doc);
  const json = `${JSON.stringify(sorted, null, 2)}\n`;
  return [
    { file: `${API_DOCS_DIR}/README.md`, text: renderMarkdown(isJson(sorted) ? sorted : {}, json) },
    { file: `${API_DOCS_DIR}/openapi.json`, text: json },
  ];
}

/** Files of docs/api that no longer come out of the generator. */
async function orphans(root: string, files: readonly RenderedFile[]): Promise<string[]> {
  const dir = join(root, API_DOCS_DIR);
  if (!existsSync(dir)) return [];
  const generated = new Set(files.map((f) => f.file));
  return (await readdir(dir))
    .map((name) => `${API_DOCS_DIR}/${name}`)
    .filter((file) => !generated.has(file))
    .sort();
}

/** Generated files missing or different on disk, then files in docs/api the generator does not write. */
export async function staleFiles(root: string, files: readonly RenderedFile[]): Promise<string[]> {
  const stale: string[] = [];
  for (const { file, text } of files) {
    const path = join(root, file);
    if (!existsSync(path) || (await readFile(path, 'utf8')) !== text) stale.push(file);
  }
  return [...stale, ...(await orphans(root, files))];
}

/** Writes the files under `root`, removing orphans; returns what it wrote. */
export async function writeApiReference(root: string, files: readonly RenderedFile[]): Promise<string[]> {
  for (const file of await orphans(root, files)) await rm(join(root, file), { recursive: true, force: true });
  for (const { file, text } of files) {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), text);
  }
  return files.map((f) => f.file);
}

async function main(argv: readonly string[]): Promise<number> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const files = renderApiReference(await servedOpenApiDocument());
  if (argv.includes('--check')) {
    const stale = await staleFiles(root, files);
    if (stale.length === 0) return 0;
    process.stderr.write(`stale API reference files (run make api-docs):\n${stale.map((f) => `  ${f}\n`).join('')}`);
    return 1;
  }
  for (const file of await writeApiReference(root, files)) process.stdout.write(`wrote ${file}\n`);
  return 0;
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
