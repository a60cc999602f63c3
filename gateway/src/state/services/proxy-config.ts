// The outbound proxy for upstream provider calls (`/api/proxy-config`, the reference's global proxy settings):
// validated, stored with the client settings (the password sealed like key secrets), published as a client
// settings change so every pod switches its dispatcher.
import { z } from 'zod';
import type { SecretBox } from '../../crypto/secretbox.ts';
import type { OutboundProxy } from '../../providers/shared/outbound.ts';
import { headerValueString, nameString } from '../../schemas/strings.ts';
import { isRecord } from '../../util/records.ts';
import type { Db, Queryable } from '../db/types.ts';
import { StateError } from '../errors.ts';
import type { ChangeEvent } from '../events.ts';
import { invalidInput } from './input.ts';
import { redact } from './key-record.ts';

const DEFAULT_TIMEOUT_SECONDS = 10;
/** What the reference shows instead of a password; sent back, it keeps the stored one (as does our own redaction). */
const REFERENCE_REDACTED = '<redacted>';
const NO_PROXY_ENTRY = /^(\*|\*?\.?[a-z0-9.-]+|\[[0-9a-f:.]+\])(:\d{1,5})?$/;

const Off = (field: string, why: string) =>
  z
    .boolean()
    .optional()
    .refine((v) => v !== true, `${field} cannot be switched on: ${why}`);

export const ProxyConfigInput = z
  .strictObject({
    enabled: z.boolean().default(false),
    type: z.enum(['http', 'socks5', 'tcp']).default('http'),
    url: nameString(2048)
      .or(z.literal(''))
      .optional()
      .transform((v) => v || undefined),
    username: headerValueString(256)
      .nullish()
      .transform((v) => v || undefined),
    password: headerValueString(1024).nullish(),
    no_proxy: z.string().max(4096).default(''),
    timeout: z.int().min(1).max(300).optional().describe('seconds to connect to the proxy (default 10)'),
    skip_tls_verify: z.boolean().default(false).describe('accept any certificate of an https:// proxy'),
    enable_for_inference: z.boolean().default(true).describe('provider calls (inference and model listing) use it'),
    enable_for_api: Off('enable_for_api', 'the gateway makes no outbound calls besides provider calls'),
    enable_for_scim: Off('enable_for_scim', 'the gateway has no SCIM provisioning'),
  })
  .superRefine((p, ctx) => {
    if (p.type === 'tcp') {
      ctx.addIssue({ code: 'custom', path: ['type'], message: 'tcp proxies are not supported; use http or socks5' });
    }
    if (p.enabled && p.url === undefined)
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'required when enabled' });
    if (p.url !== undefined) {
      const problem = urlProblem(p.url, p.type);
      if (problem) ctx.addIssue({ code: 'custom', path: ['url'], message: problem });
    }
    for (const [i, entry] of noProxyList(p.no_proxy).entries()) {
      if (!NO_PROXY_ENTRY.test(entry)) {
        ctx.addIssue({ code: 'custom', path: ['no_proxy'], message: `entry ${i + 1} is not a host, .domain or *` });
      }
    }
  });
export type ProxyConfigInput = z.infer<typeof ProxyConfigInput>;

/** What is stored in `client_config.proxy_config` (the password apart, sealed). */
type StoredProxy = Omit<ProxyConfigInput, 'password'>;

function urlProblem(raw: string, type: ProxyConfigInput['type']): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be a URL such as http://proxy.internal:3128';
  }
  const schemes = type === 'socks5' ? ['socks5:'] : ['http:', 'https:'];
  if (!schemes.includes(u.protocol)) return `a ${type} proxy URL starts with ${schemes.join(' or ')}//`;
  if (u.username || u.password) return 'put credentials in username and password (they are then never shown)';
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) return 'a proxy URL has no path or query';
  return undefined;
}

function noProxyList(s: string): string[] {
  return s
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
}

export class ProxyConfigService {
  private readonly db: Db;
  private readonly box: SecretBox;
  private readonly publish: (e: ChangeEvent) => Promise<void>;
  constructor(db: Db, box: SecretBox, publish: (e: ChangeEvent) => Promise<void>) {
    this.db = db;
    this.box = box;
    this.publish = publish;
  }

  /** The settings with the password redacted. */
  async get(): Promise<Record<string, unknown>> {
    const { stored, password } = await readStored(this.db, this.box);
    return view(stored, password);
  }

  /** PUT: validates, keeps the stored password when it comes back redacted or is omitted, stores, publishes. */
  async put(body: unknown): Promise<Record<string, unknown>> {
    if (!isRecord(body)) throw new StateError('invalid', '(root): expected a JSON object');
    const r = ProxyConfigInput.safeParse(body);
    if (!r.success) throw invalidInput(r.error);
    const { password: sent, ...stored } = r.data;
    const before = await readStored(this.db, this.box);
    const kept =
      sent === undefined || sent === REFERENCE_REDACTED || (sent !== null && sent === redact(before.password));
    if (!kept && sent && !stored.username) {
      throw new StateError('invalid', 'password: set username too (or neither)', 'password');
    }
    // Without a username there are no credentials: a stored password goes with it.
    const password = !stored.username ? undefined : kept ? before.password : sent || undefined;
    await this.db.query(
      `INSERT INTO client_config (id, config, proxy_config, proxy_secret) VALUES (1, '{}'::jsonb, $1, $2)
       ON CONFLICT (id) DO UPDATE SET proxy_config = EXCLUDED.proxy_config, proxy_secret = EXCLUDED.proxy_secret,
         updated_at = now()`,
      [JSON.stringify(stored), password === undefined ? null : this.box.seal(password)],
    );
    await this.publish({ kind: 'client_config' });
    return view(stored, password);
  }
}

async function readStored(q: Queryable, box: SecretBox): Promise<{ stored: StoredProxy; password?: string }> {
  const { rows } = await q.query<{ proxy_config: unknown; proxy_secret: string | null }>(
    'SELECT proxy_config, proxy_secret FROM client_config WHERE id = 1',
  );
  const row = rows[0];
  const parsed = ProxyConfigInput.safeParse(isRecord(row?.proxy_config) ? row.proxy_config : {});
  const stored: StoredProxy = parsed.success ? parsed.data : ProxyConfigInput.parse({});
  const password = row?.proxy_secret ? box.open(row.proxy_secret) : undefined;
  return password === undefined ? { stored } : { stored, password };
}

function view(stored: StoredProxy, password: string | undefined): Record<string, unknown> {
  return {
    enabled: stored.enabled,
    type: stored.type,
    url: stored.url ?? '',
    username: stored.username ?? '',
    password: redact(password) ?? '',
    no_proxy: stored.no_proxy,
    timeout: stored.timeout ?? DEFAULT_TIMEOUT_SECONDS,
    skip_tls_verify: stored.skip_tls_verify,
    enable_for_inference: stored.enable_for_inference,
    enable_for_api: false,
    enable_for_scim: false,
  };
}

/** The proxy provider calls use now, or undefined (disabled, or off for inference). For the snapshot. */
export async function readOutboundProxy(q: Queryable, box: SecretBox): Promise<OutboundProxy | undefined> {
  const { stored, password } = await readStored(q, box);
  if (!stored.enabled || !stored.enable_for_inference || stored.url === undefined || stored.type === 'tcp') {
    return undefined;
  }
  return {
    type: stored.type,
    url: stored.url,
    username: stored.username ?? undefined,
    password,
    no_proxy: noProxyList(stored.no_proxy),
    timeout_seconds: stored.timeout ?? DEFAULT_TIMEOUT_SECONDS,
    skip_tls_verify: stored.skip_tls_verify,
  };
}
