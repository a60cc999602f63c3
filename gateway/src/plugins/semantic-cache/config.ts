// The semantic cache plugin's settings (config.json `plugins[]`, /api/plugins). `cleanup_on_shutdown` is refused
// (breaking change 16): entries persist across restarts.
import { z } from 'zod';
import { nameString } from '../../schemas/strings.ts';
import { CACHE_KEY_PATTERN, CACHE_KEY_RULE, MAX_TTL_SECONDS } from './headers.ts';

export const SemanticCacheConfig = z.strictObject({
  /**
   * Provider and model of the embeddings for the semantic layer (called through the engine, charged to the
   * caller's virtual key); without them only exact matches are served.
   */
  provider: nameString(64).optional(),
  embedding_model: nameString(256).optional(),
  /** Asked of the embedding model (`dimensions`) and checked on its answer; a new dimension takes a new namespace. */
  dimension: z.number().int().positive().max(16_000).optional(),
  /** Cosine similarity at or above which a stored answer is served. */
  threshold: z.number().min(0).max(1).default(0.8),
  /** Seconds an entry lives (x-gateway-cache-ttl overrides it per request). */
  ttl_seconds: z.number().int().positive().max(MAX_TTL_SECONDS).default(300),
  /** The collection entries live in; a new name starts an empty cache (new embedding model or dimension). */
  vector_store_namespace: nameString(128).default('default'),
  /** Cache key used when a request carries no x-gateway-cache-key (caching engages only with a key). */
  default_cache_key: z.string().regex(CACHE_KEY_PATTERN, `a cache key is ${CACHE_KEY_RULE}`).optional(),
  cache_by_model: z.boolean().default(true),
  cache_by_provider: z.boolean().default(true),
  /** System prompts take no part in the match (the exact hash and the embedded text). */
  exclude_system_prompt: z.boolean().default(false),
  /** Conversations with more turns than this are not cached. */
  conversation_history_threshold: z.number().int().min(1).max(1000).default(3),
});
export type SemanticCacheConfig = z.infer<typeof SemanticCacheConfig>;

export const SEMANTIC_CACHE_REMOVED: Record<string, string> = {
  cleanup_on_shutdown:
    'cleanup_on_shutdown was removed in 1.5.0: cache entries persist across restarts; clear them with DELETE /api/cache/clear/{cacheId} or /api/cache/clear-by-key/{cacheKey}, or point vector_store_namespace at a new name',
};
