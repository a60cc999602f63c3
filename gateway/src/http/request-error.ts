import { messageOf } from '../util/errors.ts';
import type { ExtraFields } from './errors.ts';

/** An error on its way to the envelope, with the request's `extra_fields`. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  readonly error: unknown;
  readonly extra: ExtraFields;
  constructor(error: unknown, extra: ExtraFields) {
    super(messageOf(error));
    this.error = error;
    this.extra = extra;
  }
}
