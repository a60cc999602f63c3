// `GET /genai/v1beta/models`: the models a Gemini API client can call, in Google's list shape. Gemini models are
// `models/<id>`; another provider's are `models/<provider>/<id>`, which the SDKs send back as they are.
import type { FastifyInstance } from 'fastify';
import { GOOGLE_ERROR_DOC } from '../../formats/genai/operations.ts';
import { GenaiModelList } from '../../formats/genai/schema.ts';
import type { Runtime } from '../../runtime.ts';
import type { ProviderEntry } from '../../state/snapshot.ts';
import { servedModels } from '../v1/models.ts';

interface ModelView {
  name: string;
  displayName: string;
  supportedGenerationMethods: string[];
}

export function registerGenaiModelList(f: FastifyInstance, rt: Runtime, version: string, suffix: string): void {
  const openapi = {
    operationId: `genaiListModels${suffix}`,
    summary: 'List the models, the Gemini API way',
    tags: ['Gemini API'],
    responses: { 200: { description: 'The models', json: GenaiModelList } },
    errorBody: GOOGLE_ERROR_DOC,
  };
  f.get(`/${version}/models`, { config: { openapi } }, async () => {
    const lists = await Promise.all([...rt.state.snapshot.providers.values()].map((e) => modelsOf(rt, e)));
    return { models: lists.flat() };
  });
}

/** The provider's served models; a gemini model by its own id, another provider's as `<provider>/<id>`. */
async function modelsOf(rt: Runtime, e: ProviderEntry): Promise<ModelView[]> {
  const ids = (await servedModels(rt, e)).map((m) => m.id);
  return ids.map((id) => {
    const name = e.name === 'gemini' ? id : `${e.name}/${id}`;
    const embeds = /embed/.test(id);
    return {
      name: `models/${name}`,
      displayName: name,
      supportedGenerationMethods: embeds ? ['embedContent', 'batchEmbedContents'] : ['generateContent', 'countTokens'],
    };
  });
}
