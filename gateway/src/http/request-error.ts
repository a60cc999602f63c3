import type { ExtraFields } from './errors.ts';

/** An error on its way to the envelope, with the request's `extra_fields`. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  readonly error: unknown;
  readonly extra: ExtraFields;
  constructor(error: unknown, extra: ExtraFields) {
    super(error instanceof Error ? error.message : String(error));
    this.error = error;
    this.extra = extra;
  }
}
