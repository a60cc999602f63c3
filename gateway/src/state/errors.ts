// Errors of the state services; the HTTP layer maps `code` to a status (404, 409, 400).
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
