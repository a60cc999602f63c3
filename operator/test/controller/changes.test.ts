import { describe, expect, it } from 'vitest';
import { ChangeFilter } from '../../src/controller/changes.ts';

const obj = (generation: number, extra: Record<string, unknown> = {}, status: unknown = undefined) => ({
  metadata: { uid: 'u1', generation, ...extra },
  status,
});

describe('ChangeFilter', () => {
  it('skips an update that changed only the status; a spec change, finalizers or a delete mark count', () => {
    const f = new ChangeFilter();
    expect(f.admit('VirtualKey/ns/a', 'add', obj(1))).toBe(true);
    // The operator added its finalizer: reconcile (the first write follows it).
    expect(f.admit('VirtualKey/ns/a', 'update', obj(1, { finalizers: ['f'] }))).toBe(true);
    // Its own status write comes back as an update: nothing to do.
    expect(f.admit('VirtualKey/ns/a', 'update', obj(1, { finalizers: ['f'] }, { ready: true }))).toBe(false);
    expect(f.admit('VirtualKey/ns/a', 'update', obj(2, { finalizers: ['f'] }))).toBe(true);
    expect(
      f.admit('VirtualKey/ns/a', 'update', obj(2, { finalizers: ['f'], deletionTimestamp: '2026-01-01T00:00:00Z' })),
    ).toBe(true);
  });

  it('admits every add and delete, and an object recreated under the same name', () => {
    const f = new ChangeFilter();
    expect(f.admit('k', 'add', obj(1))).toBe(true);
    expect(f.admit('k', 'add', obj(1))).toBe(true);
    expect(f.admit('k', 'update', { metadata: { uid: 'u2', generation: 1 } })).toBe(true);
    expect(f.admit('k', 'delete', obj(1))).toBe(true);
    // A first update seen without an add (a relist after a lost watch) counts.
    expect(f.admit('k', 'update', obj(1))).toBe(true);
  });
});
