// The semantic cache plugin: per request, the exact layer (the entry whose cache_id is this request's) and the
// semantic layer (the prompt's embedding against the scope's stored ones, cosine >= threshold); on a miss, the
// successful answer is stored for the next caller of the same tenant, key and scope. Entries live in Postgres
// (state/services/cache). The cache never fails a request: a store or embedding failure is logged and the
// request runs as a miss.

import type { ExecOutcome } from '../../engine/execute.ts';
import type { CacheDebug, CacheHit, CacheLookup, CacheRequest } from '../../engine/hooks.ts';
import type { Principal } from '../../http/auth.ts';
import { GatewayError } from '../../http/errors.ts';
import type { CacheScope, CacheStore, VectorMode } from '../../state/services/cache/index.ts';
import { messageOf } from '../../util/errors.ts';
import type { SemanticCacheConfig } from './config.ts';
import type { Embedded, Embedder } from './embed.ts';
import { parseCacheHeaders } from './headers.ts';
import { cacheIdOf, conversationLength, normalise, promptText, scopeOf } from './key.ts';

/** Operations whose answers are cached: generation and embeddings (never jobs, uploads or token counts). */
export const CACHEABLE = new Set(['chat_completion', 'text_completion', 'responses', 'embedding']);
/** Answers larger than this (as JSON) are not stored. */
export const MAX_ENTRY_BYTES = 1024 * 1024;
/** The newest entries of a scope compared by the semantic layer at most. */
export const MAX_CANDIDATES = 500;
/** Expired entries deleted per sweep statement, and the time between sweeps. */
const SWEEP_BATCH = 1000;
const SWEEP_EVERY_MS = 60_000;

export interface SemanticCacheDeps {
  store: CacheStore;
  embed: Embedder;
  log: { warn(obj: object, msg: string): void };
  /** Whether the plugin is on now (the sweeper idles while it is off). */
  enabled: () => boolean;
}

export class SemanticCache {
  readonly store: CacheStore;
  private readonly deps: SemanticCacheDeps;
  private readonly writes = new Set<Promise<void>>();
  private sweeper: NodeJS.Timeout | undefined;
  private mode: VectorMode | undefined;

  constructor(deps: SemanticCacheDeps) {
    this.deps = deps;
    this.store = deps.store;
    // At start: pgvector when the database has it (or lets us create it), else portable SQL.
    deps.store.vectorMode().then(
      (m) => {
        this.mode = m;
      },
      () => undefined,
    );
  }

  /** The plugin's status line for /api/plugins. */
  status(cfg: SemanticCacheConfig): { status: 'active'; logs: string[] } {
    const similarity = this.mode === 'pgvector' ? "pgvector's cosine distance" : 'portable SQL over real[]';
    return {
      status: 'active',
      logs: [
        cfg.provider && cfg.embedding_model
          ? `exact and semantic layers: embeddings from ${cfg.provider}/${cfg.embedding_model}, similarity by ${similarity}`
          : 'exact layer only: set provider and embedding_model for the semantic layer',
      ],
    };
  }

  /** Resolves when every store started so far has been written (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.writes.size > 0) await Promise.all(this.writes);
  }

  vectorMode(): Promise<VectorMode> {
    return this.store.vectorMode();
  }

  /** Starts deleting expired entries periodically (any pod may: the delete is idempotent). */
  startSweeping(everyMs = SWEEP_EVERY_MS): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.sweep(), everyMs);
    this.sweeper.unref();
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.flush();
  }

  /** Deletes expired entries in batches; resolves to how many. */
  async sweep(): Promise<number> {
    if (!this.deps.enabled()) return 0;
    let total = 0;
    try {
      for (let i = 0; i < 20; i++) {
        const n = await this.store.sweep(SWEEP_BATCH);
        total += n;
        if (n < SWEEP_BATCH) break;
      }
    } catch (err) {
      this.deps.log.warn({ err: messageOf(err) }, 'semantic cache: deleting expired entries failed');
    }
    return total;
  }

  async lookup(cfg: SemanticCacheConfig, req: CacheRequest): Promise<CacheLookup | undefined> {
    if (!CACHEABLE.has(req.requestType)) return undefined;
    const h = parseCacheHeaders(req.input.headers);
    if (!h.ok) throw new GatewayError('invalid_request', h.error, { param: h.header });
    const cacheKey = h.value.key ?? cfg.default_cache_key;
    if (cacheKey === undefined) return undefined;
    const normalised = normalise(req.input.body, cfg.exclude_system_prompt);
    if (!normalised || conversationLength(normalised) > cfg.conversation_history_threshold) return undefined;
    const where: CacheScope = {
      namespace: cfg.vector_store_namespace,
      tenant: tenantOf(req.principal),
      cacheKey,
      scope: scopeOf({
        format: req.format,
        requestType: req.requestType,
        stream: req.stream,
        model: req.input.model,
        byProvider: cfg.cache_by_provider,
        byModel: cfg.cache_by_model,
      }),
    };
    const cacheId = cacheIdOf(where, normalised);
    const ttlSeconds = h.value.ttlSeconds ?? cfg.ttl_seconds;
    const threshold = h.value.threshold ?? cfg.threshold;
    try {
      if (h.value.type !== 'semantic') {
        const e = await this.store.get(cacheId, where.tenant);
        if (e && e.stream === req.stream) {
          return this.session(
            where,
            { cache_hit: true, cache_id: e.id, hit_type: 'direct' },
            e,
            undefined,
            ttlSeconds,
            true,
          );
        }
      }
      // The semantic layer: configured, asked for (or not excluded), and not for embeddings (a similar text's
      // vector is not this text's vector).
      let embedded: Embedded | undefined;
      const semantic =
        h.value.type !== 'direct' && cfg.provider && cfg.embedding_model && req.requestType !== 'embedding';
      const text = semantic ? promptText(normalised) : '';
      if (semantic && text !== '') {
        embedded = await this.embed(cfg, text, req);
      }
      const debug: CacheDebug = { cache_hit: false, cache_id: cacheId };
      if (embedded) {
        Object.assign(debug, {
          provider_used: embedded.provider,
          model_used: embedded.model,
          input_tokens: embedded.inputTokens,
          threshold,
        });
        const near = await this.store.nearest({
          ...where,
          embedding: embedded.vector,
          threshold,
          maxCandidates: MAX_CANDIDATES,
        });
        if (near && near.entry.stream === req.stream) {
          Object.assign(debug, {
            cache_hit: true,
            cache_id: near.entry.id,
            hit_type: 'semantic',
            similarity: near.similarity,
          });
          return this.session(where, debug, near.entry, undefined, ttlSeconds, true);
        }
      }
      const store = { id: cacheId, embedding: embedded?.vector };
      return this.session(where, debug, undefined, store, ttlSeconds, h.value.noStore);
    } catch (err) {
      this.deps.log.warn(
        { request_id: req.input.id, err: messageOf(err) },
        'semantic cache lookup failed; the request runs uncached',
      );
      return undefined;
    }
  }

  /** The embedding of the prompt; undefined (a miss without the semantic layer) when the call fails. */
  private async embed(cfg: SemanticCacheConfig, text: string, req: CacheRequest): Promise<Embedded | undefined> {
    try {
      const e = await this.deps.embed({
        model: `${cfg.provider}/${cfg.embedding_model}`,
        text,
        dimensions: cfg.dimension,
        owners: req.input.owners,
        signal: req.input.signal,
      });
      if (cfg.dimension !== undefined && e.vector.length !== cfg.dimension) {
        throw new Error(`the embedding has ${e.vector.length} dimensions, the settings say ${cfg.dimension}`);
      }
      return e;
    } catch (err) {
      this.deps.log.warn(
        { request_id: req.input.id, err: messageOf(err) },
        'semantic cache: the embedding call failed; exact matches only',
      );
      return undefined;
    }
  }

  private session(
    where: CacheScope,
    debug: CacheDebug,
    hit: CacheHit | undefined,
    entry: { id: string; embedding: number[] | undefined } | undefined,
    ttlSeconds: number,
    noStore: boolean,
  ): CacheLookup {
    const put = (answer: string, stream: boolean, o: ExecOutcome) => {
      if (!entry || noStore || answer.length > MAX_ENTRY_BYTES) return;
      const w = this.store
        .put({
          ...where,
          id: entry.id,
          stream,
          answer,
          provider: o.provider,
          model: o.resolvedModel,
          embedding: entry.embedding,
          ttlSeconds,
        })
        .catch((err: unknown) =>
          this.deps.log.warn({ cache_id: entry.id, err: messageOf(err) }, 'semantic cache: storing an answer failed'),
        )
        .finally(() => this.writes.delete(w));
      this.writes.add(w);
    };
    return {
      debug,
      hit,
      store(value, outcome) {
        if (!entry || noStore || !isPlainJson(value)) return;
        const text = safeJson(value);
        if (text !== undefined) put(text, false, outcome);
      },
      record(chunks, outcome) {
        if (!entry || noStore) return chunks;
        return recorded(chunks, (text) => put(text, true, outcome));
      },
    };
  }
}

/** Passes chunks through, keeping their JSON; `done` gets the array only when the stream ended normally. */
async function* recorded<C>(chunks: AsyncIterable<C>, done: (json: string) => void): AsyncGenerator<C> {
  const kept: string[] = [];
  let size = 2;
  let keeping = true;
  for await (const chunk of chunks) {
    if (keeping) {
      const text = isPlainJson(chunk) ? safeJson(chunk) : undefined;
      size += (text?.length ?? 0) + 1;
      if (text === undefined || size > MAX_ENTRY_BYTES) {
        keeping = false;
        kept.length = 0;
      } else kept.push(text);
    }
    yield chunk;
  }
  // Reached only when the upstream ended the stream: a failure throws, a client that left stops the loop.
  if (keeping) done(`[${kept.join(',')}]`);
}

function isPlainJson(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function safeJson(v: unknown): string | undefined {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}

/** Whose entries a request reads and writes: a virtual key's own, else its credential's. */
export function tenantOf(p: Principal | null): string {
  switch (p?.kind) {
    case 'virtual_key':
      return `vk:${p.vk.id}`;
    case 'token':
      return `token:${p.name}`;
    case 'basic':
      return `basic:${p.username}`;
    case 'admin':
      return `admin:${p.name}`;
    default:
      return 'anonymous';
  }
}
