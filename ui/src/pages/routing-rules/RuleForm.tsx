// A routing rule's form: the CEL condition checked as it is typed (POST /governance/routing-rules/validate, the
// gateway's own compiler, so the verdict is the one the save would give), weighted targets, fallbacks, scope,
// priority and whether it is enabled.
import {
  ActionIcon,
  Button,
  Code,
  Fieldset,
  Group,
  NumberInput,
  Select,
  Stack,
  Switch,
  TagsInput,
  Text,
  Textarea,
  TextInput,
  Tooltip,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { ErrorAlert } from '../../components/feedback.tsx';
import { useReportDirty } from '../../components/RemoteChange.tsx';
import type { Provider } from '../providers/types.ts';
import { providerKeys } from '../providers/types.ts';
import {
  FormActions,
  type FormLike,
  num,
  rowKey,
  useCustomers,
  useTeams,
  useVirtualKeys,
} from '../virtual-keys/limits.tsx';
import type { RoutingRule, RuleScope } from './types.ts';

interface TargetDraft {
  key: string;
  provider: string | null;
  model: string;
  weight: number | string;
}

interface RuleValues {
  name: string;
  description: string;
  enabled: boolean;
  cel_expression: string;
  targets: TargetDraft[];
  fallbacks: string[];
  scope: RuleScope;
  scope_id: string | null;
  priority: number | string;
}

function newTarget(): TargetDraft {
  return { key: rowKey(), provider: null, model: '', weight: 1 };
}

function initial(rule: RoutingRule | undefined): RuleValues {
  return {
    name: rule?.name ?? '',
    description: rule?.description ?? '',
    enabled: rule?.enabled ?? true,
    cel_expression: rule?.cel_expression ?? '',
    targets: rule?.targets.map((t) => ({
      key: rowKey(),
      provider: t.provider ?? null,
      model: t.model ?? '',
      weight: t.weight,
    })) ?? [newTarget()],
    fallbacks: rule?.fallbacks ?? [],
    scope: rule?.scope ?? 'global',
    scope_id: rule?.scope_id ?? null,
    priority: rule?.priority ?? 0,
  };
}

export function ruleBody(v: RuleValues): Record<string, unknown> {
  return {
    name: v.name.trim(),
    description: v.description,
    enabled: v.enabled,
    cel_expression: v.cel_expression,
    targets: v.targets.map((t) => ({
      ...(t.provider ? { provider: t.provider } : {}),
      ...(t.model.trim() ? { model: t.model.trim() } : {}),
      weight: num(t.weight) ?? 1,
    })),
    fallbacks: v.fallbacks,
    scope: v.scope,
    scope_id: v.scope === 'global' ? null : v.scope_id,
    priority: num(v.priority) ?? 0,
  };
}

interface CelVerdict {
  valid: boolean;
  error?: string;
}

/** The gateway's verdict on an expression, asked for once typing pauses. */
function useCelCheck(expression: string) {
  const [settled] = useDebouncedValue(expression, 300);
  const check = useQuery({
    queryKey: ['cel-validate', settled],
    queryFn: () => api.post<CelVerdict>('/governance/routing-rules/validate', { cel_expression: settled }),
    enabled: settled.trim() !== '',
    staleTime: Number.POSITIVE_INFINITY,
    retry: false,
  });
  const current = settled === expression && settled.trim() !== '';
  return { verdict: current ? check.data : undefined, checking: current && check.isFetching, error: check.error };
}

const CEL_HELP =
  'Variables: request.model, request.provider, request.headers["name"], request.params.<field>, ' +
  'request.message_count, virtual_key.name, team.name, customer.name (and .id). Example: ' +
  'request.message_count > 20 && "x-tier" in request.headers';

export function RuleForm(props: {
  existing?: RoutingRule;
  submitLabel: string;
  saving: boolean;
  error: unknown;
  onSubmit: (body: Record<string, unknown>, form: FormLike) => void;
  onCancel?: () => void;
  /** Whether the user has changed the form (the page keeps their typing when the rule changes elsewhere). */
  onDirtyChange?: (dirty: boolean) => void;
}) {
  const form = useForm<RuleValues>({
    initialValues: initial(props.existing),
    validate: {
      name: (v) => (v.trim() ? null : 'Give the rule a name'),
      cel_expression: (v) => (v.trim() ? null : 'Write the condition the rule matches'),
      targets: (v) => (v.length > 0 ? null : 'Add at least one target'),
      scope_id: (v, all) => (all.scope !== 'global' && !v ? `Choose the ${all.scope.replace('_', ' ')}` : null),
    },
  });
  useReportDirty(form.isDirty(), props.onDirtyChange);
  const v = form.getValues();
  const cel = useCelCheck(v.cel_expression);
  const providers = useQuery({
    queryKey: providerKeys,
    queryFn: () => api.get<{ providers: Provider[] }>('/providers'),
  });
  const teams = useTeams();
  const customers = useCustomers();
  const keys = useVirtualKeys(v.scope === 'virtual_key');
  const scopeRows =
    v.scope === 'team'
      ? (teams.data?.teams ?? [])
      : v.scope === 'customer'
        ? (customers.data?.customers ?? [])
        : v.scope === 'virtual_key'
          ? (keys.data?.virtual_keys ?? [])
          : [];
  const providerNames = (providers.data?.providers ?? []).map((p) => p.name);
  const f = form as unknown as FormLike;
  const celProps = form.getInputProps('cel_expression');
  const celError = celProps.error ?? (cel.verdict && !cel.verdict.valid ? cel.verdict.error : undefined);
  return (
    <form
      onSubmit={form.onSubmit((values) => props.onSubmit(ruleBody(values), f))}
      aria-label={props.existing ? `Settings of ${props.existing.name}` : 'New routing rule'}
    >
      <Stack>
        <ErrorAlert error={props.error} />
        <Group grow align="flex-start">
          <TextInput label="Name" required data-autofocus {...form.getInputProps('name')} />
          <NumberInput
            label="Priority"
            description="Higher runs first; the first matching rule routes the request"
            allowDecimal={false}
            {...form.getInputProps('priority')}
          />
        </Group>
        <Textarea label="Description" autosize minRows={1} {...form.getInputProps('description')} />
        <Textarea
          label="CEL expression"
          description={CEL_HELP}
          required
          autosize
          minRows={2}
          spellCheck={false}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          {...celProps}
          error={celError}
        />
        <Text size="sm" role="status" aria-live="polite" c={cel.verdict?.valid ? 'green' : 'dimmed'}>
          {cel.checking
            ? 'Checking the expression…'
            : cel.verdict?.valid
              ? 'Valid expression'
              : cel.error
                ? 'The expression could not be checked now; saving checks it again'
                : ''}
        </Text>
        <Fieldset legend="Targets">
          <Stack gap="xs">
            <Text size="xs" c="dimmed">
              A matching request goes to one target, chosen by weight. Leave the provider or model empty to keep the
              request’s own.
            </Text>
            {v.targets.map((t, i) => (
              <Group key={t.key} align="flex-start" wrap="nowrap">
                <Select
                  label={`Target ${i + 1}: provider`}
                  placeholder="the request’s provider"
                  data={
                    t.provider && !providerNames.includes(t.provider) ? [...providerNames, t.provider] : providerNames
                  }
                  clearable
                  searchable
                  {...form.getInputProps(`targets.${i}.provider`)}
                />
                <TextInput
                  label={`Target ${i + 1}: model`}
                  placeholder="the request’s model"
                  {...form.getInputProps(`targets.${i}.model`)}
                />
                <NumberInput
                  label={`Target ${i + 1}: weight`}
                  min={0}
                  w={120}
                  {...form.getInputProps(`targets.${i}.weight`)}
                />
                <Tooltip label="Remove this target">
                  <ActionIcon
                    variant="subtle"
                    color="red"
                    mt={28}
                    onClick={() => form.removeListItem('targets', i)}
                    aria-label={`Remove target ${i + 1}`}
                  >
                    ×
                  </ActionIcon>
                </Tooltip>
              </Group>
            ))}
            {typeof form.errors['targets'] === 'string' && (
              <Text size="sm" c="red">
                {form.errors['targets']}
              </Text>
            )}
            <Group>
              <Button variant="light" size="xs" onClick={() => form.insertListItem('targets', newTarget())}>
                Add target
              </Button>
            </Group>
          </Stack>
        </Fieldset>
        <TagsInput
          label="Fallbacks"
          description={
            <>
              Tried in order when the target fails, as <Code>provider/model</Code>; press Enter after each
            </>
          }
          {...form.getInputProps('fallbacks')}
        />
        <Group grow align="flex-start">
          <Select
            label="Scope"
            description="Which requests the rule considers"
            data={[
              { value: 'global', label: 'Every request' },
              { value: 'team', label: 'A team’s keys' },
              { value: 'customer', label: 'A customer’s keys' },
              { value: 'virtual_key', label: 'One virtual key' },
            ]}
            allowDeselect={false}
            {...form.getInputProps('scope')}
          />
          {v.scope !== 'global' && (
            <Select
              label={`Scope: ${v.scope.replace('_', ' ')}`}
              data={scopeRows.map((r) => ({ value: r.id, label: r.name }))}
              searchable
              nothingFoundMessage="None yet"
              {...form.getInputProps('scope_id')}
            />
          )}
        </Group>
        <Switch label="Enabled" {...form.getInputProps('enabled', { type: 'checkbox' })} />
        <FormActions submit={props.submitLabel} saving={props.saving} onCancel={props.onCancel} />
      </Stack>
    </form>
  );
}
