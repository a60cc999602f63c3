// Starts the real gateway (`node gateway/src/main.ts`) pointed at the mock upstream, waits for
// GET /health, then checks that one plain and one streamed chat completion work. Any failure gives
// a reason instead of an exception, so the benchmark can still measure the other targets.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { MOCK_TEXT } from './mock-anthropic.ts';
import { exited, type Spawned, spawnQuiet, stop } from './procs.ts';

export interface GatewayOptions {
  root: string;
  /** Temp directory for config.json and the PGlite data. */
  dir: string;
  port: number;
  mockOrigin: string;
  /** Postgres to use instead of the embedded PGlite. */
  databaseUrl: string | undefined;
  /** Redis for the coordinator (rate limits, budget reservations) instead of the in-process one. */
  redisUrl: string | undefined;
  /** When set, run node with --cpu-prof into this directory. */
  profDir: string | undefined;
  log: (message: string) => void;
}

export type Started = { ok: true; gateway: Spawned } | { ok: false; reason: string };

// A busy 2-core machine (a test suite beside the bench) took 18 s to start it: room for that.
const HEALTH_TIMEOUT_MS = 60_000;
/** GATEWAY_ADMIN_API_KEY of the bench's gateway (loopback only, thrown away with it). */
export const ADMIN_KEY = 'bench-admin-key-123';

/** The launcher the gateway ships with (make run, the image, the chart): its node flags and MALLOC_ARENA_MAX. */
const LAUNCHER = 'gateway/bin/gateway';

export async function startGateway(o: GatewayOptions): Promise<Started> {
  const configPath = path.join(o.dir, 'config.json');
  const config = {
    client: { enforce_auth_on_inference: false },
    providers: {
      openai: {
        network_config: { base_url: o.mockOrigin, max_retries: 0 },
        keys: [{ name: 'bench', value: 'sk-bench-000000000000', models: ['*'] }],
      },
      // For the `/anthropic` target: same-format requests are forwarded to the mock's POST /v1/messages.
      anthropic: {
        network_config: { base_url: o.mockOrigin, max_retries: 0 },
        keys: [{ name: 'bench', value: 'sk-ant-bench-000000000000', models: ['*'] }],
      },
    },
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  // The gateway runs as it is shipped, through its launcher (which execs node: same pid). This Node's directory
  // goes first on PATH so the launcher finds the same Node 24; profiling flags travel in NODE_OPTIONS.
  const gateway = spawnQuiet(
    [],
    {
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
      ...(o.profDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${o.profDir}` } : {}),
      GATEWAY_PORT: String(o.port),
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: path.join(o.dir, 'data'),
      GATEWAY_LOG_LEVEL: 'warn',
      GATEWAY_ADMIN_API_KEY: ADMIN_KEY,
      GATEWAY_CONFIG: configPath,
      // Empty means unset to the gateway: a DATABASE_URL or REDIS_URL in the caller's shell must not leak in.
      DATABASE_URL: o.databaseUrl ?? '',
      REDIS_URL: o.redisUrl ?? '',
      GATEWAY_REDIS_PREFIX: '',
    },
    o.root,
    path.join(o.root, LAUNCHER),
  );
  const origin = `http://127.0.0.1:${o.port}`;
  const fail = async (reason: string): Promise<Started> => {
    await stop(gateway.proc);
    const tail = gateway.tail.slice(-15).join('\n  ');
    return { ok: false, reason: tail ? `${reason}; its last output:\n  ${tail}` : reason };
  };

  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  for (;;) {
    if (exited(gateway.proc)) return fail(`the gateway exited during start-up (code ${gateway.proc.exitCode})`);
    if (await healthy(origin)) break;
    if (Date.now() > deadline) return fail(`GET /health did not answer 200 within ${HEALTH_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  o.log('gateway healthy; checking one plain and one streamed chat completion');
  for (const stream of [false, true]) {
    const problem = await smoke(origin, stream);
    if (problem !== undefined) return fail(problem);
  }
  return { ok: true, gateway };
}

async function healthy(origin: string): Promise<boolean> {
  try {
    const res = await request(`${origin}/health`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

/** One chat completion through the gateway; a description of what is wrong, or undefined. */
async function smoke(origin: string, stream: boolean): Promise<string | undefined> {
  const what = `POST /v1/chat/completions${stream ? ' (stream)' : ''}`;
  try {
    const res = await request(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'hello' }],
        ...(stream ? { stream: true } : {}),
      }),
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return `${what} answered ${res.statusCode}: ${text.slice(0, 300)}`;
    if (stream && !text.includes('[DONE]')) return `${what} did not end with data: [DONE]: ${text.slice(-300)}`;
    if (!stream && !text.includes(MOCK_TEXT)) return `${what} lost the answer: ${text.slice(0, 300)}`;
    return undefined;
  } catch (error) {
    return `${what} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}
