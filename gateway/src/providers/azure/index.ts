// Azure OpenAI: the OpenAI wire format on Azure URLs with an `api-key` header; the operations are OpenAI's.
import { createOpenAIStyleAdapter } from '../openai/adapter.ts';
import type { Operation, ProviderAdapter } from '../types.ts';
import { azureEndpoints } from './endpoints.ts';

export { AZURE_DEFAULT_API_VERSION, azureDeployment, azureEndpoint } from './endpoints.ts';

export const AZURE_OPERATIONS: readonly Operation[] = [
  'list_models',
  'chat',
  'chat_stream',
  'text_completion',
  'text_completion_stream',
  'embeddings',
  'responses',
  'responses_stream',
];

export function createAzureProvider(): ProviderAdapter {
  return createOpenAIStyleAdapter('azure', azureEndpoints, AZURE_OPERATIONS);
}
