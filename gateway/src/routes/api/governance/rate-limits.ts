// GET /api/governance/rate-limits: every configured rate limit with its owner and current counters.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../../runtime.ts';

export function registerRateLimitRoutes(app: FastifyInstance, rt: Runtime): void {
  app.get('/governance/rate-limits', async () => {
    const rate_limits = await rt.state.rateLimits.list();
    return { rate_limits, total: rate_limits.length };
  });
}
