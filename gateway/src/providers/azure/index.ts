// Azure OpenAI: the OpenAI wire format on Azure URLs with an `api-key` header; the operations are OpenAI's.
import { createOpenAIStyleAdapter } from '../openai/adapter.ts';
import { OPENAI_OPERATIONS } from '../openai/index.ts';
import type { Operation, ProviderAdapter } from '../types.ts';
import { azureContainers } from './containers.ts';
import { azureEndpoints } from './endpoints.ts';
import { azureBatches, azureFiles } from './files.ts';
import { azureVideos } from './videos.ts';

export { AZURE_DEFAULT_API_VERSION, azureDeployment, azureEndpoint } from './endpoints.ts';

/** OpenAI's operations but token counting and image variations: Azure has neither route. */
export const AZURE_OPERATIONS: readonly Operation[] = OPENAI_OPERATIONS.filter(
  (op) => op !== 'count_tokens' && op !== 'image_variation',
);

export function createAzureProvider(): ProviderAdapter {
  return {
    ...createOpenAIStyleAdapter('azure', azureEndpoints, AZURE_OPERATIONS),
    videos: azureVideos,
    files: azureFiles,
    batches: azureBatches,
    containers: azureContainers,
  };
}
