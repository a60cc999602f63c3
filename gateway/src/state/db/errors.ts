// Errors of the database layer: one class, a string code the layers above map (e.g. unique_violation -> 409).

export type DbErrorCode =
  /** The server could not be reached or the connection broke. */
  | 'connection_failed'
  | 'unique_violation'
  | 'foreign_key_violation'
  | 'not_null_violation'
  | 'check_violation'
  /** Serialization failure or deadlock: the caller may retry the whole transaction. */
  | 'retryable'
  | 'statement_timeout'
  /** Any other error reported by Postgres (syntax, missing relation, ...). */
  | 'query_failed'
  /** The Db was closed, or a transaction handle was used after its transaction ended. */
  | 'closed'
  /** `db.query()` / `db.transaction()` called inside `db.transaction()`: would deadlock on PGlite. */
  | 'nested_query'
  | 'invalid_migration'
  | 'migration_failed'
  | 'schema_too_new';

export class DbError extends Error {
  override readonly name = 'DbError';
  readonly code: DbErrorCode;
  /** The SQLSTATE when Postgres reported the error (e.g. 23505). */
  readonly sqlState: string | undefined;
  /** The violated constraint, when Postgres names one. */
  readonly constraint: string | undefined;

  constructor(
    code: DbErrorCode,
    message: string,
    options: { sqlState?: string | undefined; constraint?: string | undefined; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.sqlState = options.sqlState;
    this.constraint = options.constraint;
  }
}

const SQLSTATE_CODES: Readonly<Record<string, DbErrorCode>> = {
  '23505': 'unique_violation',
  '23503': 'foreign_key_violation',
  '23502': 'not_null_violation',
  '23514': 'check_violation',
  '40001': 'retryable',
  '40P01': 'retryable',
  '57014': 'statement_timeout',
};

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);

function stringProp(value: object, key: string): string | undefined {
  const prop: unknown = Reflect.get(value, key);
  return typeof prop === 'string' ? prop : undefined;
}

/** Maps a driver error (pg, PGlite, network) to a DbError; the message never carries row values (no `detail`). */
export function toDbError(error: unknown): DbError {
  if (error instanceof DbError) return error;
  if (typeof error !== 'object' || error === null) return new DbError('query_failed', String(error), { cause: error });
  const message = stringProp(error, 'message') ?? 'database error';
  const code = stringProp(error, 'code');
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    // Class 08 is connection exceptions; 57P01..57P03 are server shutdown / not accepting connections.
    const connection = code.startsWith('08') || /^57P0[1-3]$/.test(code);
    const mapped = connection ? 'connection_failed' : (SQLSTATE_CODES[code] ?? 'query_failed');
    return new DbError(mapped, message, { sqlState: code, constraint: stringProp(error, 'constraint'), cause: error });
  }
  if (
    (code !== undefined && NETWORK_CODES.has(code)) ||
    /connection (terminated|timeout)|timeout exceeded when trying to connect/i.test(message)
  ) {
    return new DbError('connection_failed', message, { cause: error });
  }
  return new DbError('query_failed', message, { cause: error });
}

/** Postgres refused a value (SQLSTATE class 22: out of range, malformed, bad encoding): the data's fault. */
export function isDataException(error: unknown): boolean {
  return error instanceof DbError && error.sqlState !== undefined && error.sqlState.startsWith('22');
}
