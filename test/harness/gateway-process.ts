// A gateway as its own process (`node gateway/src/main.ts`), the way pods run: for multi-process tests.
import type { ChildProcess } from 'node:child_process';
import { freePort } from './ports.ts';
import { spawnNodeScript } from './proc.ts';

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export async function startGatewayProcess(env: Record<string, string>, timeoutMs = 30_000): Promise<GatewayProcess> {
  const port = await freePort();
  const { child, output } = spawnNodeScript('gateway/src/main.ts', {
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: String(port),
    GATEWAY_LOG_LEVEL: process.env['TEST_GATEWAY_LOG_LEVEL'] ?? 'warn',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  const proc: GatewayProcess = {
    child,
    url,
    output,
    stop: async () => {
      if (child.exitCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      return exited;
    },
  };
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}: ${output()}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return proc;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`gateway did not start within ${timeoutMs} ms: ${output()}`);
}
