// Pricing overrides: prices that replace the catalog's for one model, everywhere or for one provider, provider key
// or virtual key. Token prices are typed per million tokens (as providers publish them) and stored per token;
// per-unit prices (images, audio and video seconds, characters, pages, search units, containers) in USD per unit.
// Audio-token prices (realtime and audio chat models) and image-token prices (realtime image input, GPT image models)
// are typed per million tokens too; unset, the override charges those tokens at its text rates.
import { Anchor, Button, Group, Modal, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, seg } from '../../api/client.ts';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorAlert, Loading, notifySuccess, useApiMutation } from '../../components/feedback.tsx';
import { keysOf, type Provider, type ProviderKey, providerKeys } from '../providers/types.ts';
import { FormActions, type FormLike, GOVERNANCE, showFieldError, useVirtualKeys } from '../virtual-keys/limits.tsx';

type Scope = 'global' | 'provider' | 'provider_key' | 'virtual_key';

const UNIT_PRICES = [
  ['output_cost_per_image', 'Per image generated'],
  ['input_cost_per_audio_per_second', 'Per second of audio in'],
  ['output_cost_per_audio_per_second', 'Per second of audio out'],
  ['input_cost_per_character', 'Per character in (speech)'],
  ['cost_per_page', 'Per page (OCR)'],
  ['output_cost_per_video_per_second', 'Per second of video'],
  ['cost_per_search_unit', 'Per search unit (rerank)'],
  ['cost_per_container', 'Per container'],
] as const;
type UnitField = (typeof UNIT_PRICES)[number][0];

const TOKEN_PRICES = [
  ['input_cost_per_token', 'Input'],
  ['output_cost_per_token', 'Output'],
  ['cache_read_cost_per_token', 'Cache read'],
  ['cache_write_cost_per_token', 'Cache write'],
] as const;
type TokenField = (typeof TOKEN_PRICES)[number][0];

// Labels say "audio" after the kind so a label search for "Input per 1M tokens" finds the text rate alone.
const AUDIO_TOKEN_PRICES = [
  ['input_cost_per_audio_token', 'Input audio', 'audio input'],
  ['output_cost_per_audio_token', 'Output audio', 'audio output'],
  ['cache_read_input_audio_token_cost', 'Cache read audio', 'audio cache read'],
] as const;
type AudioField = (typeof AUDIO_TOKEN_PRICES)[number][0];

const IMAGE_TOKEN_PRICES = [
  ['input_cost_per_image_token', 'Input image', 'image input'],
  ['output_cost_per_image_token', 'Output image', 'image output'],
  ['cache_read_input_image_token_cost', 'Cache read image', 'image cache read'],
] as const;
type ImageTokenField = (typeof IMAGE_TOKEN_PRICES)[number][0];

/** The per-million rates of tokens of one modality, each falling back to the text rate of its kind when unset. */
const MODALITY_TOKEN_PRICES = [...AUDIO_TOKEN_PRICES, ...IMAGE_TOKEN_PRICES];
type ModalityField = AudioField | ImageTokenField;

type PricingOverride = {
  id: string;
  scope: Scope;
  scope_id: string | null;
  provider: string;
  model: string;
  input_cost_per_token: number;
  output_cost_per_token: number;
  cache_read_cost_per_token: number | null;
  cache_write_cost_per_token: number | null;
  output_cost_per_image_variants: Record<string, number> | null;
  created_at: string;
  updated_at: string;
} & Record<UnitField | ModalityField, number | null>;

const overrideKeys = ['governance', 'pricing-overrides'] as const;
const MILLION = 1_000_000;

/** A price as plain decimal text (never `2.5e-7`), without float noise. */
function plain(n: number): string {
  return Number(n.toPrecision(12)).toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 20 });
}

/** USD per token → the text of USD per 1M tokens. */
function perMillion(n: number | null | undefined): string {
  return n == null ? '' : plain(n * MILLION);
}

const SCOPE_WORDS: Record<Scope, string> = {
  global: 'Everywhere',
  provider: 'One provider',
  provider_key: 'One provider key',
  virtual_key: 'One virtual key',
};

export default function PricingPage() {
  const list = useQuery({
    queryKey: overrideKeys,
    queryFn: () => api.get<{ pricing_overrides: PricingOverride[] }>('/governance/pricing-overrides'),
  });
  const [editing, setEditing] = useState<PricingOverride | 'new' | undefined>(undefined);
  const del = useApiMutation((o: PricingOverride) => api.del(`/governance/pricing-overrides/${seg(o.id)}`), {
    invalidate: [GOVERNANCE],
  });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Pricing overrides</Title>
        <Button onClick={() => setEditing('new')}>New pricing override</Button>
      </Group>
      <Text size="sm" c="dimmed">
        Prices that replace the built-in catalog’s for a model: negotiated rates, self-hosted models, or models the
        catalog does not know. Budgets are charged at these prices. The most specific override wins (virtual key, then
        provider key, then provider, then everywhere).
      </Text>
      <ErrorAlert error={list.error ?? del.error} title="Could not load or change the pricing overrides" />
      {list.isPending ? (
        <Loading what="pricing overrides" />
      ) : list.data?.pricing_overrides.length === 0 ? (
        <Text>No pricing override: every model is charged at the catalog’s price.</Text>
      ) : (
        <Table striped highlightOnHover aria-label="Pricing overrides" verticalSpacing="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Model</Table.Th>
              <Table.Th scope="col">Applies to</Table.Th>
              <Table.Th scope="col">Input per 1M tokens</Table.Th>
              <Table.Th scope="col">Output per 1M tokens</Table.Th>
              <Table.Th scope="col">Other prices</Table.Th>
              <Table.Th scope="col">Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.pricing_overrides.map((o) => {
              const label = `${o.provider}/${o.model}`;
              const others = [
                ...(o.cache_read_cost_per_token != null
                  ? [`cache read $${perMillion(o.cache_read_cost_per_token)}/1M`]
                  : []),
                ...(o.cache_write_cost_per_token != null
                  ? [`cache write $${perMillion(o.cache_write_cost_per_token)}/1M`]
                  : []),
                ...MODALITY_TOKEN_PRICES.filter(([f]) => o[f] != null).map(
                  ([f, , words]) => `${words} $${perMillion(o[f])}/1M`,
                ),
                ...UNIT_PRICES.filter(([f]) => o[f] != null).map(
                  ([f, words]) => `${words.toLowerCase()} $${plain(o[f] ?? 0)}`,
                ),
              ];
              return (
                <Table.Tr key={o.id}>
                  <Table.Td>{label}</Table.Td>
                  <Table.Td>
                    {SCOPE_WORDS[o.scope]}
                    {o.scope_id && (
                      <Text size="xs" c="dimmed">
                        {o.scope === 'virtual_key' ? (
                          <Anchor component={Link} to={`/virtual-keys/${seg(o.scope_id)}`} size="xs">
                            {o.scope_id}
                          </Anchor>
                        ) : (
                          o.scope_id
                        )}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>${perMillion(o.input_cost_per_token)}</Table.Td>
                  <Table.Td>${perMillion(o.output_cost_per_token)}</Table.Td>
                  <Table.Td>
                    <Text size="sm">{others.length > 0 ? others.join('; ') : '—'}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      <Button
                        size="xs"
                        variant="light"
                        onClick={() => setEditing(o)}
                        aria-label={`Edit pricing of ${label}`}
                      >
                        Edit
                      </Button>
                      <ConfirmButton
                        size="xs"
                        label="Delete"
                        ariaLabel={`Delete pricing of ${label}`}
                        confirm={`Delete the pricing override of ${label}? The catalog’s price applies again.`}
                        onConfirm={() =>
                          del.mutate(o, { onSuccess: () => notifySuccess(`Pricing of ${label} deleted`) })
                        }
                      />
                    </Group>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
      <Modal
        opened={editing !== undefined}
        onClose={() => setEditing(undefined)}
        title={
          editing === 'new' || editing === undefined
            ? 'New pricing override'
            : `Pricing of ${editing.provider}/${editing.model}`
        }
        size="xl"
      >
        {editing !== undefined && (
          <OverrideForm existing={editing === 'new' ? undefined : editing} onDone={() => setEditing(undefined)} />
        )}
      </Modal>
    </Stack>
  );
}

type Values = { scope: Scope; scope_id: string | null; provider: string | null; model: string } & Record<
  TokenField | ModalityField | UnitField,
  string
>;

/** Typed text → the number the API takes; empty → undefined; anything else is sent as typed for the API to refuse. */
function price(text: string, scale = 1): number | string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n / scale : t;
}

function OverrideForm({ existing, onDone }: { existing: PricingOverride | undefined; onDone: () => void }) {
  const initial = {
    scope: existing?.scope ?? 'global',
    scope_id: existing?.scope_id ?? null,
    provider: existing?.provider ?? null,
    model: existing?.model ?? '',
  } as Values;
  for (const [f] of TOKEN_PRICES) initial[f] = perMillion(existing?.[f]);
  for (const [f] of MODALITY_TOKEN_PRICES) initial[f] = perMillion(existing?.[f]);
  for (const [f] of UNIT_PRICES) initial[f] = existing?.[f] == null ? '' : plain(existing[f] ?? 0);
  const form = useForm<Values>({
    initialValues: initial,
    validate: {
      provider: (v) => (v ? null : 'Choose the provider'),
      model: (v) => (v.trim() ? null : 'Name the model, as the provider calls it'),
      scope_id: (v, all) => (all.scope !== 'global' && !v ? 'Choose what the price applies to' : null),
    },
  });
  const v = form.getValues();
  const providers = useQuery({
    queryKey: providerKeys,
    queryFn: () => api.get<{ providers: Provider[] }>('/providers'),
  });
  const keyProvider = v.scope === 'provider_key' ? (v.provider ?? '') : '';
  const keys = useQuery({
    queryKey: keysOf(keyProvider),
    queryFn: () => api.get<{ keys: ProviderKey[] }>(`/providers/${seg(keyProvider)}/keys`),
    enabled: keyProvider !== '',
  });
  const vks = useVirtualKeys(v.scope === 'virtual_key');
  const providerNames = (providers.data?.providers ?? []).map((p) => p.name);
  const scopeOptions =
    v.scope === 'provider'
      ? providerNames.map((n) => ({ value: n, label: n }))
      : v.scope === 'provider_key'
        ? (keys.data?.keys ?? []).map((k) => ({ value: k.id, label: `${k.name} (${k.id})` }))
        : v.scope === 'virtual_key'
          ? (vks.data?.virtual_keys ?? []).map((k) => ({ value: k.id, label: k.name }))
          : [];
  const f = form as unknown as FormLike;
  const save = useApiMutation(
    (values: Values) => {
      const body: Record<string, unknown> = {
        scope: values.scope,
        scope_id: values.scope === 'global' ? null : values.scope_id,
        provider: values.provider,
        model: values.model.trim(),
      };
      for (const [field] of TOKEN_PRICES) {
        const p = price(values[field], MILLION);
        // Input and output are not nullable: left empty they are left out (kept on an edit).
        if (p !== undefined) body[field] = p;
        else if (field.startsWith('cache')) body[field] = null;
      }
      // Empty means unset: null clears a rate an edit removes, as for the cache rates.
      for (const [field] of MODALITY_TOKEN_PRICES) body[field] = price(values[field], MILLION) ?? null;
      for (const [field] of UNIT_PRICES) body[field] = price(values[field]) ?? null;
      return existing
        ? api.put<PricingOverride>(`/governance/pricing-overrides/${seg(existing.id)}`, body)
        : api.post<PricingOverride>('/governance/pricing-overrides', body);
    },
    { invalidate: [GOVERNANCE], success: (o) => `Pricing of ${o.provider}/${o.model} saved` },
    { onSuccess: onDone, onError: (e) => showFieldError(f, e) },
  );
  /** One grid of prices typed per 1M tokens (text, audio or image tokens). */
  const perMillionGrid = (fields: readonly (readonly [TokenField | ModalityField, string, ...string[]])[]) => (
    <SimpleGrid cols={4}>
      {fields.map(([field, words]) => (
        <TextInput
          key={field}
          label={`${words} per 1M tokens`}
          inputMode="decimal"
          leftSection="$"
          {...form.getInputProps(field)}
        />
      ))}
    </SimpleGrid>
  );
  return (
    <form onSubmit={form.onSubmit((values) => save.mutate(values))} aria-label="Pricing override">
      <Stack>
        <ErrorAlert error={save.error} />
        <Group grow align="flex-start">
          <Select
            label="Provider"
            required
            data={v.provider && !providerNames.includes(v.provider) ? [...providerNames, v.provider] : providerNames}
            searchable
            {...form.getInputProps('provider')}
          />
          <TextInput label="Model" required placeholder="gpt-4o-mini" {...form.getInputProps('model')} />
        </Group>
        <Group grow align="flex-start">
          <Select
            label="Applies to"
            data={Object.entries(SCOPE_WORDS).map(([value, label]) => ({ value, label }))}
            allowDeselect={false}
            {...form.getInputProps('scope')}
          />
          {v.scope !== 'global' && (
            <Select
              label={SCOPE_WORDS[v.scope]}
              data={scopeOptions}
              searchable
              nothingFoundMessage={v.scope === 'provider_key' && !v.provider ? 'Choose the provider first' : 'None yet'}
              {...form.getInputProps('scope_id')}
            />
          )}
        </Group>
        <Text fw={500} size="sm">
          Token prices (USD per 1M tokens)
        </Text>
        {perMillionGrid(TOKEN_PRICES)}
        <Text fw={500} size="sm">
          Audio token prices (USD per 1M audio tokens; empty: audio tokens are charged at the token prices above)
        </Text>
        {perMillionGrid(AUDIO_TOKEN_PRICES)}
        <Text fw={500} size="sm">
          Image token prices (USD per 1M image tokens; empty: image tokens are charged at the token prices above)
        </Text>
        {perMillionGrid(IMAGE_TOKEN_PRICES)}
        <Text fw={500} size="sm">
          Unit prices (USD per unit; for models charged by something other than tokens)
        </Text>
        <SimpleGrid cols={4}>
          {UNIT_PRICES.map(([field, words]) => (
            <TextInput key={field} label={words} inputMode="decimal" leftSection="$" {...form.getInputProps(field)} />
          ))}
        </SimpleGrid>
        <FormActions submit="Save pricing override" saving={save.isPending} onCancel={onDone} />
      </Stack>
    </form>
  );
}
