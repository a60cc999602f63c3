// Shared setup of the /ws tests (live-updates.test.ts, live-access.test.ts): two gateways on one store, and a
// client that collects every message.
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import WebSocket from 'ws';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';
import { upgradeRefusal } from '../harness/ws-refusal.ts';
import type { Json } from './governance-helpers.ts';

// Live bindings: a test file that called useLivePods() reads the current gateways through these.
export let fake: OpenAIFake;
export let a: TestGateway;
export let b: TestGateway;
export const HEARTBEAT_MS = 250;
export const MAX_CLIENTS = 3;

/** Both pods' configuration: one OpenAI key on the fake. */
export function config(): Record<string, unknown> {
  return {
    providers: {
      openai: {
        network_config: { base_url: fake.url, max_retries: 0 },
        keys: [{ id: 'k1', name: 'key-one', value: 'sk-one-aaaaaaaaaaaaaaaaaaaa', models: ['*'] }],
      },
    },
  };
}

/** Every client a test opened: closed after it, pass or fail, so the next test starts with none. */
const opened: Live[] = [];

/**
 * Two gateways on one Postgres + Redis (pod A, and pod B with a short heartbeat and a low client bound) for the
 * calling test file; every client a test opened is closed after it.
 */
export function useLivePods(): void {
  beforeAll(async () => {
    fake = await createOpenAIFake().start();
    a = await startTestGateway({ config: config() });
    // A second pod on the same store, with a short heartbeat and a low client bound.
    b = await startTestGateway({
      config: config(),
      databaseUrl: a.databaseUrl,
      redisKeyPrefix: a.redisKeyPrefix,
      live: { heartbeatMs: HEARTBEAT_MS, maxClients: MAX_CLIENTS },
    });
  }, 60_000);

  afterEach(async () => {
    for (const c of opened.splice(0)) c.ws.terminate();
    await waitFor(() => a.rt.live.size === 0 && b.rt.live.size === 0, 5_000, 'the hubs to drop every client');
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.stop();
  });
}

export interface Live {
  ws: WebSocket;
  messages: Json[];
  closed: Promise<{ code: number; reason: string }>;
}

export function wsUrl(gw: TestGateway, query = ''): string {
  return `${gw.url.replace(/^http/, 'ws')}/ws${query}`;
}

/** Opens /ws and collects every message; rejects when the upgrade is refused. */
export async function open(
  gw: TestGateway,
  opts: { headers?: Record<string, string>; query?: string; autoPong?: boolean } = {},
): Promise<Live> {
  const ws = new WebSocket(wsUrl(gw, opts.query), { headers: opts.headers ?? {}, autoPong: opts.autoPong ?? true });
  const messages: Json[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data)) as Json));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once('close', (code, reason) => resolve({ code, reason: String(reason) }));
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
  });
  const live = { ws, messages, closed };
  opened.push(live);
  return live;
}

export async function closeAll(gw: TestGateway, ...clients: Live[]): Promise<void> {
  for (const c of clients) c.ws.close();
  await Promise.all(clients.map((c) => c.closed));
  await waitFor(() => gw.rt.live.size === 0, 5_000, 'the hub to forget its clients');
}

/** The first message that `match`es, waiting for it. */
export async function next(live: Live, match: (m: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  await waitFor(() => live.messages.some(match), timeoutMs, 'a live message');
  return live.messages.find(match) as Json;
}

export const admin = { authorization: `Bearer ${ADMIN_KEY}` };

export const refusal = (url: string, headers: Record<string, string>) => upgradeRefusal(url, { headers });

export function expectRefusal(r: { code: number; body: Json }, status: number, code: string): void {
  expect(r.code, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ is_gateway_error: true, status_code: status, error: { code } });
}
