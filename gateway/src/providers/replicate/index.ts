// Replicate (api.replicate.com): image generations and edits as predictions on the models API or, with the key's
// `replicate_key_config.use_deployments_endpoint`, the deployments API. `Authorization: Bearer <token>`.
import type { ProviderAdapter } from '../types.ts';
import { replicateImageEdit, replicateImageGeneration } from './images.ts';

export { REPLICATE_BASE_URL } from './predictions.ts';

export function createReplicateProvider(name = 'replicate'): ProviderAdapter {
  return {
    name,
    imageGeneration: replicateImageGeneration,
    imageEdit: replicateImageEdit,
  };
}
