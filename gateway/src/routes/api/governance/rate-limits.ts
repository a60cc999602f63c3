// GET /api/governance/rate-limits: every configured rate limit with its owner and current counters.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../../runtime.ts';
import { RateLimitList } from '../../../schemas/api-views.ts';

export function registerRateLimitRoutes(app: FastifyInstance, rt: Runtime): void {
  app.get(
    '/governance/rate-limits',
    {
      config: {
        openapi: {
          operationId: 'listRateLimits',
          summary: 'List every rate limit with its owner and current counters',
          tags: ['Governance'],
          responses: { 200: { description: 'Every configured rate limit', json: RateLimitList } },
        },
      },
    },
    async () => {
      const rate_limits = await rt.state.rateLimits.list();
      return { rate_limits, total: rate_limits.length };
    },
  );
}
