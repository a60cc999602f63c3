// Errors of the state services; the HTTP layer maps `code` to a status (404, 409, 400).
import { CoordError } from './coord/errors.ts';
import { DbError } from './db/errors.ts';

export type StateErrorCode = 'not_found' | 'conflict' | 'invalid' | 'owned_by_kubernetes';

export class StateError extends Error {
  override readonly name = 'StateError';
  readonly code: StateErrorCode;
  /** The request field the error is about, when there is one. */
  readonly param: string | undefined;
  constructor(code: StateErrorCode, message: string, param?: string) {
    super(message);
    this.code = code;
    this.param = param;
  }
}

/**
 * True when an error means Redis or Postgres cannot be reached right now (not a bad request or bad data):
 * the caller answers 503 and the client retries, instead of 500.
 */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof CoordError) return err.code === 'unavailable' || err.code === 'closed';
  if (err instanceof DbError)
    return err.code === 'connection_failed' || err.code === 'statement_timeout' || err.code === 'closed';
  return false;
}
