// The logger the controller machinery writes to: the structural subset of pino's Logger it uses, so main.ts
// passes its pino child and tests pass a recorder.

export interface Log {
  debug(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

/** Discards everything (tests that do not look at logs). */
export const silentLog: Log = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
