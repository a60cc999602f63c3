// GET /openapi.json builds the document on first request (not when the app becomes ready) and does not keep it
// for the life of the process.
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { RouteRecord } from '../../src/http/route-family.ts';
import { registerOpenApiRoute } from '../../src/routes/openapi.ts';

const ROUTES: RouteRecord[] = [{ method: 'GET', url: '/things', scheme: 'admin', doc: undefined }];

async function appCountingBuilds() {
  const app = fastify();
  const counter = { builds: 0 };
  registerOpenApiRoute(app, () => {
    counter.builds++;
    return ROUTES;
  });
  await app.ready();
  return { app, counter };
}

describe('GET /openapi.json', () => {
  it('is built by the first request, not at start, and served from the kept bytes while they live', async () => {
    const { app, counter } = await appCountingBuilds();
    try {
      expect(counter.builds).toBe(0);
      const first = await app.inject({ method: 'GET', url: '/openapi.json' });
      expect(first.statusCode).toBe(200);
      expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(first.json()).toMatchObject({ openapi: '3.1.0', paths: { '/things': { get: {} } } });
      const second = await app.inject({ method: 'GET', url: '/openapi.json' });
      expect(second.body).toBe(first.body);
      expect(counter.builds).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('lets a full GC take the document back; the next request builds the same text again', async () => {
    setFlagsFromString('--expose-gc');
    // `gc` of a new context: this worker was not started with --expose-gc.
    const gc = runInNewContext('gc') as () => void;
    const { app, counter } = await appCountingBuilds();
    try {
      const first = (await app.inject({ method: 'GET', url: '/openapi.json' })).body;
      // A WeakRef's target survives the job that created it; collect after it ended.
      await sleep(10);
      gc();
      const again = (await app.inject({ method: 'GET', url: '/openapi.json' })).body;
      expect(counter.builds).toBe(2);
      expect(again).toBe(first);
    } finally {
      await app.close();
    }
  });
});
