// The string kinds every management and config schema uses: what each refuses and how the message names it.
import { describe, expect, it } from 'vitest';
import {
  headerValueString,
  httpUrlString,
  idString,
  nameMap,
  nameString,
  stringIssue,
  textString,
} from '../../src/schemas/strings.ts';

const C0 = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i));
const C1 = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(0x80 + i));

describe('stringIssue', () => {
  it('refuses every C0 control, DEL and every C1 control in one-line fields', () => {
    for (const c of [...C0, '\u007f', ...C1]) expect(stringIssue(`a${c}`, 'line'), JSON.stringify(c)).toMatch(/U\+/);
  });

  it('lets free text keep TAB, LF and CR, and nothing else of the controls', () => {
    for (const c of ['\t', '\n', '\r']) expect(stringIssue(`a${c}b`, 'text')).toBeUndefined();
    for (const c of [...C0.filter((c) => !'\t\n\r'.includes(c)), '\u007f', ...C1]) {
      expect(stringIssue(`a${c}`, 'text'), JSON.stringify(c)).toMatch(/U\+/);
    }
  });

  it('refuses unpaired surrogates and keeps paired ones', () => {
    expect(stringIssue('a\ud800', 'line')).toContain('unpaired surrogate U+D800 at position 1');
    expect(stringIssue('\udc00', 'text')).toContain('unpaired surrogate U+DC00');
    expect(stringIssue('\ud800a', 'line')).toContain('U+D800');
    expect(stringIssue('😀 ünïcode', 'line')).toBeUndefined();
  });

  it('allows header values of visible ASCII with inner spaces only', () => {
    expect(stringIssue('Bearer abc-123_~!', 'header')).toBeUndefined();
    expect(stringIssue('', 'header')).toBeUndefined();
    for (const bad of ['a\tb', 'é', ' a', 'a ', 'a\u0000', 'a\r\nb', '\u0085']) {
      expect(stringIssue(bad, 'header'), JSON.stringify(bad)).toBeDefined();
    }
  });

  it('names the character by code point and position, never by itself', () => {
    expect(stringIssue('ab\u0000', 'line')).toBe(
      'must not contain control characters or line breaks (found U+0000 at position 2)',
    );
  });
});

describe('the schemas', () => {
  it('nameString checks characters before trimming, so a trailing line break is refused, not cut', () => {
    const name = nameString(8, { trim: true });
    expect(name.parse('  a  ')).toBe('a');
    expect(name.safeParse('a\n').success).toBe(false);
    expect(name.safeParse('   ').success).toBe(false);
    expect(name.safeParse('123456789').success).toBe(false);
  });

  it('idString takes only letters, digits, ., _, : and -', () => {
    expect(idString().safeParse('vk_1.a:b-c').success).toBe(true);
    expect(idString().safeParse('...').success).toBe(true);
    for (const bad of ['a b', 'a/b', 'a%00', '', '.', '..', 'x'.repeat(129)]) {
      expect(idString().safeParse(bad).success, bad).toBe(false);
    }
  });

  it('textString and headerValueString bound their length', () => {
    expect(textString(4).safeParse('a\nbc').success).toBe(true);
    expect(textString(4).safeParse('abcde').success).toBe(false);
    expect(headerValueString(4, 1).safeParse('').success).toBe(false);
  });

  it('httpUrlString refuses whitespace the URL parser would drop, and other schemes', () => {
    expect(httpUrlString().parse('https://x.example/v1')).toBe('https://x.example/v1');
    for (const bad of ['https://x.example/\n', ' https://x.example', 'https://x.exa\tmple', 'ftp://x.example']) {
      expect(httpUrlString().safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('nameMap bounds its entries and checks both sides', () => {
    expect(nameMap(2).safeParse({ a: 'b', c: 'd' }).success).toBe(true);
    expect(nameMap(2).safeParse({ a: 'b', c: 'd', e: 'f' }).success).toBe(false);
    expect(nameMap().safeParse({ 'a\u0000': 'b' }).success).toBe(false);
    expect(nameMap().safeParse({ a: 'b\r\n' }).success).toBe(false);
  });
});
