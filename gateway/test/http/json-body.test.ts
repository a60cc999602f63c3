import { describe, expect, it } from 'vitest';
import { jsonDepthExceeds } from '../../src/http/json-body.ts';

describe('JSON nesting depth', () => {
  const nest = (n: number, open = '[', close = ']') => open.repeat(n) + close.repeat(n);

  it('counts objects and arrays together', () => {
    expect(jsonDepthExceeds(nest(3), 3)).toBe(false);
    expect(jsonDepthExceeds(nest(4), 3)).toBe(true);
    expect(jsonDepthExceeds('{"a":[{"b":[1]}]}', 4)).toBe(false);
    expect(jsonDepthExceeds('{"a":[{"b":[[1]]}]}', 4)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds('{"a":"[[[[[[[[{{{{"}', 2)).toBe(false);
    expect(jsonDepthExceeds('{"a":"\\"[[[[[[\\\\"}', 2)).toBe(false);
    expect(jsonDepthExceeds('["\\\\",[[1]]]', 2)).toBe(true);
  });

  it('measures depth, not the number of siblings', () => {
    expect(jsonDepthExceeds(`[${'[1],'.repeat(10_000)}[2]]`, 2)).toBe(false);
  });
});
