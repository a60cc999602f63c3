// Where an OpenAI-style provider lives: the URL of each route and the auth header. OpenAI itself, Azure and
// every OpenAI-compatible provider differ only here; the operations (chat.ts, stream.ts, ...) are shared.
import type { CallContext, ProviderKey } from '../types.ts';

export type OpenAIRoute =
  | 'chat'
  | 'completions'
  | 'embeddings'
  | 'responses'
  | 'input_tokens'
  | 'models'
  | 'speech'
  | 'transcriptions'
  | 'translations'
  | 'image_generations'
  | 'image_edits'
  | 'image_variations';

/** What a URL may depend on; `model` is absent when listing models. */
export type RouteContext = Pick<CallContext, 'key' | 'network'> & { model?: string };

export interface OpenAIStyleEndpoints {
  /** Full upstream URL of a route for this call; throws ProviderError('invalid_request') when it cannot be built. */
  url(route: OpenAIRoute, ctx: RouteContext): string;
  /** Auth (and content-type) headers for this key. */
  headers(key: ProviderKey): Record<string, string>;
  /** The model identifier the request body carries (Azure: the deployment name). */
  bodyModel(ctx: Pick<CallContext, 'key' | 'model'>): string;
}

/** How the key is presented: `Authorization: Bearer <key>` or a bare key in a named header (`api-key`). */
export interface AuthScheme {
  header: string;
  prefix: string;
}

export const BEARER: AuthScheme = { header: 'authorization', prefix: 'Bearer ' };

/** Paths below the API root, identical across OpenAI-compatible servers. */
export const OPENAI_PATHS: Readonly<Record<OpenAIRoute, string>> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  responses: '/responses',
  input_tokens: '/responses/input_tokens',
  models: '/models',
  speech: '/audio/speech',
  transcriptions: '/audio/transcriptions',
  translations: '/audio/translations',
  image_generations: '/images/generations',
  image_edits: '/images/edits',
  image_variations: '/images/variations',
};

/**
 * The API root from a base URL. `base` is everything before the version segment (`https://api.openai.com`,
 * `https://api.groq.com/openai`); a base that already ends with the version (`.../v1`) is taken as the root,
 * so `network_config.base_url` may be given either way.
 */
export function apiRoot(base: string, version: string): string {
  let b = base;
  while (b.endsWith('/')) b = b.slice(0, -1);
  return version === '' || b.endsWith(version) ? b : b + version;
}

/** Headers for a scheme; a key without a value sends no auth header at all (local servers such as Ollama). */
export function authHeaders(auth: AuthScheme, key: ProviderKey): Record<string, string> {
  if (!key.value) return { 'content-type': 'application/json' };
  return { 'content-type': 'application/json', [auth.header]: auth.prefix + key.value };
}

/** Endpoints of a provider that serves the OpenAI paths under one root (OpenAI and the compatible family). */
export function rootedEndpoints(defaultBase: string, version: string, auth: AuthScheme): OpenAIStyleEndpoints {
  return {
    url: (route, ctx) => apiRoot(ctx.network.base_url ?? defaultBase, version) + OPENAI_PATHS[route],
    headers: (key) => authHeaders(auth, key),
    bodyModel: (ctx) => ctx.model,
  };
}
