// The operator as its own process (`node operator/src/main.ts`), the way its pod runs: for the Kubernetes suite.
import type { ChildProcess } from 'node:child_process';
import { spawnNodeScript } from './proc.ts';

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
  const { child, output, exited } = spawnNodeScript('operator/src/main.ts', {
    POD_NAME: identity,
    OPERATOR_HEALTH_HOST: '127.0.0.1',
    OPERATOR_HEALTH_PORT: '0',
    GATEWAY_LOG_LEVEL: process.env['TEST_OPERATOR_LOG_LEVEL'] ?? 'info',
    ...env,
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    identity,
    output,
    stop: async () => {
      if (!running()) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (!running()) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
