// What every service does with its inputs before touching the database: a body that fails its schema becomes one
// `invalid` StateError naming the first bad field (`param`), and a path parameter that no stored row can carry
// (empty, too long, control characters, broken Unicode) is refused as invalid before it reaches a query.
import type { z } from 'zod';
import { formatIssues, issueParam } from '../../config/issues.ts';
import { stringIssue } from '../../schemas/strings.ts';
import { StateError } from '../errors.ts';

/** The longest path parameter any row can have: ids and names are at most 128 characters. */
export const MAX_PATH_PARAM = 128;

/** A zod failure as the services report it: every issue in the message, the first one's field in `param`. */
export function invalidInput(error: z.ZodError, prefix = ''): StateError {
  return new StateError('invalid', formatIssues(error, prefix), issueParam(error, prefix));
}

/**
 * Checks an id or name taken from a request path (or the operator) before it is looked up. A value that cannot
 * name any row because of its characters or length is a 400 naming `param`; a well-formed value that names
 * nothing stays a 404 from the lookup.
 */
export function checkPathParam(value: string, param: string): void {
  if (value.length === 0) throw new StateError('invalid', `${param}: must not be empty`, param);
  if (value.length > MAX_PATH_PARAM) {
    throw new StateError('invalid', `${param}: at most ${MAX_PATH_PARAM} characters (got ${value.length})`, param);
  }
  const issue = stringIssue(value, 'line');
  if (issue) throw new StateError('invalid', `${param}: ${issue}`, param);
}
