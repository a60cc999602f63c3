// The OpenAI wire format: `/v1` (the unified API, where a model names its provider) and `/compat-a` (the OpenAI
// API as OpenAI serves it, where a bare model goes to `openai`). Errors are the gateway envelope: a superset of
// OpenAI's `{"error": {message, type, param, code}}` that OpenAI's SDKs read as their own.
import type { WireFormat } from '../types.ts';

export const unifiedFormat: WireFormat = {
  name: 'openai',
  defaultProvider: undefined,
  error: (env) => ({ status: env.status_code, body: env }),
};

export const openaiFormat: WireFormat = { ...unifiedFormat, defaultProvider: 'openai' };
