// lazyModule: the MCP packages are imported on first use; concurrent first callers share one import, and a failed
// import is tried again by the next use.
import { describe, expect, it } from 'vitest';
import { lazyModule } from '../../src/util/lazy-module.ts';

describe('lazyModule', () => {
  it('imports nothing until asked, once for concurrent callers, then hands the module out synchronously', async () => {
    let loads = 0;
    const mod = lazyModule(async () => {
      loads++;
      return { value: 42 };
    });
    expect(loads).toBe(0);
    expect(mod.loaded()).toBeUndefined();
    const [a, b] = await Promise.all([mod.get(), mod.get()]);
    expect(loads).toBe(1);
    expect(a).toBe(b);
    expect(mod.loaded()).toBe(a);
    expect(await mod.get()).toBe(a);
    expect(loads).toBe(1);
  });

  it('a failed import rejects its callers and is tried again by the next use', async () => {
    let loads = 0;
    const mod = lazyModule(async () => {
      loads++;
      if (loads === 1) throw new Error('Cannot find package openid-client');
      return { value: 'ok' };
    });
    await expect(Promise.all([mod.get(), mod.get()])).rejects.toThrow(/Cannot find package/);
    expect(loads).toBe(1);
    expect(mod.loaded()).toBeUndefined();
    expect(await mod.get()).toEqual({ value: 'ok' });
    expect(loads).toBe(2);
  });
});
