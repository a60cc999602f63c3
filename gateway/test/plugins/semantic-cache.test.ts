// The semantic cache's pure parts: UUIDv5 (RFC 9562), the cache headers, the normalised request, its scope and
// cache_id, the embedded prompt text and the conversation length.
import { describe, expect, it } from 'vitest';
import { parsePluginConfig } from '../../src/plugins/catalog.ts';
import { parseCacheHeaders } from '../../src/plugins/semantic-cache/headers.ts';
import {
  CACHE_ID_NAMESPACE,
  cacheIdOf,
  conversationLength,
  MAX_PROMPT_CHARS,
  normalise,
  promptText,
  scopeOf,
  stableJson,
  uuidV5,
} from '../../src/plugins/semantic-cache/key.ts';

describe('uuidV5', () => {
  it('matches the RFC 4122 / Python uuid5 vector', () => {
    // uuid.uuid5(uuid.NAMESPACE_DNS, 'www.example.com')
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });
  it('is deterministic, version 5, variant 10', () => {
    const a = uuidV5('x', CACHE_ID_NAMESPACE);
    expect(a).toBe(uuidV5('x', CACHE_ID_NAMESPACE));
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(uuidV5('y', CACHE_ID_NAMESPACE));
  });
});

describe('parseCacheHeaders', () => {
  it('reads every header', () => {
    const r = parseCacheHeaders({
      'x-gateway-cache-key': 'user:42',
      'x-gateway-cache-ttl': '5m',
      'x-gateway-cache-threshold': '0.85',
      'x-gateway-cache-type': 'Semantic',
      'x-gateway-cache-no-store': 'true',
    });
    expect(r).toEqual({
      ok: true,
      value: { key: 'user:42', ttlSeconds: 300, threshold: 0.85, type: 'semantic', noStore: true },
    });
    expect(parseCacheHeaders({ 'x-gateway-cache-ttl': '3600' })).toMatchObject({ value: { ttlSeconds: 3600 } });
    expect(parseCacheHeaders({ 'x-gateway-cache-threshold': '1' })).toMatchObject({ value: { threshold: 1 } });
    expect(parseCacheHeaders({})).toEqual({
      ok: true,
      value: { key: undefined, ttlSeconds: undefined, threshold: undefined, type: undefined, noStore: false },
    });
  });
  it.each([
    ['x-gateway-cache-key', ''],
    ['x-gateway-cache-key', 'a b'],
    ['x-gateway-cache-key', 'a/b'],
    ['x-gateway-cache-key', '..'],
    ['x-gateway-cache-key', 'x'.repeat(257)],
    ['x-gateway-cache-ttl', '0'],
    ['x-gateway-cache-ttl', '-5'],
    ['x-gateway-cache-ttl', '1.5'],
    ['x-gateway-cache-ttl', '400d'],
    ['x-gateway-cache-threshold', '-0.1'],
    ['x-gateway-cache-threshold', '1.01'],
    ['x-gateway-cache-threshold', 'NaN'],
    ['x-gateway-cache-threshold', '1e-1'],
    ['x-gateway-cache-type', 'exact'],
    ['x-gateway-cache-no-store', '1'],
  ])('refuses %s: %j naming the header', (name, value) => {
    expect(parseCacheHeaders({ [name]: value })).toMatchObject({ ok: false, header: name });
  });
  it('refuses a header given twice', () => {
    expect(parseCacheHeaders({ 'x-gateway-cache-key': ['a', 'b'] })).toMatchObject({ ok: false });
  });
});

describe('the normalised request', () => {
  const chat = {
    model: 'openai/gpt-4o-mini',
    fallbacks: ['groq/x'],
    temperature: 0,
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
    ],
  };

  it('drops routing fields and sorts keys', () => {
    const n = normalise(chat, false);
    expect(n).not.toHaveProperty('model');
    expect(n).not.toHaveProperty('fallbacks');
    expect(stableJson({ b: 1, a: [{ d: 2, c: undefined }] })).toBe('{"a":[{"d":2}],"b":1}');
    expect(stableJson(normalise({ ...chat, temperature: 0 }, false))).toBe(
      stableJson(normalise({ temperature: 0, messages: chat.messages, model: 'other' }, false)),
    );
  });

  it('leaves the system prompt out when asked (messages, Anthropic system, Responses instructions)', () => {
    const n = normalise({ ...chat, system: 'x', instructions: 'y' }, true)!;
    expect(n['messages']).toEqual([chat.messages[1]]);
    expect(n).not.toHaveProperty('system');
    expect(n).not.toHaveProperty('instructions');
    expect(promptText(n)).toBe('hello');
    expect(promptText(normalise(chat, false)!)).toBe('be brief\nhello');
  });

  it('finds the prompt text of every format', () => {
    expect(promptText({ prompt: 'complete me' })).toBe('complete me');
    expect(promptText({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'resp' }] }] })).toBe('resp');
    expect(promptText({ contents: [{ role: 'user', parts: [{ text: 'gemini' }] }] })).toBe('gemini');
    expect(promptText({ input: 'x'.repeat(MAX_PROMPT_CHARS * 2) })).toHaveLength(MAX_PROMPT_CHARS);
    expect(promptText({ temperature: 1 })).toBe('');
  });

  it('counts the conversation', () => {
    expect(conversationLength(normalise(chat, false)!)).toBe(2);
    expect(conversationLength(normalise(chat, true)!)).toBe(1);
    expect(conversationLength({ prompt: 'x' })).toBe(1);
    expect(conversationLength({ input: ['a', 'b'] })).toBe(1);
    expect(conversationLength({ contents: [{}, {}, {}] })).toBe(3);
  });

  it('scopes by format, operation, stream, and provider and model as configured', () => {
    const p = { format: 'openai', requestType: 'chat_completion', stream: false, model: 'openai/gpt-4o' };
    expect(scopeOf({ ...p, byProvider: true, byModel: true })).toBe(
      'openai|chat_completion|unary|provider=openai|model=gpt-4o',
    );
    expect(scopeOf({ ...p, stream: true, byProvider: false, byModel: false })).toBe('openai|chat_completion|stream');
  });

  it('gives each tenant, key, namespace and scope its own cache_id', () => {
    const n = normalise(chat, false)!;
    const w = { namespace: 'default', tenant: 'vk:a', cacheKey: 'k', scope: 's' };
    const base = cacheIdOf(w, n);
    expect(cacheIdOf({ ...w }, normalise({ ...chat }, false)!)).toBe(base);
    for (const other of [{ tenant: 'vk:b' }, { cacheKey: 'j' }, { namespace: 'n2' }, { scope: 't' }]) {
      expect(cacheIdOf({ ...w, ...other }, n)).not.toBe(base);
    }
  });
});

describe('settings', () => {
  it('refuses cleanup_on_shutdown with what replaced it, and a default key the clear endpoint cannot name', () => {
    const r = parsePluginConfig('semantic_cache', { cleanup_on_shutdown: true });
    expect(r).toMatchObject({ ok: false, param: 'config.cleanup_on_shutdown' });
    expect(r.ok ? '' : r.error).toMatch(/persist across restarts.*clear-by-key/);
    expect(parsePluginConfig('semantic_cache', { default_cache_key: 'a/b' })).toMatchObject({ ok: false });
    expect(parsePluginConfig('semantic_cache', { default_cache_key: 'team:a' })).toMatchObject({ ok: true });
  });
});
