// The operator as its own process (`node operator/src/main.ts`), the way its pod runs: for the Kubernetes suite.
import { type ChildProcess, spawn } from 'node:child_process';

export interface OperatorProcess {
  child: ChildProcess;
  identity: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM (releases the lease), then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash, the lease is not released. */
  kill(): Promise<void>;
}

export async function startOperatorProcess(identity: string, env: Record<string, string>): Promise<OperatorProcess> {
  const child = spawn(process.execPath, ['operator/src/main.ts'], {
    env: {
      ...process.env,
      POD_NAME: identity,
      OPERATOR_HEALTH_HOST: '127.0.0.1',
      OPERATOR_HEALTH_PORT: '0',
      GATEWAY_LOG_LEVEL: process.env['TEST_OPERATOR_LOG_LEVEL'] ?? 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    identity,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
