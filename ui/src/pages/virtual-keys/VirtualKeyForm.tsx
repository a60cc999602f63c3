// A virtual key's settings, for a create and for an edit (PUT sends every list whole, budgets with their ids so
// they keep their usage). Provider configs each carry their allow-lists, weight, budgets and rate limit. The
// gateway's refusals are shown in words above the form and under the field they name.
import {
  Autocomplete,
  Button,
  Divider,
  Fieldset,
  Group,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  TagsInput,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { api, seg } from '../../api/client.ts';
import { ErrorAlert } from '../../components/feedback.tsx';
import { useReportDirty } from '../../components/RemoteChange.tsx';
import { keysOf, type Provider, type ProviderKey, providerKeys } from '../providers/types.ts';
import {
  type BudgetDraft,
  BudgetsFields,
  budgetBodies,
  budgetDrafts,
  FormActions,
  type FormLike,
  num,
  type RateDraft,
  RateLimitFields,
  rateBody,
  rateDraft,
  rowKey,
  useCustomers,
  useTeams,
} from './limits.tsx';
import type { VirtualKey } from './types.ts';

interface PcDraft {
  key: string;
  provider: string;
  allowed_models: string[];
  key_ids: string[];
  weight: number | string;
  budgets: BudgetDraft[];
  rate_limit: RateDraft;
}

interface McpDraft {
  key: string;
  mcp_client_name: string;
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
}

export interface VkValues {
  name: string;
  description: string;
  is_active: boolean;
  /** `datetime-local` text (the browser's time zone); empty: never expires. */
  expires_at: string;
  belongs_to: 'none' | 'team' | 'customer';
  team_id: string | null;
  customer_id: string | null;
  budgets: BudgetDraft[];
  calendar_aligned: boolean;
  rate_limit: RateDraft;
  allowed_extra_headers: string[];
  mcp_configs: McpDraft[];
  provider_configs: PcDraft[];
}

function newPc(): PcDraft {
  return {
    key: rowKey(),
    provider: '',
    allowed_models: ['*'],
    key_ids: ['*'],
    weight: 1,
    budgets: [],
    rate_limit: rateDraft(null),
  };
}

/** An ISO time as a `datetime-local` value in the browser's zone. */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const off = d.getTimezoneOffset() * 60_000;
  return new Date(d.getTime() - off).toISOString().slice(0, 16);
}

export function initialValues(vk: VirtualKey | undefined): VkValues {
  return {
    name: vk?.name ?? '',
    description: vk?.description ?? '',
    is_active: vk?.is_active ?? true,
    expires_at: localInput(vk?.expires_at ?? null),
    belongs_to: vk?.team_id ? 'team' : vk?.customer_id ? 'customer' : 'none',
    team_id: vk?.team_id ?? null,
    customer_id: vk?.customer_id ?? null,
    budgets: budgetDrafts(vk?.budgets),
    calendar_aligned: vk?.calendar_aligned ?? false,
    rate_limit: rateDraft(vk?.rate_limit),
    allowed_extra_headers: vk?.allowed_extra_headers ?? [],
    mcp_configs: (vk?.mcp_configs ?? []).map((m) => ({ key: rowKey(), ...m })),
    provider_configs: (vk?.provider_configs ?? []).map((pc) => ({
      key: rowKey(),
      provider: pc.provider,
      allowed_models: pc.allowed_models,
      key_ids: pc.key_ids,
      weight: pc.weight ?? '',
      budgets: budgetDrafts(pc.budgets),
      rate_limit: rateDraft(pc.rate_limit),
    })),
  };
}

/** The API body of the form (create and update alike; `value` is never sent). */
export function vkBody(v: VkValues): Record<string, unknown> {
  return {
    name: v.name.trim(),
    description: v.description,
    is_active: v.is_active,
    expires_at: v.expires_at ? new Date(v.expires_at).toISOString() : null,
    team_id: v.belongs_to === 'team' ? v.team_id : null,
    customer_id: v.belongs_to === 'customer' ? v.customer_id : null,
    budgets: budgetBodies(v.budgets),
    calendar_aligned: v.calendar_aligned,
    rate_limit: rateBody(v.rate_limit),
    allowed_extra_headers: v.allowed_extra_headers,
    mcp_configs: v.mcp_configs.map(({ key: _row, ...m }) => m),
    provider_configs: v.provider_configs.map((pc) => ({
      provider: pc.provider,
      allowed_models: pc.allowed_models,
      key_ids: pc.key_ids,
      weight: num(pc.weight) ?? null,
      budgets: budgetBodies(pc.budgets),
      rate_limit: rateBody(pc.rate_limit),
    })),
  };
}

export function VirtualKeyForm(props: {
  existing?: VirtualKey;
  readOnly?: boolean;
  submitLabel: string;
  saving: boolean;
  error: unknown;
  onSubmit: (body: Record<string, unknown>, form: FormLike) => void;
  onCancel?: () => void;
  /** Whether the user has changed the form (the page keeps their typing when the key changes elsewhere). */
  onDirtyChange?: (dirty: boolean) => void;
}) {
  const { readOnly = false } = props;
  const form = useForm<VkValues>({
    initialValues: initialValues(props.existing),
    validate: {
      name: (v) => (v.trim() ? null : 'Give the key a name'),
      team_id: (v, all) => (all.belongs_to === 'team' && !v ? 'Choose the team' : null),
      customer_id: (v, all) => (all.belongs_to === 'customer' && !v ? 'Choose the customer' : null),
      provider_configs: { provider: (v) => (v ? null : 'Choose a provider') },
    },
  });
  useReportDirty(form.isDirty(), props.onDirtyChange);
  const teams = useTeams();
  const customers = useCustomers();
  const providers = useQuery({
    queryKey: providerKeys,
    queryFn: () => api.get<{ providers: Provider[] }>('/providers'),
  });
  const mcp = useQuery({
    queryKey: ['mcp', 'clients'],
    queryFn: () => api.get<{ config: { name: string } }[]>('/mcp/clients'),
  });
  const v = form.getValues();
  const f = form as unknown as FormLike;
  return (
    <form
      onSubmit={form.onSubmit((values) => props.onSubmit(vkBody(values), f))}
      aria-label={props.existing ? `Settings of ${props.existing.name}` : 'New virtual key'}
    >
      <Stack>
        <ErrorAlert error={props.error} />
        <Group grow align="flex-start">
          <TextInput label="Name" required disabled={readOnly} data-autofocus {...form.getInputProps('name')} />
          <TextInput
            label="Expires at"
            type="datetime-local"
            description="Leave empty for a key that never expires"
            disabled={readOnly}
            {...form.getInputProps('expires_at')}
          />
        </Group>
        <Textarea label="Description" autosize minRows={1} disabled={readOnly} {...form.getInputProps('description')} />
        <Switch
          label="Active (an inactive key is refused)"
          disabled={readOnly}
          {...form.getInputProps('is_active', { type: 'checkbox' })}
        />

        <Fieldset legend="Belongs to" disabled={readOnly}>
          <Stack gap="xs">
            <SegmentedControl
              aria-label="Belongs to"
              data={[
                { value: 'none', label: 'Nobody' },
                { value: 'team', label: 'A team' },
                { value: 'customer', label: 'A customer' },
              ]}
              {...form.getInputProps('belongs_to')}
            />
            {v.belongs_to === 'team' && (
              <Select
                label="Team"
                description="The team’s budgets and rate limit apply too"
                data={(teams.data?.teams ?? []).map((t) => ({ value: t.id, label: t.name }))}
                searchable
                nothingFoundMessage="No team yet: add one on the Teams page"
                {...form.getInputProps('team_id')}
              />
            )}
            {v.belongs_to === 'customer' && (
              <Select
                label="Customer"
                description="The customer’s budgets and rate limit apply too"
                data={(customers.data?.customers ?? []).map((c) => ({ value: c.id, label: c.name }))}
                searchable
                nothingFoundMessage="No customer yet: add one on the Customers page"
                {...form.getInputProps('customer_id')}
              />
            )}
          </Stack>
        </Fieldset>

        <Fieldset legend="Budgets of the key" disabled={readOnly}>
          <Stack gap="xs">
            <BudgetsFields form={f} path="budgets" budgets={v.budgets} owner="the key" disabled={readOnly} />
            <Switch
              label="Calendar aligned (periods start at the top of the day, week, month or year, in UTC)"
              {...form.getInputProps('calendar_aligned', { type: 'checkbox' })}
            />
          </Stack>
        </Fieldset>

        <Fieldset legend="Rate limit of the key" disabled={readOnly}>
          <RateLimitFields form={f} path="rate_limit" owner="key" disabled={readOnly} />
        </Fieldset>

        <Fieldset legend="Providers the key may use" disabled={readOnly}>
          <Stack>
            {v.provider_configs.length === 0 && (
              <Text size="sm" c="dimmed">
                No provider: the key can call none. Add one below.
              </Text>
            )}
            {v.provider_configs.map((pc, i) => (
              <ProviderConfigFields
                key={pc.key}
                form={f}
                index={i}
                pc={pc}
                providers={(providers.data?.providers ?? []).map((p) => p.name)}
                readOnly={readOnly}
              />
            ))}
            {!readOnly && (
              <Group>
                <Button variant="light" onClick={() => form.insertListItem('provider_configs', newPc())}>
                  Add provider config
                </Button>
              </Group>
            )}
          </Stack>
        </Fieldset>

        <Fieldset legend="Request headers and MCP tools" disabled={readOnly}>
          <Stack>
            <TagsInput
              label="Allowed extra headers"
              description="Headers the caller may forward upstream (x-my-header), or * for any; press Enter after each"
              disabled={readOnly}
              {...form.getInputProps('allowed_extra_headers')}
            />
            {v.mcp_configs.map((m, i) => (
              <Group key={m.key} align="flex-end" grow>
                <Autocomplete
                  label={`MCP client ${i + 1}`}
                  data={(mcp.data ?? []).map((c) => c.config.name)}
                  disabled={readOnly}
                  {...form.getInputProps(`mcp_configs.${i}.mcp_client_name`)}
                />
                <TagsInput
                  label={`Tools it may execute (client ${i + 1})`}
                  description="* for all"
                  disabled={readOnly}
                  {...form.getInputProps(`mcp_configs.${i}.tools_to_execute`)}
                />
                <TagsInput
                  label={`Tools executed without asking (client ${i + 1})`}
                  disabled={readOnly}
                  {...form.getInputProps(`mcp_configs.${i}.tools_to_auto_execute`)}
                />
                {!readOnly && (
                  <Button
                    variant="subtle"
                    color="red"
                    onClick={() => form.removeListItem('mcp_configs', i)}
                    aria-label={`Remove MCP client ${i + 1}`}
                  >
                    Remove
                  </Button>
                )}
              </Group>
            ))}
            {!readOnly && (
              <Group>
                <Button
                  variant="light"
                  onClick={() =>
                    form.insertListItem('mcp_configs', {
                      key: rowKey(),
                      mcp_client_name: '',
                      tools_to_execute: ['*'],
                      tools_to_auto_execute: [],
                    })
                  }
                >
                  Add MCP client
                </Button>
              </Group>
            )}
          </Stack>
        </Fieldset>

        {!readOnly && <FormActions submit={props.submitLabel} saving={props.saving} onCancel={props.onCancel} />}
      </Stack>
    </form>
  );
}

function ProviderConfigFields(props: {
  form: FormLike;
  index: number;
  pc: PcDraft;
  providers: string[];
  readOnly: boolean;
}) {
  const { form, index: i, pc, readOnly } = props;
  const owner = pc.provider || `provider config ${i + 1}`;
  const keys = useQuery({
    queryKey: keysOf(pc.provider),
    queryFn: () => api.get<{ keys: ProviderKey[] }>(`/providers/${seg(pc.provider)}/keys`),
    enabled: pc.provider !== '',
  });
  const keyList = keys.data?.keys ?? [];
  return (
    <Stack gap="xs" p="sm" bd="1px solid var(--mantine-color-default-border)" style={{ borderRadius: 8 }}>
      <Group grow align="flex-start">
        <Select
          label={`Provider ${i + 1}`}
          data={
            props.providers.includes(pc.provider) || !pc.provider ? props.providers : [...props.providers, pc.provider]
          }
          searchable
          disabled={readOnly}
          nothingFoundMessage="No provider yet: add one on Providers & keys"
          {...form.getInputProps(`provider_configs.${i}.provider`)}
        />
        <NumberInput
          label={`Weight (${owner})`}
          description="Share of traffic when the model is on several providers"
          min={0}
          disabled={readOnly}
          {...form.getInputProps(`provider_configs.${i}.weight`)}
        />
      </Group>
      <TagsInput
        label={`Allowed models (${owner})`}
        description="* for every model; empty allows none; press Enter after each"
        disabled={readOnly}
        {...form.getInputProps(`provider_configs.${i}.allowed_models`)}
      />
      <TagsInput
        label={`Allowed key ids (${owner})`}
        description={
          keyList.length > 0
            ? `* for every key; ids: ${keyList.map((k) => `${k.id} (${k.name})`).join(', ')}`
            : '* for every key of the provider; empty allows none'
        }
        data={['*', ...keyList.map((k) => k.id)]}
        disabled={readOnly}
        {...form.getInputProps(`provider_configs.${i}.key_ids`)}
      />
      <Divider label={`Budgets (${owner})`} labelPosition="left" />
      <BudgetsFields
        form={form}
        path={`provider_configs.${i}.budgets`}
        budgets={pc.budgets}
        owner={owner}
        disabled={readOnly}
      />
      <Divider label={`Rate limit (${owner})`} labelPosition="left" />
      <RateLimitFields form={form} path={`provider_configs.${i}.rate_limit`} owner={owner} disabled={readOnly} />
      {!readOnly && (
        <Group justify="flex-end">
          <Button
            variant="subtle"
            color="red"
            size="xs"
            onClick={() => form.removeListItem('provider_configs', i)}
            aria-label={`Remove provider config ${owner}`}
          >
            Remove provider config
          </Button>
        </Group>
      )}
    </Stack>
  );
}
