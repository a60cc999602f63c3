// Bedrock endpoints and SigV4-signed requests (signing done by @smithy/signature-v4, never by hand).
import { lazyModule } from '../../util/lazy-module.ts';
import { ProviderError } from '../errors.ts';
import { joinUrl, send, type UpstreamResponse } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { CallContext, ProviderKey } from '../types.ts';
import type { AwsCredentials, CredentialSource } from './credentials.ts';
import { parseBedrockError } from './errors.ts';

export const BEDROCK_SIGNING_SERVICE = 'bedrock';

export type BedrockOperation =
  | 'converse'
  | 'converse-stream'
  | 'invoke'
  | 'invoke-with-response-stream'
  | 'count-tokens';

type BedrockConfig = NonNullable<ProviderKey['bedrock_key_config']>;

export function bedrockConfig(key: ProviderKey): BedrockConfig {
  const cfg = key.bedrock_key_config;
  // Static keys come as a pair or not at all (then the AWS default credential chain supplies them).
  if (!cfg?.region || !cfg.access_key !== !cfg.secret_key) {
    throw new ProviderError('invalid_request', `bedrock key '${key.name}' has no complete bedrock_key_config`, {
      status: 500,
      code: 'provider_key_misconfigured',
    });
  }
  return cfg;
}

/** The model id the upstream sees: aliases may map a name to an inference-profile ARN. */
export function bedrockModelId(ctx: Pick<CallContext, 'model' | 'key'>): string {
  return ctx.key.aliases[ctx.model] ?? ctx.model;
}

/**
 * Same escaping as the AWS SDK's path labels: ARNs carry ':' and '/', which must not split the path (an
 * inference-profile ARN goes as one segment, `arn%3Aaws%3Abedrock%3A...%3Ainference-profile%2Fus.anthropic...`).
 * A label that is a dot segment or empty is refused (pathSegment).
 */
export function encodePathLabel(label: string): string {
  return pathSegment(label).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function bedrockUrl(ctx: Pick<CallContext, 'network' | 'key' | 'model'>, op: BedrockOperation): string {
  const base = ctx.network.base_url ?? `https://bedrock-runtime.${bedrockConfig(ctx.key).region}.amazonaws.com`;
  return joinUrl(base, `/model/${encodePathLabel(bedrockModelId(ctx))}/${op}`);
}

/** The signing packages, loaded by the first signed request (not at start); later requests find them loaded. */
const signerPackages = lazyModule(async () => {
  const [sig, hash] = await Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')]);
  return { SignatureV4: sig.SignatureV4, Hash: hash.Hash };
});

/**
 * Headers for a signed POST: the given headers plus host, x-amz-date, x-amz-content-sha256, the session
 * token when set, and authorization. Headers added later (network extra_headers) stay unsigned, which SigV4 allows.
 */
export async function signRequest(
  region: string,
  credentials: AwsCredentials,
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<Record<string, string>> {
  const { SignatureV4, Hash } = signerPackages.loaded() ?? (await signerPackages.get());
  const u = new URL(url);
  const sigv4 = new SignatureV4({
    service: BEDROCK_SIGNING_SERVICE,
    region,
    credentials,
    // The AWS SDK's own node:crypto-backed hash (what its Node clients use): a 5 MB body hashes ~4x faster
    // than the pure-JS sha256.
    sha256: Hash.bind(null, 'sha256'),
  });
  const signed = await sigv4.sign({
    method: 'POST',
    protocol: u.protocol,
    hostname: u.hostname,
    ...(u.port ? { port: Number(u.port) } : {}),
    path: u.pathname,
    query: Object.fromEntries(u.searchParams),
    headers: { ...headers, host: u.host },
    body,
  });
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** A signed JSON POST to one Bedrock operation. */
export type BedrockPost = (ctx: CallContext, op: BedrockOperation, body: string) => Promise<UpstreamResponse>;

/** No `accept` header, like the AWS SDK: the operation alone decides between JSON and an event stream. */
export function createBedrockPost(source: CredentialSource): BedrockPost {
  return async (ctx, op, body) => {
    const url = bedrockUrl(ctx, op);
    const credentials = await source.credentials(ctx.key, ctx.network);
    const region = bedrockConfig(ctx.key).region;
    const headers = await signRequest(region, credentials, url, body, { 'content-type': 'application/json' });
    return send(ctx, { url, headers, body }, parseBedrockError);
  };
}
