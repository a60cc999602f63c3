// /api/cache (reference paths and shapes): invalidating semantic cache entries. Thin adapters over the cache's
// store; they work whether the plugin is on or off (entries persist while it is off).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { documented } from '../../http/openapi.ts';
import type { PluginHost } from '../../plugins/host.ts';
import { CACHE_KEY_PATTERN, CACHE_KEY_RULE } from '../../plugins/semantic-cache/headers.ts';
import { StateError } from '../../state/index.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const Cleared = z
  .strictObject({
    message: z.string(),
    deleted: z.int().describe('How many entries were removed (0 when none matched)'),
  })
  .meta({ id: 'ClearCacheResponse' });
const CacheIdParams = z.object({
  cacheId: z.uuid().describe('`extra_fields.cache_debug.cache_id` of an answer'),
});
const CacheKeyParams = z.object({
  cacheKey: z.string().regex(CACHE_KEY_PATTERN).describe('The `x-gateway-cache-key` (or `default_cache_key`)'),
});

const doc = documented('Cache');

export function registerCacheRoutes(app: FastifyInstance, rt: { plugins: PluginHost }): void {
  const store = () => {
    const cache = rt.plugins.semanticCache;
    if (!cache) throw new Error('the semantic cache is not attached');
    return cache.store;
  };

  app.delete<{ Params: { cacheId: string } }>(
    '/cache/clear/:cacheId',
    doc({
      operationId: 'clearCacheByCacheId',
      summary: 'Clear one cache entry',
      description: 'Invalidates the entry with this cache ID (from `extra_fields.cache_debug.cache_id`).',
      params: CacheIdParams,
      responses: { 200: { description: 'Cleared (deleted: 0 when no entry had this ID)', json: Cleared } },
    }),
    async (req) => {
      const id = req.params.cacheId;
      if (!UUID.test(id)) throw new StateError('invalid', 'cacheId: expected a cache ID (a UUID)', 'cacheId');
      const deleted = await store().clearById(id.toLowerCase());
      return { message: deleted ? `cache entry ${id} cleared` : `no cache entry ${id}: nothing to clear`, deleted };
    },
  );

  app.delete<{ Params: { cacheKey: string } }>(
    '/cache/clear-by-key/:cacheKey',
    doc({
      operationId: 'clearCacheByCacheKey',
      summary: 'Clear every entry of a cache key',
      description: 'Invalidates every entry stored under this cache key, in every namespace and for every caller.',
      params: CacheKeyParams,
      responses: { 200: { description: 'Cleared', json: Cleared } },
    }),
    async (req) => {
      const key = req.params.cacheKey;
      if (!CACHE_KEY_PATTERN.test(key)) {
        throw new StateError('invalid', `cacheKey: a cache key is ${CACHE_KEY_RULE}`, 'cacheKey');
      }
      const deleted = await store().clearByKey(key);
      return { message: `${deleted} cache ${deleted === 1 ? 'entry' : 'entries'} of key ${key} cleared`, deleted };
    },
  );
}
