// Resumable upload sessions of `/genai/upload/v1beta/files`. The `start` request and the requests with the bytes
// may reach different pods, so a session lives in the coordinator (Redis across pods) under the SHA-256 of a
// random 256-bit token, as the WebSocket tickets and dashboard sessions do; the token alone travels in the
// `X-Goog-Upload-URL` the caller gets. What the gateway needs to continue (the caller it belongs to, the
// provider, Google's own session URL and the key that opened it, the offset reached) never leaves the server:
// Google's URL is a capability on the provider's key, so the caller must not see it.
import type { Principal } from '../../http/auth.ts';
import { GatewayError } from '../../http/errors.ts';
import type { GoogleJson } from '../../providers/types.ts';
import type { Runtime } from '../../runtime.ts';
import { sha256Hex } from '../../state/ids.ts';
import { randomToken, TOKEN_SHAPE } from '../../state/services/sessions/store.ts';

/** How long a session may wait for its next bytes (each request of bytes starts the wait again). */
export const UPLOAD_SESSION_TTL_MS = 60 * 60 * 1000;

export interface UploadSession {
  /** Whose session it is (`holderOf`): another caller showing the token gets 404. */
  holder: string;
  provider: string;
  /** The caller's `{file: {...}}`, passed on to Google. */
  metadata: GoogleJson;
  mimetype: string;
  /** The file's name as the caller gave it (its display name or `X-Goog-Upload-File-Name`). */
  filename: string;
  /** The size the caller declared at start, if it did. */
  length?: number | undefined;
  /** Bytes accepted so far: the offset the next request must name. */
  offset: number;
  /** Once the bytes come in several requests: Google's session and the key that opened it. */
  upstream?: { url: string; keyId: string } | undefined;
}

/** Pure: the identity a session is bound to; the same credential kind and name must come back. */
export function holderOf(principal: Principal | null): string {
  switch (principal?.kind) {
    case 'virtual_key':
      return `vk:${principal.vk.id}`;
    case 'token':
      return `token:${principal.name}`;
    case 'admin':
      return `admin:${principal.name}`;
    case 'basic':
      return `basic:${principal.username}`;
    default:
      return 'anonymous';
  }
}

/** The one answer for an unknown, expired, tampered or someone else's session: nothing says which. */
export function sessionNotFound(): GatewayError {
  return new GatewayError(
    'not_found',
    'upload session not found (unknown, expired or not yours); start the upload again',
  );
}

export class UploadSessions {
  readonly #rt: Runtime;
  constructor(rt: Runtime) {
    this.#rt = rt;
  }

  #key(token: string): string {
    return `genai-upload:${sha256Hex(token)}`;
  }

  /** A new session; its token is returned once and stored only as a hash. */
  async create(session: UploadSession): Promise<string> {
    const token = randomToken();
    await this.#coord(() => this.#rt.state.coord.set(this.#key(token), JSON.stringify(session), UPLOAD_SESSION_TTL_MS));
    return token;
  }

  /** The caller's live session, or the 404 for anything else. */
  async get(token: string, principal: Principal | null): Promise<UploadSession> {
    if (!TOKEN_SHAPE.test(token)) throw sessionNotFound();
    const raw = await this.#coord(() => this.#rt.state.coord.get(this.#key(token)));
    if (raw === null) throw sessionNotFound();
    const session = JSON.parse(raw) as UploadSession; // written by `create`/`save` only
    if (session.holder !== holderOf(principal)) throw sessionNotFound();
    return session;
  }

  async save(token: string, session: UploadSession): Promise<void> {
    await this.#coord(() => this.#rt.state.coord.set(this.#key(token), JSON.stringify(session), UPLOAD_SESSION_TTL_MS));
  }

  async end(token: string): Promise<void> {
    await this.#coord(() => this.#rt.state.coord.del(this.#key(token)));
  }

  /**
   * Holds the session for one request of bytes (two at once would race on the offset): false when another
   * request holds it. Released by `release`, or after `ttlMs` if this pod dies.
   */
  async hold(token: string, ttlMs: number): Promise<boolean> {
    return this.#coord(() => this.#rt.state.coord.setIfAbsent(`${this.#key(token)}:busy`, '1', ttlMs));
  }

  async release(token: string): Promise<void> {
    await this.#coord(() => this.#rt.state.coord.del(`${this.#key(token)}:busy`)).catch(() => undefined);
  }

  async #coord<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch {
      throw new GatewayError('coordination_unavailable', 'the upload session store is unreachable; retry shortly');
    }
  }
}
