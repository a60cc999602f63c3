// Which provider a model-less call (files, batches, containers, video ids) goes to: the caller names it, since
// no model does. Several places may name it; they must agree.
import { GatewayError } from '../http/errors.ts';
import type { Runtime } from '../runtime.ts';

/** The header that names the provider of a model-less call (the reference's spelling). */
export const PROVIDER_HEADER = 'x-model-provider';

/** Where a request may name its provider; several places must agree. */
export interface ProviderSources {
  query?: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  /** The body's or form's `provider` field. */
  field?: string | undefined;
  /** A `<provider>/<model>` the body carries (a batch's `model`): its provider part. */
  model?: string | undefined;
}

/**
 * The provider a model-less call goes to. It may be named by the `provider` query parameter (the reference's
 * `x-model-provider` query spelling too), a `provider` body or form field, the `x-model-provider` header, or a
 * `<provider>/<model>`; names given in several places must be the same (400 otherwise, naming both).
 */
export function resolveProvider(rt: Runtime, src: ProviderSources): string {
  const named: [string, string][] = [];
  const add = (where: string, v: unknown) => {
    const s = Array.isArray(v) ? v[0] : v;
    if (typeof s === 'string' && s.trim() !== '') named.push([where, s.trim()]);
  };
  add('query parameter provider', src.query?.['provider']);
  add(`query parameter ${PROVIDER_HEADER}`, src.query?.[PROVIDER_HEADER]);
  add('field provider', src.field);
  add(`header ${PROVIDER_HEADER}`, src.headers[PROVIDER_HEADER]);
  if (src.model?.includes('/')) add('model', src.model.slice(0, src.model.indexOf('/')));
  const first = named[0];
  if (!first) {
    throw new GatewayError(
      'invalid_request',
      `name the provider: the provider query parameter (or form field), or the ${PROVIDER_HEADER} header`,
      { param: 'provider' },
    );
  }
  const other = named.find(([, v]) => v !== first[1]);
  if (other) {
    throw new GatewayError(
      'invalid_request',
      `${first[0]} says ${first[1]} but ${other[0]} says ${other[1]}: name one provider`,
      { param: 'provider' },
    );
  }
  const provider = first[1];
  if (!rt.adapters.has(provider)) {
    throw new GatewayError('invalid_request', `unknown provider ${JSON.stringify(provider.slice(0, 64))}`, {
      param: 'provider',
    });
  }
  if (!rt.state.snapshot.providers.has(provider)) {
    throw new GatewayError('provider_not_configured', `provider ${provider} is not configured`, {
      param: 'provider',
    });
  }
  return provider;
}
