// The pure parts of WebRTC call metering: the call id in a call creation's Location, the sideband and hangup
// URLs of each provider, and the log row of each way metering can end.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/http/errors.ts';
import type { NetworkConfig, ProviderKey } from '../../src/providers/types.ts';
import { callIdOf, summarize } from '../../src/realtime/call.ts';
import { realtimeEndpoints } from '../../src/realtime/endpoints.ts';

describe('callIdOf', () => {
  it('takes the last path segment of a relative or absolute Location', () => {
    expect(callIdOf('/v1/realtime/calls/rtc_u1_9c6574da8b8a41a1')).toBe('rtc_u1_9c6574da8b8a41a1');
    expect(callIdOf('https://api.openai.com/v1/realtime/calls/rtc_42/')).toBe('rtc_42');
    expect(callIdOf(['/openai/v1/realtime/calls/2f1c4f5e-90ab-4cde-8f01-23456789abcd'])).toBe(
      '2f1c4f5e-90ab-4cde-8f01-23456789abcd',
    );
  });

  it('has no call id for a missing, empty or strange Location', () => {
    expect(callIdOf(undefined)).toBeUndefined();
    expect(callIdOf('')).toBeUndefined();
    expect(callIdOf('/')).toBeUndefined();
    expect(callIdOf('/v1/realtime/sessions/rtc_1')).toBeUndefined();
    expect(callIdOf('/v1/realtime/calls/not a call')).toBeUndefined();
    expect(callIdOf('/v1/realtime/calls/%2e%2e')).toBeUndefined();
  });
});

describe('the sideband and hangup URLs', () => {
  const network = { base_url: 'https://api.example.test/v1/' } as NetworkConfig; // only base_url is read
  const key = { value: 'k', aliases: { 'gpt-realtime': 'dep' }, name: 'n' } as unknown as ProviderKey; // same

  it('are OpenAI’s /v1/realtime?call_id= and /v1/realtime/calls/{id}/hangup', () => {
    const ep = realtimeEndpoints('openai');
    const ctx = { key, network, model: 'gpt-realtime' };
    expect(ep?.sidebandUrl(ctx, 'rtc_1')).toBe('wss://api.example.test/v1/realtime?call_id=rtc_1');
    expect(ep?.hangupUrl(ctx, 'rtc_1')).toBe('https://api.example.test/v1/realtime/calls/rtc_1/hangup');
  });

  it('are Azure’s GA /openai/v1 paths', () => {
    const ep = realtimeEndpoints('azure');
    const ctx = { key, network: { base_url: 'https://res.openai.azure.com/openai/v1' } as NetworkConfig, model: 'x' };
    expect(ep?.sidebandUrl(ctx, 'rtc_1')).toBe('wss://res.openai.azure.com/openai/v1/realtime?call_id=rtc_1');
    expect(ep?.hangupUrl(ctx, 'rtc_1')).toBe('https://res.openai.azure.com/openai/v1/realtime/calls/rtc_1/hangup');
  });
});

describe('summarize', () => {
  it('logs a call the provider ended as a success without an error', () => {
    expect(summarize({ kind: 'ended' }, 'r1', undefined)).toEqual({ status: 200, error: undefined });
  });

  it('logs a governance end with the denial’s status and code, and whether the hangup worked', () => {
    const denial = new GatewayError('budget_exceeded', 'budget b would be exceeded');
    const ok = summarize({ kind: 'denied', denial }, 'r1', undefined);
    expect(ok.status).toBe(402);
    expect(ok.error).toMatchObject({
      code: 'budget_exceeded',
      message: 'budget b would be exceeded; the call was ended',
    });
    const failed = summarize({ kind: 'denied', denial }, 'r1', 'upstream returned HTTP 500');
    expect(failed.error?.message).toMatch(/ending the call failed: upstream returned HTTP 500$/);
  });

  it('logs a lost sideband as 502, a caller who left as 499, a shutdown as an interrupted success', () => {
    expect(summarize({ kind: 'lost', detail: 'closed with 1006' }, 'r', undefined)).toMatchObject({
      status: 502,
      error: { code: 'sideband_lost' },
    });
    expect(summarize({ kind: 'caller_left' }, 'r', undefined).status).toBe(499);
    expect(summarize({ kind: 'shutdown' }, 'r', undefined)).toMatchObject({
      status: 200,
      error: { code: 'gateway_shutdown' },
    });
  });

  it('logs an idle or overlong call as a success unless it could not be hung up', () => {
    expect(summarize({ kind: 'idle' }, 'r', undefined)).toEqual({ status: 200, error: undefined });
    expect(summarize({ kind: 'max_duration' }, 'r', 'timed out')).toMatchObject({
      status: 200,
      error: { code: 'hangup_failed' },
    });
  });
});
