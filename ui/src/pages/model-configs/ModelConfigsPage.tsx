// Model configs and provider governance: a budget and a rate limit for every request to one model (on one provider
// or all) or to one provider, with or without a virtual key; each shown against its usage, set in a dialog.
// On an edit an emptied field is sent as null, which removes it (the API merges the others).
import {
  Button,
  Checkbox,
  Group,
  Modal,
  NumberInput,
  Paper,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { api, seg } from '../../api/client.ts';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorAlert, Loading, useApiMutation } from '../../components/feedback.tsx';
import { type Provider, providerKeys } from '../providers/types.ts';
import {
  BudgetBar,
  FormActions,
  type FormLike,
  GOVERNANCE,
  num,
  type RateCounters,
  type RateDraft,
  RateLimitBars,
  RateLimitFields,
  rateDraft,
  showFieldError,
} from '../virtual-keys/limits.tsx';

interface LimitBudget {
  id: string;
  max_limit: number;
  reset_duration: string;
  calendar_aligned: boolean;
  current_usage: number;
}

type LimitRate = RateCounters;

interface ModelConfig {
  id: string;
  model_name: string;
  provider?: string;
  budget?: LimitBudget;
  rate_limit?: LimitRate;
}

interface ProviderGovernance {
  provider: string;
  budget?: LimitBudget;
  rate_limit?: LimitRate;
}

/** What differs between the two sections: the rows, their names, and the API paths. */
interface SectionSpec<T extends Limited> {
  kind: 'model' | 'provider';
  title: string;
  /** The button that opens a new row's dialog, and that dialog's title. */
  add: string;
  empty: string;
  queryKey: readonly unknown[];
  load: () => Promise<T[]>;
  /** The row's name in labels (`gpt-4o`, `openai`) and its key. */
  name: (row: T) => string;
  /** Columns before the limits. */
  columns: { header: string; cell: (row: T) => ReactNode }[];
  remove: { label: 'Delete' | 'Remove'; aria: string; path: (row: T) => string; done: string };
}

/** A row of either section. */
type Limited = ModelConfig | ProviderGovernance;

const MODEL_SECTION: SectionSpec<ModelConfig> = {
  kind: 'model',
  title: 'Model configs',
  add: 'New model config',
  empty: 'No model config: models are limited only by keys, teams and customers.',
  queryKey: ['governance', 'model-configs'],
  load: async () => (await api.get<{ model_configs: ModelConfig[] }>('/governance/model-configs')).model_configs,
  name: (c) => c.model_name,
  columns: [
    { header: 'Model', cell: (c) => c.model_name },
    {
      header: 'Provider',
      cell: (c) =>
        c.provider ?? (
          <Text c="dimmed" size="sm">
            every provider
          </Text>
        ),
    },
  ],
  remove: {
    label: 'Delete',
    aria: 'Delete model config',
    path: (c) => `/governance/model-configs/${seg(c.id)}`,
    done: 'Model config deleted',
  },
};

const PROVIDER_SECTION: SectionSpec<ProviderGovernance> = {
  kind: 'provider',
  title: 'Provider limits',
  add: 'Limit a provider',
  empty: 'No provider is limited as a whole.',
  queryKey: ['governance', 'providers'],
  load: async () => (await api.get<{ providers: ProviderGovernance[] }>('/governance/providers')).providers,
  name: (p) => p.provider,
  columns: [{ header: 'Provider', cell: (p) => p.provider }],
  remove: {
    label: 'Remove',
    aria: 'Remove limits of',
    path: (p) => `/governance/providers/${seg(p.provider)}`,
    done: 'Provider limits removed',
  },
};

export default function ModelConfigsPage() {
  return (
    <Stack>
      <Title order={2}>Model configs and provider limits</Title>
      <Text size="sm" c="dimmed">
        Budgets and rate limits for all traffic to a model or a provider, whichever key (or none) sends it, on top of
        each virtual key’s own.
      </Text>
      <LimitsSection spec={MODEL_SECTION} />
      <LimitsSection spec={PROVIDER_SECTION} />
    </Stack>
  );
}

function LimitsSection<T extends Limited>({ spec }: { spec: SectionSpec<T> }) {
  const list = useQuery({ queryKey: spec.queryKey, queryFn: spec.load });
  const [editing, setEditing] = useState<T | 'new' | undefined>(undefined);
  const del = useApiMutation((row: T) => api.del(spec.remove.path(row)), {
    invalidate: [GOVERNANCE],
    success: spec.remove.done,
  });
  return (
    <Paper withBorder p="md">
      <Group justify="space-between" mb="sm">
        <Title order={3} size="h4">
          {spec.title}
        </Title>
        <Button size="xs" onClick={() => setEditing('new')}>
          {spec.add}
        </Button>
      </Group>
      <ErrorAlert error={list.error ?? del.error} title={`Could not load or change the ${spec.title.toLowerCase()}`} />
      {list.isPending ? (
        <Loading what={spec.title.toLowerCase()} />
      ) : list.data?.length === 0 ? (
        <Text size="sm">{spec.empty}</Text>
      ) : (
        <Table aria-label={spec.title} verticalSpacing="sm" striped>
          <Table.Thead>
            <Table.Tr>
              {spec.columns.map((c) => (
                <Table.Th key={c.header} scope="col">
                  {c.header}
                </Table.Th>
              ))}
              <Table.Th scope="col">Budget</Table.Th>
              <Table.Th scope="col">Rate limit</Table.Th>
              <Table.Th scope="col">Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.map((row) => {
              const name = spec.name(row);
              return (
                <Table.Tr key={name + (row.budget?.id ?? '')}>
                  {spec.columns.map((c) => (
                    <Table.Td key={c.header}>{c.cell(row)}</Table.Td>
                  ))}
                  <Table.Td>
                    {row.budget ? (
                      <BudgetBar budget={row.budget} owner={name} />
                    ) : (
                      <Text size="sm" c="dimmed">
                        No budget
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <RateLimitBars entry={row.rate_limit} owner={name} />
                  </Table.Td>
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      <Button
                        size="xs"
                        variant="light"
                        onClick={() => setEditing(row)}
                        aria-label={`Edit limits of ${name}`}
                      >
                        Edit
                      </Button>
                      <ConfirmButton
                        size="xs"
                        label={spec.remove.label}
                        ariaLabel={`${spec.remove.aria} ${name}`}
                        confirm={`Remove the budget and rate limit of ${name}?`}
                        onConfirm={() => del.mutate(row)}
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
        title={editing === 'new' || editing === undefined ? spec.add : `Limits of ${spec.name(editing)}`}
        size="lg"
      >
        {editing !== undefined && (
          <LimitsForm
            kind={spec.kind}
            existing={editing === 'new' ? undefined : editing}
            onDone={() => setEditing(undefined)}
          />
        )}
      </Modal>
    </Paper>
  );
}

interface LimitValues {
  model_name: string;
  provider: string | null;
  max_limit: number | string;
  reset_duration: string;
  calendar_aligned: boolean;
  rate_limit: RateDraft;
}

/** Budget and rate-limit bodies of a merge update: emptied fields are null (removed), untouched ones as typed. */
function limitBodies(v: LimitValues, editing: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const max = num(v.max_limit);
  if (max === undefined && !v.reset_duration.trim()) {
    if (editing) out['budget'] = null;
  } else {
    out['budget'] = {
      ...(max !== undefined ? { max_limit: max } : {}),
      ...(v.reset_duration.trim() ? { reset_duration: v.reset_duration.trim() } : {}),
      calendar_aligned: v.calendar_aligned,
    };
  }
  const r = v.rate_limit;
  const rate = {
    request_max_limit: num(r.request_max_limit) ?? null,
    request_reset_duration: r.request_reset_duration.trim() || null,
    token_max_limit: num(r.token_max_limit) ?? null,
    token_reset_duration: r.token_reset_duration.trim() || null,
  };
  if (Object.values(rate).every((x) => x === null)) {
    if (editing) out['rate_limit'] = null;
  } else out['rate_limit'] = rate;
  return out;
}

function LimitsForm(props: {
  kind: 'model' | 'provider';
  existing: ModelConfig | ProviderGovernance | undefined;
  onDone: () => void;
}) {
  const { kind, existing } = props;
  const model = existing && 'model_name' in existing ? existing : undefined;
  const gov = existing && 'provider' in existing && !('model_name' in existing) ? existing : undefined;
  const rl = existing?.rate_limit;
  const form = useForm<LimitValues>({
    initialValues: {
      model_name: model?.model_name ?? '',
      provider: model?.provider ?? gov?.provider ?? null,
      max_limit: existing?.budget?.max_limit ?? '',
      reset_duration: existing?.budget?.reset_duration ?? '',
      calendar_aligned: existing?.budget?.calendar_aligned ?? false,
      rate_limit: rateDraft({
        ...(rl?.request_max_limit != null ? { request_max_limit: rl.request_max_limit } : {}),
        ...(rl?.request_reset_duration ? { request_reset_duration: rl.request_reset_duration } : {}),
        ...(rl?.token_max_limit != null ? { token_max_limit: rl.token_max_limit } : {}),
        ...(rl?.token_reset_duration ? { token_reset_duration: rl.token_reset_duration } : {}),
      }),
    },
    validate: {
      model_name: (v) => (kind === 'model' && !v.trim() ? 'Name the model' : null),
      provider: (v) => (kind === 'provider' && !v ? 'Choose the provider' : null),
    },
  });
  const providers = useQuery({
    queryKey: providerKeys,
    queryFn: () => api.get<{ providers: Provider[] }>('/providers'),
  });
  const f = form as unknown as FormLike;
  const save = useApiMutation(
    (v: LimitValues) => {
      const limits = limitBodies(v, existing !== undefined);
      if (kind === 'provider') return api.put<unknown>(`/governance/providers/${seg(v.provider ?? '')}`, limits);
      const body = { model_name: v.model_name.trim(), provider: v.provider || null, ...limits };
      return model
        ? api.put<unknown>(`/governance/model-configs/${seg(model.id)}`, body)
        : api.post<unknown>('/governance/model-configs', body);
    },
    { invalidate: [GOVERNANCE], success: kind === 'model' ? 'Model config saved' : 'Provider limits saved' },
    { onSuccess: props.onDone, onError: (e) => showFieldError(f, e) },
  );
  const names = (providers.data?.providers ?? []).map((p) => p.name);
  return (
    <form
      onSubmit={form.onSubmit((v) => save.mutate(v))}
      aria-label={kind === 'model' ? 'Model config' : 'Provider limits'}
    >
      <Stack>
        <ErrorAlert error={save.error} />
        {kind === 'model' && (
          <TextInput label="Model" required placeholder="gpt-4o" data-autofocus {...form.getInputProps('model_name')} />
        )}
        <Select
          label="Provider"
          description={kind === 'model' ? 'Leave empty for the model on every provider' : undefined}
          required={kind === 'provider'}
          disabled={gov !== undefined}
          data={names}
          clearable={kind === 'model'}
          searchable
          nothingFoundMessage="No provider yet"
          {...form.getInputProps('provider')}
        />
        <Text fw={500} size="sm">
          Budget
        </Text>
        <Group grow align="flex-start">
          <NumberInput
            label="Budget limit (USD)"
            min={0}
            decimalScale={6}
            prefix="$"
            {...form.getInputProps('max_limit')}
          />
          <TextInput
            label="Budget resets every"
            description="30d, 1M, ...; leave both empty for no budget"
            {...form.getInputProps('reset_duration')}
          />
        </Group>
        <Checkbox
          label="Calendar aligned (periods start at the top of the day, week, month or year, in UTC)"
          {...form.getInputProps('calendar_aligned', { type: 'checkbox' })}
        />
        <Text fw={500} size="sm">
          Rate limit
        </Text>
        <RateLimitFields form={f} path="rate_limit" owner={kind === 'model' ? 'model' : 'provider'} />
        <FormActions submit="Save limits" saving={save.isPending} onCancel={props.onDone} />
      </Stack>
    </form>
  );
}
