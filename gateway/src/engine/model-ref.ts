import { GatewayError } from '../http/errors.ts';

export interface ModelRef {
  provider: string;
  model: string;
}

/** Longer names are not model ids (inference-profile ARNs, the longest real ones, stay well under this). */
export const MAX_MODEL_CHARS = 512;

/**
 * Characters no model id uses and that change what an upstream URL means once a provider puts the name in its
 * path (`?` starts a query, `#` a fragment, `%` an escape, `\` is a slash to URL parsers): with control
 * characters, whitespace and the characters URL parsers escape (`"<>^\`{|}`).
 */
const FORBIDDEN = /[?#%\\"<>^`{|}\s\p{Cc}]/u;

/**
 * Why `model` cannot be a model name, or undefined when it can. Names may span segments (`tunedModels/x`,
 * `meta-llama/Llama-3-8b`), but no segment may be empty, `.` or `..`: providers put model names in URL paths,
 * where such a segment would move the call to another path (`a/../../../internal/admin`).
 */
export function modelNameProblem(model: string): string | undefined {
  if (model.length > MAX_MODEL_CHARS) return `longer than ${MAX_MODEL_CHARS} characters`;
  const bad = FORBIDDEN.exec(model);
  if (bad) return `contains ${JSON.stringify(bad[0])}, which a model name cannot contain`;
  for (const segment of model.split('/')) {
    if (segment === '') return 'has an empty path segment (a leading, trailing or doubled "/")';
    if (segment === '.' || segment === '..') return `has a "${segment}" path segment`;
  }
  return undefined;
}

/** Throws 400 `invalid_request` naming `param` when `model` cannot be a model name (see modelNameProblem). */
export function checkModelName(model: string, param = 'model'): void {
  const problem = modelNameProblem(model);
  if (problem) throw new GatewayError('invalid_request', `${param}: the model name ${problem}`, { param });
}

/** `<provider>/<model>`, split at the first `/` (model ids may contain `/`, e.g. openrouter's). */
export function parseModelRef(value: string, param = 'model'): ModelRef {
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) {
    throw new GatewayError('invalid_request', `${param}: expected "<provider>/<model>", got ${quoted(value)}`, {
      param,
    });
  }
  const provider = value.slice(0, slash);
  // The provider name reaches messages and the log: the characters a model name cannot have, it cannot either.
  const bad = FORBIDDEN.exec(provider);
  if (bad) {
    throw new GatewayError('invalid_request', `${param}: the provider name contains ${JSON.stringify(bad[0])}`, {
      param,
    });
  }
  const model = value.slice(slash + 1);
  checkModelName(model, param);
  return { provider, model };
}

/** A caller's value in an error message: JSON-quoted (control characters escaped) and cut short. */
function quoted(value: string): string {
  return JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value);
}
