import { describe, expect, it } from 'vitest';
import { storedClientConfig } from '../../src/state/services/client-config.ts';

describe('stored client settings under newer rules', () => {
  it('keeps valid fields, gives refused ones their default and reports them', () => {
    const dropped: string[][] = [];
    const cfg = storedClientConfig(
      { enforce_auth_on_inference: false, max_request_body_size_mb: 1e-9, retired_field: true },
      (f) => dropped.push(f),
    );
    expect(cfg.enforce_auth_on_inference).toBe(false);
    expect(cfg.max_request_body_size_mb).toBe(50);
    expect(cfg).not.toHaveProperty('retired_field');
    expect(dropped).toEqual([['max_request_body_size_mb', 'retired_field']]);
  });

  it('reports nothing for valid settings', () => {
    const dropped: string[][] = [];
    expect(storedClientConfig({ max_request_body_size_mb: 5 }, (f) => dropped.push(f)).max_request_body_size_mb).toBe(
      5,
    );
    expect(dropped).toEqual([]);
  });
});
