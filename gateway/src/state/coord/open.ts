// Picks the coordinator: Redis when a URL is given (REDIS_URL, required with several pods), else in-process.
// Only the chosen one's module is loaded: ioredis stays out of a process that has no Redis.
import { createMemoryCoordinator } from './memory.ts';
import type { Coordinator } from './types.ts';

export interface OpenCoordinatorOptions {
  redisUrl?: string | undefined;
  /** Prefix of every key and channel (several gateways or test files can share one Redis). */
  keyPrefix?: string | undefined;
}

export async function openCoordinator(options: OpenCoordinatorOptions): Promise<Coordinator> {
  const keyPrefix = options.keyPrefix ?? '';
  if (options.redisUrl !== undefined && options.redisUrl !== '') {
    const { openRedisCoordinator } = await import('./redis.ts');
    return openRedisCoordinator({ url: options.redisUrl, keyPrefix });
  }
  return createMemoryCoordinator({ keyPrefix });
}
