// Encryption at rest of secrets (provider key values, tokens) with GATEWAY_ENCRYPTION_KEY: AES-256-GCM.
// Without a key, secrets are stored marked `plain:` (the embedded default); a stored `enc:` value without
// the key refuses to load instead of silently breaking.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export class CryptoError extends Error {
  override readonly name = 'CryptoError';
  readonly code: 'missing_key' | 'bad_ciphertext';
  constructor(code: CryptoError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

export interface SecretBox {
  readonly encrypting: boolean;
  seal(plain: string): string;
  open(stored: string): string;
}

/** The key may be any string: it is stretched with SHA-256 (32 random bytes, base64, are recommended). */
export function createSecretBox(keyMaterial: string | undefined): SecretBox {
  const key = keyMaterial ? createHash('sha256').update(keyMaterial, 'utf8').digest() : undefined;
  return {
    encrypting: key !== undefined,
    seal(plain) {
      if (!key) return `plain:${plain}`;
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return `enc:v1:${Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64')}`;
    },
    open(stored) {
      if (stored.startsWith('plain:')) return stored.slice(6);
      if (!stored.startsWith('enc:v1:')) throw new CryptoError('bad_ciphertext', 'stored secret has an unknown format');
      if (!key) {
        throw new CryptoError('missing_key', 'a stored secret is encrypted but GATEWAY_ENCRYPTION_KEY is not set');
      }
      const buf = Buffer.from(stored.slice(7), 'base64');
      try {
        const d = createDecipheriv('aes-256-gcm', key, buf.subarray(0, 12));
        d.setAuthTag(buf.subarray(12, 28));
        return Buffer.concat([d.update(buf.subarray(28)), d.final()]).toString('utf8');
      } catch {
        throw new CryptoError('bad_ciphertext', 'a stored secret cannot be decrypted with GATEWAY_ENCRYPTION_KEY');
      }
    },
  };
}
