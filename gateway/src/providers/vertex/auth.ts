// Google OAuth access tokens for Vertex through google-auth-library: the key's auth_credentials JSON (a
// service-account key, or any credential file the library reads) when set, else Application Default Credentials
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file, the metadata server: GKE Workload Identity, GCE, Cloud Run).
// The library caches each token and fetches a new one five minutes before it expires, one fetch for concurrent callers.
// It is loaded when the first client is built (a Vertex key's first request), not at start: ~2.5 MB of heap.
import { readFile } from 'node:fs/promises';
import type { AuthClient } from 'google-auth-library';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import type { CallContext } from '../types.ts';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** Where google-auth-library sends the service-account JWT grant, whatever the key file's token_uri says. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

const ADC_HELP =
  'give the key vertex_key_config.auth_credentials (a service-account JSON key) or a value (an access token), or ' +
  'give the gateway Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS naming a key file, or GKE ' +
  'Workload Identity (an iam.gke.io/gcp-service-account ServiceAccount annotation)';

/** A provider key that cannot work: the gateway's configuration, not the caller's request, is at fault. */
export function misconfigured(message: string, cause?: unknown): ProviderError {
  return new ProviderError('invalid_request', message, {
    status: 500,
    code: 'provider_key_misconfigured',
    ...(cause === undefined ? {} : { cause }),
  });
}

export interface TokenSource {
  /** A valid access token for these credentials (undefined: Application Default Credentials). */
  token(credentials: string | undefined, ctx: Pick<CallContext, 'network' | 'key'>): Promise<string>;
}

/** Clients live per adapter instance (per Runtime), keyed by the credentials text: a rotated key gets a new one. */
export function createTokenSource(): TokenSource {
  const clients = new Map<string, Promise<AuthClient>>();

  function clientFor(credentials: string | undefined, ctx: Pick<CallContext, 'network' | 'key'>): Promise<AuthClient> {
    const id = credentials ?? '';
    let client = clients.get(id);
    if (!client) {
      client = createClient(credentials, ctx.network.timeout_ms);
      // A failed setup is tried again next time (an ADC file or metadata server may appear later).
      client.catch(() => clients.delete(id));
      clients.set(id, client);
    }
    return client;
  }

  return {
    async token(credentials, ctx) {
      const client = await clientFor(credentials, ctx).catch((err: unknown) => {
        throw setupError(ctx.key.name, credentials !== undefined, err);
      });
      let token: string | null | undefined;
      try {
        ({ token } = await client.getAccessToken());
      } catch (err) {
        throw tokenError(ctx.key.name, err);
      }
      if (!token) throw new ProviderError('bad_response', 'vertex: token endpoint answered without an access_token');
      return token;
    },
  };
}

async function createClient(credentials: string | undefined, timeoutMs: number): Promise<AuthClient> {
  // Every token request (and metadata-server call made through the client) is bounded by the network timeout.
  const clientOptions = { transporterOptions: { timeout: timeoutMs } };
  let json: Record<string, unknown> | undefined;
  if (credentials !== undefined) {
    json = parseCredentials(credentials);
  } else {
    json = await adcFile();
  }
  const { GoogleAuth } = await import('google-auth-library');
  const auth = new GoogleAuth({
    scopes: [CLOUD_PLATFORM_SCOPE],
    clientOptions,
    ...(credentials !== undefined && json ? { credentials: json } : {}),
  });
  const client = await auth.getClient();
  honourTokenUri(client, json);
  return client;
}

function parseCredentials(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw misconfigured('vertex auth_credentials is not valid JSON (expected a service-account key file)');
  }
  if (!isRecord(v)) throw misconfigured('vertex auth_credentials must be a JSON object');
  return v;
}

/** The GOOGLE_APPLICATION_CREDENTIALS file, read only for its token_uri; the library reads it again itself. */
async function adcFile(): Promise<Record<string, unknown> | undefined> {
  const path = process.env['GOOGLE_APPLICATION_CREDENTIALS'];
  if (!path) return undefined;
  try {
    const v: unknown = JSON.parse(await readFile(path, 'utf8'));
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined; // google-auth-library reports an unreadable file with its own message
  }
}

/**
 * A service-account key file's token_uri is where its grant must go (Google's Python and Go libraries honour it;
 * the Node library always posts to oauth2.googleapis.com): requests for that URL go to token_uri instead.
 */
function honourTokenUri(client: AuthClient, json: Record<string, unknown> | undefined): void {
  const tokenUri = json?.['type'] === 'service_account' ? json['token_uri'] : undefined;
  if (typeof tokenUri !== 'string' || tokenUri === GOOGLE_TOKEN_URL) return;
  let target: URL;
  try {
    target = new URL(tokenUri);
  } catch {
    throw misconfigured('vertex service-account token_uri is not a URL');
  }
  client.transporter.interceptors.request.add({
    resolved: async (opts) => {
      if (String(opts.url) === GOOGLE_TOKEN_URL) opts.url = target;
      return opts;
    },
  });
}

/** The credentials could not even be read: the gateway's setup is at fault. */
function setupError(keyName: string, fromKey: boolean, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  if (!fromKey && /default credentials/i.test(detail)) {
    return misconfigured(`vertex key '${keyName}' has no credentials and none were found: ${ADC_HELP}`, err);
  }
  return misconfigured(`vertex key '${keyName}': unusable credentials: ${detail}`, err);
}

/** Token endpoint answers and transport failures, as ProviderErrors the engine can retry or report. */
function tokenError(keyName: string, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  const response = isRecord(err) && isRecord(err['response']) ? err['response'] : undefined;
  const status = typeof response?.['status'] === 'number' ? response['status'] : undefined;
  const message = `vertex: could not obtain an access token: ${detail}`;
  if (status !== undefined) {
    const data = isRecord(response?.['data']) ? response['data'] : {};
    const type = typeof data['error'] === 'string' ? data['error'] : undefined;
    // A refused grant means bad gateway credentials: an authentication failure, not a bad request.
    if (status >= 400 && status < 500 && status !== 429) {
      return new ProviderError('upstream', message, { status: 401, type: type ?? 'authentication_error', cause: err });
    }
    return new ProviderError('upstream', message, { status, ...(type ? { type } : {}), cause: err });
  }
  const code = isRecord(err) ? err['code'] : undefined;
  if (code === 'TimeoutError' || /timeout|timed out/i.test(detail)) {
    return new ProviderError('timeout', message, { cause: err });
  }
  // Not an HTTP failure: a key the library cannot sign with, an unreadable credential file, ...
  if (!isRecord(err) || !('config' in err)) {
    return misconfigured(`vertex key '${keyName}': unusable credentials: ${detail}`, err);
  }
  return new ProviderError('network', message, { cause: err });
}
