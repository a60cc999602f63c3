// schemathesis (PyPI) in a pinned virtualenv under node_modules/.cache (see python-venv.ts), and a bounded run of
// it against a gateway's /openapi.json.
import { ensureVenv, type ProgramRun, runBounded } from './python-venv.ts';

export const SCHEMATHESIS_VERSION = '4.32.5';

/** The `st` executable of the pinned schemathesis, installing it into node_modules/.cache when missing or another version. */
export function ensureSchemathesis(): string {
  return ensureVenv({
    name: 'schemathesis-venv',
    install: [`schemathesis==${SCHEMATHESIS_VERSION}`],
    revision: SCHEMATHESIS_VERSION,
  }).bin('st');
}

export type SchemathesisRun = ProgramRun;

/** Runs `st run <args>`, killed after `timeoutMs` (its whole process group). */
export function runSchemathesis(st: string, args: string[], timeoutMs: number, cwd: string): Promise<SchemathesisRun> {
  return runBounded(st, ['run', ...args], { timeoutMs, cwd, env: { SCHEMATHESIS_TELEMETRY: 'false' } });
}
