// Google Vertex AI, Gemini models (publishers/google): the Gemini body format at a project/region URL,
// authenticated with a Google OAuth token (auth.ts); Imagen edits (the capability models) are Vertex's alone.
// Anthropic and other partner models on Vertex are not served here.
import { createGoogleChat, type GoogleMethod } from '../gemini/adapter.ts';
import { sendGoogleJson } from '../gemini/errors.ts';
import { googleImages } from '../gemini/images.ts';
import { googleSpeech } from '../gemini/speech.ts';
import { joinUrl } from '../shared/http.ts';
import { pathSegment, pathSegments } from '../shared/url.ts';
import type { CallContext, ProviderAdapter } from '../types.ts';
import { createTokenSource, misconfigured } from './auth.ts';
import { fromPredictResponse, type PredictResponse, toPredictRequest } from './embeddings.ts';
import { imagenEditBody } from './imagen-edit.ts';
import { vertexRerank } from './rerank.ts';
import { vertexVideos } from './videos.ts';

type Ctx = Pick<CallContext, 'key' | 'network' | 'model'>;

const SAFE_SEGMENT = /^[A-Za-z0-9._-]+$/;

function vertexConfig(ctx: Pick<CallContext, 'key'>): { project: string; region: string; credentials?: string } {
  const cfg = ctx.key.vertex_key_config;
  if (!cfg?.project_id || !cfg.region) {
    throw misconfigured(`vertex key '${ctx.key.name}' needs vertex_key_config with project_id and region`);
  }
  // Both end up in the host name or path: refuse anything that could change where the request goes.
  if (!SAFE_SEGMENT.test(cfg.project_id) || !SAFE_SEGMENT.test(cfg.region)) {
    throw misconfigured(`vertex key '${ctx.key.name}' has an invalid project_id or region`);
  }
  return { project: cfg.project_id, region: cfg.region, credentials: cfg.auth_credentials || undefined };
}

/** `global` has no regional host; network.base_url replaces the origin (how tests reach a fake). */
export function vertexOrigin(region: string, baseUrl: string | undefined): string {
  if (baseUrl) return baseUrl;
  return region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;
}

/** Key aliases map a public model name to a Vertex id (a version, `endpoints/123` for a tuned model, ...). */
export function vertexModel(ctx: Pick<CallContext, 'key' | 'model'>): string {
  return ctx.key.aliases[ctx.model] ?? ctx.model;
}

export function vertexUrl(
  ctx: Ctx,
  model: string,
  method: GoogleMethod | 'predict' | 'predictLongRunning' | 'fetchPredictOperation',
): string {
  const { project, region } = vertexConfig(ctx);
  const resource = pathSegments(model.includes('/') ? model : `publishers/google/models/${model}`);
  const url = joinUrl(
    vertexOrigin(region, ctx.network.base_url),
    `/v1/projects/${pathSegment(project)}/locations/${pathSegment(region)}/${resource}:${method}`,
  );
  return method === 'streamGenerateContent' ? `${url}?alt=sse` : url;
}

export function createVertexProvider(name: string): ProviderAdapter {
  const tokens = createTokenSource();

  /** The key's service account, else the key's value as a ready access token, else Application Default Credentials. */
  async function auth(ctx: CallContext): Promise<Record<string, string>> {
    const { credentials } = vertexConfig(ctx);
    if (!credentials && ctx.key.value) return { authorization: `Bearer ${ctx.key.value}` };
    return { authorization: `Bearer ${await tokens.token(credentials, ctx)}` };
  }

  const chat = createGoogleChat({
    model: vertexModel,
    url: vertexUrl,
    auth,
    countTokensBody: (body) => body,
  });

  return {
    name,
    ...chat,
    rerank: vertexRerank(auth),
    speech: googleSpeech({ model: vertexModel, url: (ctx, model) => vertexUrl(ctx, model, 'generateContent'), auth }),

    async embeddings(req, ctx) {
      const model = vertexModel(ctx);
      const body = toPredictRequest(req);
      const res = await sendGoogleJson<PredictResponse>(ctx, {
        url: vertexUrl(ctx, model, 'predict'),
        headers: { ...(await auth(ctx)), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return fromPredictResponse(res, model, body.instances.length);
    },

    videos: vertexVideos(vertexUrl, vertexModel, auth),
    ...googleImages({ model: vertexModel, url: vertexUrl, auth, imagenEditBody }),
  };
}
