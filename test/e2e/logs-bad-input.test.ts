// /api/logs with hostile filters and ids: a clear 400 naming the field, never a database error (500).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

describe('/api/logs bad input', () => {
  it('refuses control characters in filters and in the id with 400', async () => {
    for (const path of [
      '/api/logs?provider=%00',
      '/api/logs?virtual_key_id=a%00b',
      '/api/logs?request_type=%0A',
      '/api/logs/%00',
      `/api/logs/${'x'.repeat(200)}`,
    ]) {
      const res = await gw.admin(path);
      expect(res.status, path).toBe(400);
      expect(await res.json(), path).toMatchObject({ error: { code: 'invalid_request' } });
    }
  });

  it('still answers a well-formed unknown id with 404 and plain filters with 200', async () => {
    expect((await gw.admin('/api/logs/0199aaaa-0000-7000-8000-000000000000')).status).toBe(404);
    const res = await gw.admin('/api/logs?provider=openai&limit=5');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      logs: [],
      pagination: { total_count: 0, limit: 5, offset: 0, sort_by: 'timestamp', order: 'desc' },
      stats: { total_requests: 0 },
      has_logs: false,
    });
  });
});
