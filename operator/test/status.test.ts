import { describe, expect, it } from 'vitest';
import { isReady, nextStatus, sameStatus, statusPatch } from '../src/status.ts';

const T0 = new Date('2026-11-22T10:00:00.123Z');
const T1 = new Date('2026-11-22T11:00:00Z');

describe('nextStatus', () => {
  it('writes Ready=True with the generation and per-kind fields', () => {
    const s = nextStatus(undefined, 3, { ready: true, fields: { keyId: 'k1' } }, T0);
    expect(s).toEqual({
      observedGeneration: 3,
      keyId: 'k1',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          observedGeneration: 3,
          lastTransitionTime: '2026-11-22T10:00:00Z',
          reason: 'Ready',
          message: 'synced to the gateway',
        },
      ],
    });
  });

  it('keeps lastTransitionTime while the status stays, moves it on a flip', () => {
    const first = nextStatus(
      undefined,
      1,
      { ready: false, reason: 'SecretNotFound', message: 'Secret a not found' },
      T0,
    );
    const same = nextStatus(first, 1, { ready: false, reason: 'ReferenceNotFound', message: 'x' }, T1);
    expect(same.conditions?.[0]?.lastTransitionTime).toBe('2026-11-22T10:00:00Z');
    expect(same.conditions?.[0]?.reason).toBe('ReferenceNotFound');
    const flipped = nextStatus(same, 1, { ready: true }, T1);
    expect(flipped.conditions?.[0]?.lastTransitionTime).toBe('2026-11-22T11:00:00Z');
  });

  it('sameStatus: an identical outcome needs no write; key order and undefined fields do not matter', () => {
    const a = nextStatus(undefined, 2, { ready: true, fields: { b: 1, a: 2 } }, T0);
    expect(sameStatus(a, nextStatus(a, 2, { ready: true, fields: { a: 2, b: 1, c: undefined } }, T1))).toBe(true);
    expect(sameStatus(a, nextStatus(a, 3, { ready: true, fields: { a: 2, b: 1 } }, T1))).toBe(false);
    expect(sameStatus(undefined, a)).toBe(false);
  });

  it('isReady needs Ready=True for the current generation', () => {
    const status = nextStatus(undefined, 2, { ready: true }, T0);
    expect(isReady({ metadata: { generation: 2 }, status })).toBe(true);
    expect(isReady({ metadata: { generation: 3 }, status })).toBe(false);
    expect(isReady({ metadata: { generation: 2 } })).toBe(false);
  });
});

describe('statusPatch', () => {
  it('removes the fields the new status drops (a merge patch would keep them) and sets the rest', () => {
    const current = { observedGeneration: 1, connectionState: 'disconnected', authorizeUrl: 'https://a/authorize' };
    const next = { observedGeneration: 2, connectionState: 'connected' };
    expect(statusPatch(current, next)).toEqual({
      authorizeUrl: null,
      observedGeneration: 2,
      connectionState: 'connected',
    });
    expect(statusPatch(undefined, next)).toEqual(next);
  });
});
