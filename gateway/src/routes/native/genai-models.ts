// `GET /genai/v1beta/models`: the models a Gemini API client can call, in Google's list shape. Gemini models are
// `models/<id>`; another provider's are `models/<provider>/<id>`, which the SDKs send back as they are.
import type { FastifyInstance } from 'fastify';
import { WILDCARD } from '../../config/allow-list.ts';
import { GenaiModelList } from '../../formats/genai/schema.ts';
import type { Runtime } from '../../runtime.ts';
import type { ProviderEntry } from '../../state/snapshot.ts';
import { messageOf } from '../../util/errors.ts';

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
  };
  f.get(`/${version}/models`, { config: { openapi } }, async () => {
    const lists = await Promise.all([...rt.state.snapshot.providers.values()].map((e) => modelsOf(rt, e)));
    return { models: lists.flat() };
  });
}

/** Explicit allow-lists name their models; a gemini key for every model (`*`) asks Google. */
async function modelsOf(rt: Runtime, e: ProviderEntry): Promise<ModelView[]> {
  const ids = new Set<string>();
  for (const k of e.keys) for (const m of k.models) if (m !== WILDCARD) ids.add(m);
  const wildcardKey = e.keys.find((k) => k.models[0] === WILDCARD);
  const adapter = rt.adapters.get(e.name);
  if (e.name === 'gemini' && wildcardKey && adapter?.listModels) {
    try {
      const listed = await adapter.listModels({
        provider: e.name,
        key: wildcardKey,
        network: { ...e.network, timeout_ms: Math.min(e.network.timeout_ms, 10_000) },
        signal: AbortSignal.timeout(10_000),
        dispatcher: rt.dispatcher,
      });
      for (const m of listed) ids.add(m.id);
    } catch (err) {
      rt.logger.warn({ provider: e.name, err: messageOf(err) }, 'listing provider models failed');
    }
  }
  return [...ids].sort().map((id) => {
    const name = e.name === 'gemini' ? id : `${e.name}/${id}`;
    const embeds = /embed/.test(id);
    return {
      name: `models/${name}`,
      displayName: name,
      supportedGenerationMethods: embeds ? ['embedContent', 'batchEmbedContents'] : ['generateContent', 'countTokens'],
    };
  });
}
