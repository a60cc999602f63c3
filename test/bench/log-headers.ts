// Micro-benchmark of the per-request header work of logging_headers / required_headers (config/log-headers.ts):
// the metadata scan and the required-header check over a typical SDK request's headers, with nothing configured
// (what every request pays) and with a configured list and labels. `node test/bench/log-headers.ts`; prints
// nanoseconds per call (median of 7 runs of N calls).
import { logMetadata, missingHeader } from '../../gateway/src/config/log-headers.ts';

const N = 2_000_000;
// What the openai SDK sends (node's lower-cased header object), plus a proxy's usual additions.
const sdkHeaders: Record<string, string> = {
  host: '127.0.0.1:8080',
  connection: 'keep-alive',
  accept: 'application/json',
  'content-type': 'application/json',
  'user-agent': 'OpenAI/JS 5.0.0',
  'x-stainless-lang': 'js',
  'x-stainless-package-version': '5.0.0',
  'x-stainless-os': 'Linux',
  'x-stainless-arch': 'x64',
  'x-stainless-runtime': 'node',
  'x-stainless-runtime-version': 'v24.0.0',
  'x-stainless-retry-count': '0',
  'x-stainless-timeout': '600',
  authorization: 'Bearer sk-0123456789abcdef',
  'x-forwarded-for': '10.0.0.1',
  'accept-encoding': 'gzip, deflate',
  'content-length': '120',
};
const labelled = { ...sdkHeaders, 'x-team': 'blue', 'x-gateway-lh-run': 'r-42', 'x-gateway-lh-user': 'ada' };

function measure(name: string, fn: () => unknown): void {
  const runs: number[] = [];
  let sink = 0;
  for (let r = 0; r < 7; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) if (fn() !== undefined) sink++;
    runs.push(Number(process.hrtime.bigint() - t0) / N);
  }
  runs.sort((a, b) => a - b);
  process.stdout.write(`| ${name} | ${runs[3]?.toFixed(1)} ns | (${sink > 0 ? 'live' : 'dead'}) |\n`);
}

process.stdout.write('| case | per call | |\n|---|---|---|\n');
measure('metadata, nothing configured, no x-gateway-lh-*', () => logMetadata(sdkHeaders, []));
measure('required check, nothing configured', () => missingHeader(sdkHeaders, []) ?? null);
measure('metadata, 2 configured + 2 labels', () => logMetadata(labelled, ['x-team', 'x-tenant']));
measure('required check, 2 configured', () => missingHeader(labelled, ['x-team', 'content-type']) ?? null);
