// schemathesis against a running gateway (real Postgres + Redis, a fake OpenAI upstream): every operation of
// /openapi.json, positive and negative inputs, with the admin credential. No answer may be a 5xx, and every
// answer must match the document (status, content type, body schema). Bounded: a few examples per operation
// and a hard timeout.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { ensureSchemathesis, runSchemathesis } from '../harness/schemathesis.ts';

const RUN_TIMEOUT_MS = 240_000;

let gw: TestGateway;
let upstream: OpenAIFake;
let st: string;
let work: string;

beforeAll(async () => {
  st = ensureSchemathesis();
  upstream = createOpenAIFake();
  await upstream.start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: `${upstream.url}/v1`, max_retries: 0 },
          keys: [{ name: 'main', value: 'sk-test-upstream-key', models: ['*'] }],
        },
      },
    },
  });
  work = mkdtempSync(join(tmpdir(), 'schemathesis-'));
}, 360_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('schemathesis', () => {
  it(
    'finds no 5xx and no answer that breaks the document, in any operation',
    async () => {
      const checks = 'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance';
      const run = await runSchemathesis(
        st,
        [
          `${gw.url}/openapi.json`,
          '--checks',
          checks,
          '--mode',
          'all',
          '--phases',
          'examples,coverage,fuzzing,stateful',
          '--max-examples',
          '25',
          '--seed',
          '20261125',
          // One worker: hypothesis and CPython 3.11's ast module are not safe to share between threads
          // (runs with two failed at random with "AST constructor recursion depth mismatch").
          '--workers',
          '1',
          '--request-timeout',
          '20',
          '--generation-database',
          'none',
          '--suppress-health-check',
          'all',
          '--continue-on-failure',
          '--no-color',
          '--output-sanitize',
          'false',
          '-H',
          `Authorization: Bearer ${ADMIN_KEY}`,
        ],
        RUN_TIMEOUT_MS,
        work,
      );
      if (process.env['SCHEMATHESIS_LOG']) writeFileSync(process.env['SCHEMATHESIS_LOG'], run.output);
      expect(run.timedOut, 'schemathesis finished within its time bound').toBe(false);
      // Its report names every failing operation with a curl line to reproduce it.
      expect(run.code, run.output.slice(-20_000)).toBe(0);
      const selected = /Selected: (\d+)\/(\d+)/.exec(run.output);
      expect(selected?.[1], 'every operation selected').toBe(selected?.[2]);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
