// Client settings logging_headers / required_headers: the schema's rules, and the pure per-request functions.
import { describe, expect, it } from 'vitest';
import {
  LOG_HEADER_PREFIX,
  logMetadata,
  MAX_METADATA_ENTRIES,
  MAX_METADATA_VALUE_CHARS,
  missingHeader,
} from '../../src/config/log-headers.ts';
import { ClientConfig } from '../../src/config/schema.ts';

describe('logMetadata', () => {
  it('takes configured headers under their lower-case names and x-gateway-lh-* without the prefix', () => {
    const m = logMetadata({ 'x-team': 'blue', 'x-gateway-lh-run': 'r1', 'x-other': 'no', host: 'h' }, ['x-team']);
    expect(m).toEqual({ 'x-team': 'blue', run: 'r1' });
  });

  it('is null when nothing is captured, and without headers', () => {
    expect(logMetadata({ host: 'h', 'content-type': 'application/json' }, [])).toBeNull();
    expect(logMetadata({ host: 'h' }, ['x-team'])).toBeNull();
    expect(logMetadata(undefined, ['x-team'])).toBeNull();
    // The bare prefix names no key.
    expect(logMetadata({ [LOG_HEADER_PREFIX]: 'v' }, [])).toBeNull();
  });

  it('joins repeated headers, cuts long values and keeps a bounded number of entries', () => {
    const headers: Record<string, string | string[]> = { 'x-many': ['a', 'b'], 'x-long': 'y'.repeat(5000) };
    for (let i = 0; i < MAX_METADATA_ENTRIES + 10; i++) headers[`${LOG_HEADER_PREFIX}k${i}`] = String(i);
    const m = logMetadata(headers, ['x-many', 'x-long']);
    expect(m?.['x-many']).toBe('a, b');
    expect(m?.['x-long']).toHaveLength(MAX_METADATA_VALUE_CHARS);
    expect(Object.keys(m ?? {})).toHaveLength(MAX_METADATA_ENTRIES);
  });

  it('a label wins over a configured header of the same name; prototype names are plain keys', () => {
    const m = logMetadata(
      {
        team: 'configured',
        'x-gateway-lh-team': 'label',
        'x-gateway-lh-__proto__': 'p',
        'x-gateway-lh-constructor': 'c',
      },
      ['team'],
    );
    expect(JSON.stringify(m)).toBe('{"team":"label","__proto__":"p","constructor":"c"}');
  });
});

describe('missingHeader', () => {
  it('names the first required header the request lacks', () => {
    expect(missingHeader({ 'x-a': '1' }, ['x-a', 'x-b'])).toBe('x-b');
    expect(missingHeader({ 'x-a': '1', 'x-b': '' }, ['x-a', 'x-b'])).toBeUndefined();
    expect(missingHeader({}, [])).toBeUndefined();
  });
});

describe('ClientConfig logging_headers / required_headers', () => {
  it('default to empty lists; names are stored lower-case without repeats', () => {
    expect(ClientConfig.parse({})).toMatchObject({ logging_headers: [], required_headers: [] });
    const c = ClientConfig.parse({ logging_headers: ['X-Team', 'x-team'], required_headers: ['X-Tenant'] });
    expect(c.logging_headers).toEqual(['x-team']);
    expect(c.required_headers).toEqual(['x-tenant']);
  });

  it.each([
    'Authorization',
    'x-api-key',
    'x-goog-api-key',
    'api-key',
    'x-gateway-vk',
    'cookie',
    'sec-websocket-protocol',
    'x-gateway-bedrock-secret-key',
  ])('refuses the credential header %s in logging_headers, naming it', (name) => {
    const r = ClientConfig.safeParse({ logging_headers: ['x-team', name] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]).toMatchObject({ path: ['logging_headers', 1] });
    expect(r.error?.issues[0]?.message).toContain(name);
  });

  it('refuses names that are not header tokens and lists that are too long', () => {
    expect(ClientConfig.safeParse({ logging_headers: ['bad name'] }).success).toBe(false);
    expect(ClientConfig.safeParse({ required_headers: [''] }).success).toBe(false);
    expect(ClientConfig.safeParse({ required_headers: 'x-a' }).success).toBe(false);
    const many = Array.from({ length: 65 }, (_, i) => `x-h${i}`);
    expect(ClientConfig.safeParse({ required_headers: many }).success).toBe(false);
  });
});
