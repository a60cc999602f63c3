// OpenAI: every operation, at https://api.openai.com/v1 with `Authorization: Bearer <key>`.
import type { Operation, ProviderAdapter } from '../types.ts';
import { createOpenAIStyleAdapter } from './adapter.ts';
import { openAIStyleBatches } from './batches.ts';
import { openAIStyleContainers } from './containers.ts';
import { apiRoot, authHeaders, BEARER, rootedEndpoints } from './endpoints.ts';
import { openAIStyleFiles, openaiHost } from './files.ts';
import { openAIStyleVideos } from './videos.ts';

/** `network_config.base_url` replaces this; it may be given with or without the trailing `/v1`. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com';

export const OPENAI_OPERATIONS: readonly Operation[] = [
  'list_models',
  'chat',
  'chat_stream',
  'text_completion',
  'text_completion_stream',
  'embeddings',
  'responses',
  'responses_stream',
  'count_tokens',
  'speech',
  'speech_stream',
  'transcription',
  'transcription_stream',
  'translation',
  'image_generation',
  'image_generation_stream',
  'image_edit',
  'image_edit_stream',
  'image_variation',
];

const endpoints = rootedEndpoints(OPENAI_DEFAULT_BASE_URL, '/v1', BEARER);

export function createOpenAIProvider(): ProviderAdapter {
  const adapter = createOpenAIStyleAdapter('openai', endpoints, OPENAI_OPERATIONS);
  adapter.videos = openAIStyleVideos({
    root: (ctx) => apiRoot(ctx.network.base_url ?? OPENAI_DEFAULT_BASE_URL, '/v1'),
    headers: (key) => authHeaders(BEARER, key),
    bodyModel: (ctx) => ctx.model,
  });
  adapter.files = openAIStyleFiles(openaiHost);
  adapter.batches = openAIStyleBatches(openaiHost);
  adapter.containers = openAIStyleContainers(openaiHost);
  return adapter;
}
