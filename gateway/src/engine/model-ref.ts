import { GatewayError } from '../http/errors.ts';

export interface ModelRef {
  provider: string;
  model: string;
}

/** `<provider>/<model>`, split at the first `/` (model ids may contain `/`, e.g. openrouter's). */
export function parseModelRef(value: string, param = 'model'): ModelRef {
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) {
    throw new GatewayError('invalid_request', `${param}: expected "<provider>/<model>", got "${value}"`, { param });
  }
  return { provider: value.slice(0, slash), model: value.slice(slash + 1) };
}
