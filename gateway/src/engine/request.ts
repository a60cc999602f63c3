// What the engine needs to know about one inference request, read from headers and body.
import { GatewayError } from '../http/errors.ts';
import type { Pin } from './execute.ts';

type Headers = Record<string, string | string[] | undefined>;

function header(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `x-gateway-key-id` / `x-gateway-key-name` pin one registered key (not both). */
export function pinOf(h: Headers): Pin | undefined {
  const id = header(h, 'x-gateway-key-id');
  const name = header(h, 'x-gateway-key-name');
  if (id !== undefined && name !== undefined) {
    throw new GatewayError('invalid_request', 'send x-gateway-key-id or x-gateway-key-name, not both', {
      param: 'x-gateway-key-id',
    });
  }
  if (id !== undefined) return { by: 'id', value: nonEmpty(id, 'x-gateway-key-id') };
  if (name !== undefined) return { by: 'name', value: nonEmpty(name, 'x-gateway-key-name') };
  return undefined;
}

/** `x-gateway-session-id` keeps a conversation on the key it was first given. */
export function sessionOf(h: Headers): string | undefined {
  const s = header(h, 'x-gateway-session-id');
  if (s === undefined) return undefined;
  if (s.length === 0 || s.length > 256) {
    throw new GatewayError('invalid_request', 'x-gateway-session-id: 1 to 256 characters', {
      param: 'x-gateway-session-id',
    });
  }
  return s;
}

function nonEmpty(v: string, name: string): string {
  if (v.trim() === '') throw new GatewayError('invalid_request', `${name}: empty`, { param: name });
  return v.trim();
}
