// Where a Bedrock key's AWS credentials come from: the key's own access_key/secret_key when it has them, else the
// AWS default credential chain (environment, shared config/SSO, IRSA web identity, EKS Pod Identity, ECS task role,
// EC2 instance profile). The chain is resolved on first use; the SDK caches what it finds and fetches new
// credentials five minutes before they expire, sharing one fetch between concurrent callers.
// The AWS SDK's credential providers (~2 MB of heap with their @smithy dependencies) are loaded when the first key
// without static credentials needs the chain, not at start.
import type { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { ProviderError } from '../errors.ts';
import type { NetworkConfig, ProviderKey } from '../types.ts';
import { bedrockConfig } from './signing.ts';

type ChainProvider = ReturnType<typeof fromNodeProviderChain>;
export type AwsCredentials = Awaited<ReturnType<ChainProvider>>;

export interface CredentialSource {
  credentials(key: ProviderKey, network: Pick<NetworkConfig, 'timeout_ms'>): Promise<AwsCredentials>;
}

const WHAT_TO_CONFIGURE =
  'set access_key and secret_key on the key, or give the gateway AWS credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ' +
  'a web identity (IRSA: AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE, set by an eks.amazonaws.com/role-arn ' +
  'ServiceAccount annotation), EKS Pod Identity, an ECS task role, an instance profile, or AWS_PROFILE';

/** One chain per region (web identity and role credentials come from that region's STS), per adapter. */
export function createCredentialSource(): CredentialSource {
  const chains = new Map<string, ChainProvider>();

  async function chainFor(region: string, timeoutMs: number): Promise<ChainProvider> {
    const existing = chains.get(region);
    if (existing) return existing;
    const { fromNodeProviderChain } = await import('@aws-sdk/credential-providers');
    // Concurrent first callers share the chain that was stored first (and so its cache of credentials).
    let chain = chains.get(region);
    if (!chain) {
      chain = fromNodeProviderChain({
        // Bounds STS and SSO calls (the instance and container metadata lookups have their own 1 s timeout).
        clientConfig: {
          region,
          requestHandler: { connectionTimeout: timeoutMs, requestTimeout: timeoutMs, throwOnRequestTimeout: true },
        },
      });
      chains.set(region, chain);
    }
    return chain;
  }

  return {
    async credentials(key, network) {
      const cfg = bedrockConfig(key);
      if (cfg.access_key && cfg.secret_key) {
        return {
          accessKeyId: cfg.access_key,
          secretAccessKey: cfg.secret_key,
          ...(cfg.session_token ? { sessionToken: cfg.session_token } : {}),
        };
      }
      // Outside the try: a failure to load the AWS SDK is the installation's, not a credentials answer.
      const chain = await chainFor(cfg.region, network.timeout_ms);
      try {
        return await chain();
      } catch (err) {
        throw chainError(key.name, err);
      }
    },
  };
}

/**
 * Nothing in the chain applies: the gateway's setup is at fault (500, provider_key_misconfigured). A source that
 * applies but is refused (STS denies the role) is an authentication failure; no answer at all is a network error.
 */
function chainError(keyName: string, err: unknown): ProviderError {
  const detail = err instanceof Error ? err.message : String(err);
  const name = err instanceof Error ? err.name : '';
  if (name === 'CredentialsProviderError') {
    return new ProviderError(
      'invalid_request',
      `bedrock key '${keyName}' has no access_key/secret_key and the AWS default credential chain found no credentials (${detail}): ${WHAT_TO_CONFIGURE}`,
      { status: 500, code: 'provider_key_misconfigured', cause: err },
    );
  }
  const status = httpStatusOf(err);
  if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
    return new ProviderError('upstream', `bedrock: AWS refused the gateway's credentials: ${name}: ${detail}`, {
      status: 401,
      type: 'authentication_error',
      cause: err,
    });
  }
  if (status !== undefined) {
    return new ProviderError('upstream', `bedrock: could not obtain AWS credentials: ${name}: ${detail}`, {
      status,
      cause: err,
    });
  }
  const timedOut = /timeout/i.test(name) || /timed? ?out/i.test(detail);
  return new ProviderError(timedOut ? 'timeout' : 'network', `bedrock: could not obtain AWS credentials: ${detail}`, {
    cause: err,
  });
}

/** AWS SDK errors carry the answer's status in `$metadata.httpStatusCode`. */
function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null || !('$metadata' in err)) return undefined;
  const meta = err.$metadata;
  if (typeof meta !== 'object' || meta === null || !('httpStatusCode' in meta)) return undefined;
  return typeof meta.httpStatusCode === 'number' ? meta.httpStatusCode : undefined;
}
