// The Cohere v2 wire format (`/cohere`): errors as `{"message": ...}` with the HTTP status.
import type { WireFormat } from '../types.ts';

export const cohereFormat: WireFormat = {
  name: 'cohere',
  defaultProvider: 'cohere',
  error: (env) => ({ status: env.status_code, body: { id: env.event_id, message: env.error.message } }),
};
