import { describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/crypto/secretbox.ts';

describe('secret box', () => {
  it('encrypts with the key and opens what it sealed', () => {
    const box = createSecretBox('k'.repeat(32));
    const sealed = box.seal('sk-secret');
    expect(sealed.startsWith('enc:v1:')).toBe(true);
    expect(sealed).not.toContain('sk-secret');
    expect(box.open(sealed)).toBe('sk-secret');
  });

  it('refuses encrypted values without the key or with another key', () => {
    const sealed = createSecretBox('one').seal('x');
    expect(() => createSecretBox(undefined).open(sealed)).toThrow('GATEWAY_ENCRYPTION_KEY is not set');
    expect(() => createSecretBox('two').open(sealed)).toThrow('cannot be decrypted');
  });

  it('stores plainly marked values without a key', () => {
    const box = createSecretBox(undefined);
    expect(box.seal('x')).toBe('plain:x');
    expect(box.open('plain:x')).toBe('x');
  });
});
