// Errors of the coordination layer: one class with a string code, like DbError.

export type CoordErrorCode =
  /** The shared store could not be reached at start-up. */
  | 'connection_failed'
  /** A command failed because the shared store is unreachable right now (the caller may degrade or retry). */
  | 'unavailable'
  /** A key holds another kind of value (a hash read as a string, or the reverse). */
  | 'wrong_type'
  /** A value cannot be incremented (not a number). */
  | 'not_a_number'
  | 'script_failed'
  | 'invalid_argument'
  | 'closed'
  /** Any other error the store reported. */
  | 'command_failed';

export class CoordError extends Error {
  override readonly name = 'CoordError';
  readonly code: CoordErrorCode;

  constructor(code: CoordErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/** A TTL in whole milliseconds (Redis PX/PEXPIRE take integers > 0). */
export function ttlArg(ttlMs: number): number {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0)
    throw new CoordError('invalid_argument', `TTL must be > 0 ms, got ${ttlMs}`);
  return Math.ceil(ttlMs);
}
