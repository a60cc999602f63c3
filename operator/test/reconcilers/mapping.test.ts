// Pure mapping from resources to the gateway's state inputs, and the dependency graph used for re-reconciles.
import { StateError } from '@model-gateway/gateway/state';
import { describe, expect, it } from 'vitest';
import { VirtualKeySpec } from '../../src/crds/virtual-key.ts';
import { dependents } from '../../src/reconcilers/dependents.ts';
import { budgetId, inlineBudgetId, providerKeyId } from '../../src/reconcilers/ids.ts';
import { fromStateError, parseSpec } from '../../src/reconcilers/outcome.ts';
import { providerBody } from '../../src/reconcilers/provider.ts';
import { providerKeyBody, resolveProvider } from '../../src/reconcilers/provider-key.ts';
import { readSecretKey, referencedSecrets } from '../../src/reconcilers/secrets.ts';
import { virtualKeyBody } from '../../src/reconcilers/virtual-key.ts';
import { caches, NS, resource, secret } from './fixtures.ts';

const openaiProvider = resource('openai', { provider: 'openai' }, { ready: true });
const mainKey = resource(
  'main',
  { providerRef: { name: 'openai' }, valueFrom: { secretKeyRef: { name: 'creds', key: 'api-key' } } },
  { ready: true, status: { provider: 'openai', keyId: 'x' } },
);

describe('providers and keys', () => {
  it('maps networkConfig to snake_case, leaving unset fields out', () => {
    expect(providerBody({ provider: 'openai', networkConfig: { baseUrl: 'http://u', maxRetries: 2 } })).toEqual({
      network_config: { base_url: 'http://u', max_retries: 2 },
    });
    expect(providerBody({ provider: 'openai' })).toEqual({ network_config: {} });
  });

  it('maps a bedrock key with its Secret values; models default to deny-all', () => {
    const body = providerKeyBody(
      'team-a/aws',
      {
        providerRef: { name: 'bedrock' },
        bedrock: {
          region: 'us-east-1',
          accessKeySecretRef: { name: 's', key: 'a' },
          secretKeySecretRef: { name: 's', key: 'b' },
        },
      },
      { accessKey: 'AKIA', secretKey: 'shh' },
    );
    expect(body).toEqual({
      name: 'team-a/aws',
      value: '',
      models: [],
      weight: 1,
      aliases: {},
      bedrock_key_config: { access_key: 'AKIA', secret_key: 'shh', region: 'us-east-1' },
    });
  });

  it('maps a bedrock key without static keys to a region-only key (the AWS default credential chain)', () => {
    const body = providerKeyBody(
      'team-a/irsa',
      { providerRef: { name: 'bedrock' }, bedrock: { region: 'eu-west-1' } },
      {},
    );
    expect(body).toMatchObject({ bedrock_key_config: { region: 'eu-west-1' } });
    expect(body['bedrock_key_config']).toEqual({ region: 'eu-west-1' });
  });

  it('a key needs its Provider to exist and be Ready', () => {
    expect(resolveProvider(caches({}), 'openai')).toMatchObject({
      ok: false,
      outcome: { reason: 'ReferenceNotFound' },
    });
    const notReady = resource('openai', { provider: 'openai' });
    expect(resolveProvider(caches({ providers: [notReady] }), 'openai')).toMatchObject({
      ok: false,
      outcome: { message: 'Provider openai is not Ready' },
    });
    expect(resolveProvider(caches({ providers: [openaiProvider] }), 'openai')).toEqual({
      ok: true,
      provider: 'openai',
    });
  });
});

describe('virtual keys', () => {
  const spec = (extra: Record<string, unknown> = {}) =>
    VirtualKeySpec.parse({
      providerConfigs: [
        {
          provider: 'openai',
          allowedModels: ['gpt-4o'],
          providerKeyRefs: ['main'],
          budgets: [{ maxLimit: 5, resetDuration: '1d' }],
        },
      ],
      ...extra,
    });

  it('maps refs to stable key ids and folds in inline budgets and Budget resources', () => {
    const vk = resource('tenant', {});
    const budgets = [
      resource('monthly', { virtualKeyRef: { name: 'tenant' }, maxLimit: 100, resetDuration: '1M' }),
      resource('openai-daily', {
        virtualKeyRef: { name: 'tenant' },
        provider: 'openai',
        maxLimit: 3,
        resetDuration: '1d',
      }),
      resource('other', { virtualKeyRef: { name: 'someone-else' }, maxLimit: 1, resetDuration: '1d' }),
    ];
    const built = virtualKeyBody(
      vk,
      spec({ rateLimit: { requestMaxLimit: 10, requestResetDuration: '1m' } }),
      caches({ providerKeys: [mainKey], budgets }),
    );
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.body).toMatchObject({
      name: `${NS}/tenant`,
      is_active: true,
      budgets: [{ id: budgetId(NS, 'monthly'), max_limit: 100, reset_duration: '1M' }],
      rate_limit: { request_max_limit: 10, request_reset_duration: '1m', token_max_limit: null },
      provider_configs: [
        {
          provider: 'openai',
          allowed_models: ['gpt-4o'],
          key_ids: [providerKeyId(NS, 'main')],
          weight: null,
          budgets: [
            { id: inlineBudgetId(NS, 'tenant', 'openai', 0), max_limit: 5, reset_duration: '1d' },
            { id: budgetId(NS, 'openai-daily'), max_limit: 3, reset_duration: '1d' },
          ],
        },
      ],
    });
  });

  it('a Budget being deleted is left out, so the key drops it', () => {
    const deleting = resource('monthly', { virtualKeyRef: { name: 'tenant' }, maxLimit: 100, resetDuration: '1M' });
    deleting.metadata.deletionTimestamp = '2026-11-22T10:00:00Z';
    const built = virtualKeyBody(
      resource('tenant', {}),
      spec(),
      caches({ providerKeys: [mainKey], budgets: [deleting] }),
    );
    expect(built.ok && built.body.budgets).toEqual([]);
  });

  it('refuses a missing or not-Ready ProviderKey, and a key of another provider', () => {
    expect(virtualKeyBody(resource('t', {}), spec(), caches({}))).toMatchObject({
      ok: false,
      outcome: { reason: 'ReferenceNotFound', message: 'ProviderKey main not found' },
    });
    const groqKey = resource('main', {}, { ready: true, status: { provider: 'groq' } });
    expect(virtualKeyBody(resource('t', {}), spec(), caches({ providerKeys: [groqKey] }))).toMatchObject({
      ok: false,
      outcome: { reason: 'InvalidSpec', message: 'ProviderKey main is a groq key, listed under provider openai' },
    });
  });

  it('keeps "*" as the wildcard of key ids', () => {
    const s = VirtualKeySpec.parse({
      providerConfigs: [{ provider: 'openai', allowedModels: ['*'], providerKeyRefs: ['*'] }],
    });
    const built = virtualKeyBody(resource('t', {}), s, caches({}));
    expect(built.ok && built.body.provider_configs).toMatchObject([{ key_ids: ['*'] }]);
  });
});

describe('secrets', () => {
  it('reads a key and names what is missing without any value', () => {
    const s = caches({ secrets: [secret('creds', { 'api-key': 'sk-1' })] }).secrets;
    expect(readSecretKey(s, { name: 'creds', key: 'api-key' })).toEqual({ ok: true, value: 'sk-1' });
    expect(readSecretKey(s, { name: 'creds', key: 'nope' })).toEqual({
      ok: false,
      message: 'Secret creds has no key nope',
    });
    expect(readSecretKey(s, { name: 'gone', key: 'x' })).toEqual({ ok: false, message: 'Secret gone not found' });
  });

  it('finds every Secret a spec refers to', () => {
    const refs = referencedSecrets({
      valueFrom: { secretKeyRef: { name: 'a', key: 'k' } },
      bedrock: { accessKeySecretRef: { name: 'b', key: 'k' }, secretKeySecretRef: { name: 'c', key: 'k' } },
      headersFrom: { secretRef: { name: 'd' } },
      providerRef: { name: 'not-a-secret' },
    });
    expect([...refs].sort()).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('dependents', () => {
  it('a Provider wakes its keys; a key its VirtualKeys; a Secret its users and the VirtualKey it was generated for', () => {
    const vk = resource('tenant', { providerConfigs: [{ provider: 'openai', providerKeyRefs: ['main'] }] });
    const gen = resource('gen', {});
    const c = caches({ providerKeys: [mainKey], virtualKeys: [vk, gen] });
    expect(dependents('Provider', openaiProvider, c).map((d) => d.obj.metadata.name)).toEqual(['main']);
    expect(dependents('ProviderKey', mainKey, c).map((d) => d.obj.metadata.name)).toEqual(['tenant']);
    expect(dependents('Secret', resource('creds', {}), c).map((d) => `${d.kind}/${d.obj.metadata.name}`)).toEqual([
      'ProviderKey/main',
    ]);
    expect(dependents('Secret', resource('gen-virtual-key', {}), c).map((d) => d.obj.metadata.name)).toEqual(['gen']);
  });
});

describe('outcomes', () => {
  it('maps state errors the user can fix to reasons, and rethrows the rest', () => {
    expect(fromStateError(new StateError('conflict', 'taken'))).toMatchObject({ reason: 'Conflict', message: 'taken' });
    expect(fromStateError(new StateError('invalid', 'team_id: no team', 'team_id'))).toMatchObject({
      reason: 'ReferenceNotFound',
    });
    expect(fromStateError(new StateError('invalid', 'bad', 'name'))).toMatchObject({ reason: 'InvalidSpec' });
    expect(() => fromStateError(new Error('connection refused'))).toThrow('connection refused');
  });

  it('parseSpec names the field of a spec the operator cannot use', () => {
    const r = parseSpec(VirtualKeySpec, resource('t', { providerConfigs: [{ provider: 'nope' }] }));
    expect(r).toMatchObject({ ok: false, outcome: { reason: 'InvalidSpec' } });
    expect(!r.ok && r.outcome.ready === false && r.outcome.message).toMatch(/^spec\.providerConfigs\.0\.provider: /);
  });
});
