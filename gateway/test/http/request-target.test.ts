import { describe, expect, it } from 'vitest';
import { normaliseTarget } from '../../src/http/request-target.ts';

const ok = (raw: string) => {
  const r = normaliseTarget(raw);
  if (!r.ok) throw new Error(`refused ${raw}: ${r.error}`);
  return r.url;
};
const refused = (raw: string) => normaliseTarget(raw).ok === false;

describe('request target normal form', () => {
  it('leaves a normal origin-form target as sent, query included', () => {
    expect(ok('/v1/chat/completions')).toBe('/v1/chat/completions');
    expect(ok('/api/logs?limit=10&q=%2F..%2F')).toBe('/api/logs?limit=10&q=%2F..%2F');
    expect(ok('/.well-known/x')).toBe('/.well-known/x');
  });

  it('turns absolute-form into origin-form', () => {
    expect(ok('http://x/api/providers')).toBe('/api/providers');
    expect(ok('HTTPS://user@attacker:8443/api/config?x=1')).toBe('/api/config?x=1');
    expect(ok('http://x')).toBe('/');
    expect(ok('http://x?a=1')).toBe('/?a=1');
  });

  it('decodes percent-encoded unreserved characters only', () => {
    expect(ok('/%61pi/%70roviders')).toBe('/api/providers');
    expect(ok('/api/providers/a%2Fb')).toBe('/api/providers/a%2Fb');
    expect(ok('/api/providers/a%2fb%7E')).toBe('/api/providers/a%2Fb~');
    expect(ok('/api/providers/%00')).toBe('/api/providers/%00');
  });

  it('removes dot segments, encoded ones too, and collapses repeated slashes', () => {
    expect(ok('/v1/../api/config')).toBe('/api/config');
    expect(ok('/%2e%2E/api/./config')).toBe('/api/config');
    expect(ok('/../../api/config')).toBe('/api/config');
    expect(ok('//api///providers')).toBe('/api/providers');
    expect(ok('/api/providers/..')).toBe('/api/');
    expect(ok('/api/x/.?a=../b')).toBe('/api/x/?a=../b');
  });

  it('refuses asterisk-form, authority-form, other schemes, fragments, backslashes and broken escapes', () => {
    for (const raw of ['*', 'example.com:443', 'ftp://x/a', 'javascript:alert(1)', '/a#b', '/a\\b', '/a%zz', '/a%4']) {
      expect(refused(raw), raw).toBe(true);
    }
  });
});
