// Shared pieces of the realtime end-to-end tests over TLS (realtime-sessions, realtime-calls-sdp): a gateway on
// real Postgres and Redis serving wss (the openai SDK's realtime WebSocket client only speaks wss) with a
// self-signed certificate, in front of the fake realtime upstream, the test model priced per output token; the
// SDK pointed at it, a session opened through the SDK's realtime client, and the HTTP answer of a refused upgrade.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createRealtimeFake, type RealtimeFake } from '../fakes/realtime-openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { upgradeRefusal } from '../harness/ws-refusal.ts';
import { adminJson, type Json, waitFor } from './governance-helpers.ts';

export const OPENAI_KEY = 'sk-realtime-upstream-0123456789';
export const AZURE_KEY = 'azure-realtime-upstream-0123456789';
/** USD per output token of the test model (input free): a response of the fake costs 1000 of them. */
const OUTPUT_PRICE = 0.000001;
export const RESPONSE_COST_NANO = 1000 * 1000;
/** What the gateway reserves for a response when neither the session nor the price bounds its output. */
export const RESERVATION_NANO = 4096 * 1000;

export interface Session {
  rt: OpenAIRealtimeWS;
  events: Json[];
  errors: Error[];
  closed: Promise<{ code: number; reason: string }>;
}

export interface RealtimeTlsEnv {
  readonly fake: RealtimeFake;
  readonly gw: TestGateway;
  /** The gateway's self-signed certificate, for clients that must trust it. */
  readonly cert: Buffer;
  /** The gateway's base URL as wss://. */
  readonly wss: string;
  /** The SDK at a mount of the gateway (fetches trust the certificate through the global dispatcher). */
  client(apiKey: string, prefix?: string): OpenAI;
  /** Opens a session through the SDK's realtime WebSocket client; resolves once the socket is open. */
  openSession(apiKey: string, model: string, prefix?: string): Promise<Session>;
  /** Opens an upgrade and returns the HTTP answer that refused it (status and JSON body). */
  upgradeStatus(
    url: string,
    headers: Record<string, string>,
    protocols?: string[],
  ): Promise<{ code: number; body: Json }>;
}

/** Mints a one-day self-signed certificate for 127.0.0.1 into `dir`; the key and certificate paths. */
function selfSignedCert(dir: string): { key: string; crt: string } {
  const key = join(dir, 'key.pem');
  const crt = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-keyout', key, '-out', crt, '-days', '1', '-subj', '/CN=127.0.0.1'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1'],
    ],
    { stdio: 'ignore' },
  );
  return { key, crt };
}

/**
 * Starts the fake realtime upstream and a TLS gateway with openai, azure (gpt-realtime aliased to a deployment)
 * and anthropic keys at it, for the calling test file; resets the fake before each test and stops both after the
 * file. Read the fields inside tests and hooks only (beforeAll fills them in).
 */
export function useRealtimeTlsGateway(): RealtimeTlsEnv {
  let fake: RealtimeFake | undefined;
  let gw: TestGateway | undefined;
  let dir: string | undefined;
  let cert: Buffer | undefined;
  let previousDispatcher: ReturnType<typeof getGlobalDispatcher> | undefined;

  beforeAll(async () => {
    fake = await createRealtimeFake().start();
    dir = mkdtempSync(join(tmpdir(), 'gw-rt-tls-'));
    const { key, crt } = selfSignedCert(dir);
    cert = readFileSync(crt);
    // The harness's admin calls use the global fetch: it trusts the test certificate for this file.
    previousDispatcher = getGlobalDispatcher();
    setGlobalDispatcher(new Agent({ connect: { ca: cert } }));
    gw = await startTestGateway({
      config: {
        providers: {
          openai: {
            network_config: { base_url: fake.url, max_retries: 0 },
            keys: [{ id: 'o1', name: 'openai-one', value: OPENAI_KEY, models: ['*'] }],
          },
          azure: {
            network_config: { base_url: fake.url, max_retries: 0 },
            keys: [
              {
                id: 'a1',
                name: 'azure-one',
                value: AZURE_KEY,
                models: ['*'],
                aliases: { 'gpt-realtime': 'my-realtime-deployment' },
              },
            ],
          },
          anthropic: {
            network_config: { base_url: fake.url, max_retries: 0 },
            keys: [{ id: 'n1', name: 'anthropic-one', value: 'sk-ant-0123456789abcdef', models: ['*'] }],
          },
        },
      },
      env: { GATEWAY_TLS_CERT_FILE: crt, GATEWAY_TLS_KEY_FILE: key },
    });
    await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
      scope: 'global',
      provider: 'openai',
      model: 'gpt-realtime',
      input_cost_per_token: 0,
      output_cost_per_token: OUTPUT_PRICE,
    });
  }, 60_000);

  afterAll(async () => {
    if (previousDispatcher) setGlobalDispatcher(previousDispatcher);
    await gw?.close();
    await fake?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => fake?.reset());

  const env: RealtimeTlsEnv = {
    get fake(): RealtimeFake {
      if (!fake) throw new Error('the realtime fake has not started');
      return fake;
    },
    get gw(): TestGateway {
      if (!gw) throw new Error('the gateway has not started');
      return gw;
    },
    get cert(): Buffer {
      if (!cert) throw new Error('the test certificate has not been made');
      return cert;
    },
    get wss(): string {
      return env.gw.url.replace(/^https:/, 'wss:');
    },
    client(apiKey, prefix = '/v1') {
      return new OpenAI({ baseURL: `${env.gw.url}${prefix}`, apiKey, maxRetries: 0 });
    },
    async openSession(apiKey, model, prefix = '/v1') {
      const rt = new OpenAIRealtimeWS({ model, options: { ca: env.cert } }, env.client(apiKey, prefix));
      const events: Json[] = [];
      const errors: Error[] = [];
      rt.on('event', (e) => events.push(e as unknown as Json));
      rt.on('error', (e) => errors.push(e));
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        rt.socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      await new Promise<void>((resolve, reject) => {
        rt.socket.once('open', () => resolve());
        rt.socket.once('error', reject);
      });
      return { rt, events, errors, closed };
    },
    upgradeStatus: (url, headers, protocols) =>
      upgradeRefusal(url, { headers, ca: env.cert, ...(protocols ? { protocols } : {}) }),
  };
  return env;
}

/** The session's events of `type`, once there are at least `n` of them. */
export function waitEvent(s: Session, type: string, n = 1): Promise<Json[]> {
  return waitFor(
    async () => s.events.filter((e) => e['type'] === type),
    (list) => list.length >= n,
  );
}
