// Semantic cache entries in Postgres (migration 011): shared by every pod, kept across restarts until they expire.
// The exact layer reads one row by its cache_id; the semantic layer narrows the rows of one (namespace, tenant,
// cache key, scope, dimension) to the newest candidates and ranks them by cosine similarity in SQL: with
// pgvector's `<=>` operator when the extension is there, else over the real[] column with portable SQL.
import type { Db } from '../../db/types.ts';

/** Where an entry belongs: entries of other namespaces, tenants, keys or scopes are never served. */
export interface CacheScope {
  namespace: string;
  /** `vk:<id>`, `token:<name>`, `basic:<user>`, `anonymous`. */
  tenant: string;
  cacheKey: string;
  /** Format, operation, stream flag and (per settings) the provider and model. */
  scope: string;
}

export interface NewCacheEntry extends CacheScope {
  id: string;
  stream: boolean;
  /** The answer as JSON text (a unary answer, or the array of a stream's chunks). */
  answer: string;
  provider: string;
  model: string;
  /** The prompt's embedding; absent when only the exact layer ran. */
  embedding: readonly number[] | undefined;
  ttlSeconds: number;
}

export interface CachedEntry {
  id: string;
  stream: boolean;
  /** Parsed JSON: the unary answer, or the array of chunks. */
  answer: unknown;
  provider: string;
  model: string;
}

export interface NearestQuery extends CacheScope {
  embedding: readonly number[];
  threshold: number;
  /** The newest entries of the scope that are compared at most. */
  maxCandidates: number;
}

/** How similarity is computed: pgvector's cosine distance operator, or portable SQL over real[]. */
export type VectorMode = 'pgvector' | 'portable';

const PORTABLE_SIMILARITY = `(SELECT sum(a::float8 * b) / NULLIF(sqrt(sum(a::float8 * a)) * sqrt(sum(b::float8 * b)), 0)
   FROM unnest(c.embedding, $5::real[]) AS t(a, b))`;
// pgvector answers NaN for a zero vector, and Postgres orders NaN above every number: NULL never passes `>=`.
const PGVECTOR_SIMILARITY = "(1 - NULLIF(c.embedding::vector <=> $5::real[]::vector, 'NaN'::float8))";

type EntryRow = { id: string; stream: boolean; answer: unknown; provider: string; model: string };

export class CacheStore {
  private readonly db: Db;
  private mode: Promise<VectorMode> | undefined;

  constructor(db: Db) {
    this.db = db;
  }

  /**
   * pgvector when `CREATE EXTENSION vector` works (or it exists already), else portable SQL. Detected once; a
   * database without the extension (PGlite, a Postgres without the package) is never an error.
   */
  vectorMode(): Promise<VectorMode> {
    this.mode ??= detectVector(this.db);
    return this.mode;
  }

  /** The live entry with this id for this tenant (expired rows are not served). */
  async get(id: string, tenant: string): Promise<CachedEntry | undefined> {
    const { rows } = await this.db.query<EntryRow>(
      `SELECT id, stream, answer, provider, model FROM semantic_cache_entries
       WHERE id = $1 AND tenant = $2 AND expires_at > now()`,
      [id, tenant],
    );
    return rows[0] ? toEntry(rows[0]) : undefined;
  }

  /** The most similar live entry of the scope at or above the threshold, among its newest candidates. */
  async nearest(q: NearestQuery): Promise<{ entry: CachedEntry; similarity: number } | undefined> {
    const similarity = (await this.vectorMode()) === 'pgvector' ? PGVECTOR_SIMILARITY : PORTABLE_SIMILARITY;
    const { rows } = await this.db.query<EntryRow & { similarity: number }>(
      `SELECT e.id, e.stream, e.answer, e.provider, e.model, s.similarity
       FROM (
         SELECT c.id, ${similarity} AS similarity
         FROM (
           SELECT id, embedding FROM semantic_cache_entries
           WHERE namespace = $1 AND tenant = $2 AND cache_key = $3 AND scope = $4 AND dimension = $6
             AND expires_at > now()
           ORDER BY created_at DESC LIMIT $7
         ) c
       ) s JOIN semantic_cache_entries e ON e.id = s.id
       WHERE s.similarity >= $8 AND e.expires_at > now()
       ORDER BY s.similarity DESC LIMIT 1`,
      [
        q.namespace,
        q.tenant,
        q.cacheKey,
        q.scope,
        realArray(q.embedding),
        q.embedding.length,
        q.maxCandidates,
        q.threshold,
      ],
    );
    const r = rows[0];
    return r ? { entry: toEntry(r), similarity: Number(r.similarity) } : undefined;
  }

  /** Stores (or replaces) an entry; its lifetime starts now on the database's clock. */
  async put(e: NewCacheEntry): Promise<void> {
    await this.db.query(
      `INSERT INTO semantic_cache_entries
         (id, namespace, tenant, cache_key, scope, stream, answer, answer_size, provider, model, embedding, dimension,
          expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::json, $8, $9, $10, $11::real[], $12, now() + make_interval(secs => $13))
       ON CONFLICT (id) DO UPDATE SET stream = EXCLUDED.stream, answer = EXCLUDED.answer,
         answer_size = EXCLUDED.answer_size, provider = EXCLUDED.provider, model = EXCLUDED.model,
         embedding = EXCLUDED.embedding, dimension = EXCLUDED.dimension, created_at = now(),
         expires_at = EXCLUDED.expires_at`,
      [
        e.id,
        e.namespace,
        e.tenant,
        e.cacheKey,
        e.scope,
        e.stream,
        e.answer,
        Buffer.byteLength(e.answer),
        e.provider,
        e.model,
        e.embedding ? realArray(e.embedding) : null,
        e.embedding ? e.embedding.length : null,
        e.ttlSeconds,
      ],
    );
  }

  /** DELETE /api/cache/clear/{cacheId}: the entries removed (0 or 1). */
  async clearById(id: string): Promise<number> {
    const { rowCount } = await this.db.query('DELETE FROM semantic_cache_entries WHERE id = $1', [id]);
    return rowCount;
  }

  /** DELETE /api/cache/clear-by-key/{cacheKey}: every entry of the key, in every namespace and tenant. */
  async clearByKey(cacheKey: string): Promise<number> {
    const { rowCount } = await this.db.query('DELETE FROM semantic_cache_entries WHERE cache_key = $1', [cacheKey]);
    return rowCount;
  }

  /** Deletes up to `limit` expired entries; returns how many. */
  async sweep(limit: number): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM semantic_cache_entries WHERE id IN (
         SELECT id FROM semantic_cache_entries WHERE expires_at <= now() LIMIT $1)`,
      [limit],
    );
    return rowCount;
  }
}

async function detectVector(db: Db): Promise<VectorMode> {
  try {
    const { rows } = await db.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'");
    if (rows.length > 0) return 'pgvector';
    await db.query('CREATE EXTENSION IF NOT EXISTS vector');
    return 'pgvector';
  } catch {
    // Not installed on this server, or not allowed to create it: the portable similarity serves.
    return 'portable';
  }
}

/** A real[] literal; the values were checked finite by the caller (an embedding with NaN is never stored). */
function realArray(v: readonly number[]): string {
  return `{${v.join(',')}}`;
}

function toEntry(r: EntryRow): CachedEntry {
  // json columns come back parsed from both drivers; a string is a JSON text stored as a string value.
  return { id: r.id, stream: r.stream, answer: r.answer, provider: r.provider, model: r.model };
}
