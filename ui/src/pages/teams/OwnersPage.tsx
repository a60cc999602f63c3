// Teams and customers: the owners virtual keys belong to, each with budgets and a rate limit that apply to all their
// keys. One page for both kinds: a team may belong to a customer; a customer has a contact email and its teams.
// The list shows usage against each budget and rate limit; a row's page (teams/:id, customers/:id) edits it.
import {
  Anchor,
  Button,
  Group,
  Modal,
  Paper,
  Select,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';
import { api, seg } from '../../api/client.ts';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import {
  ErrorAlert,
  isOperatorOwned,
  Loading,
  OperatorOwnedNotice,
  SourceBadge,
  useApiMutation,
} from '../../components/feedback.tsx';
import { StaleNotice, useFormVersion, useReportDirty } from '../../components/RemoteChange.tsx';
import {
  BudgetBars,
  type BudgetDraft,
  BudgetsFields,
  budgetBodies,
  budgetDrafts,
  FormActions,
  type FormLike,
  GOVERNANCE,
  type RateDraft,
  RateLimitBars,
  RateLimitFields,
  rateBody,
  rateDraft,
  rateEntryOf,
  showFieldError,
  useCustomers,
  useDeleteRow,
  useRateLimits,
  useTeams,
  useVirtualKeys,
} from '../virtual-keys/limits.tsx';
import { type Customer, customerKeys, type Team, teamKeys } from '../virtual-keys/types.ts';

export type OwnerKind = 'team' | 'customer';
type Owner = Team | Customer;

const WORDS = {
  team: { title: 'Teams', one: 'Team', path: '/teams', api: '/governance/teams', keys: teamKeys },
  customer: {
    title: 'Customers',
    one: 'Customer',
    path: '/customers',
    api: '/governance/customers',
    keys: customerKeys,
  },
} as const;

export function OwnersPage({ kind }: { kind: OwnerKind }) {
  return (
    <Routes>
      <Route index element={<OwnerList kind={kind} />} />
      <Route path=":id" element={<OwnerDetail kind={kind} />} />
    </Routes>
  );
}

function useOwners(kind: OwnerKind) {
  const teams = useTeams();
  const customers = useCustomers();
  return kind === 'team'
    ? { data: teams.data?.teams as Owner[] | undefined, error: teams.error, isPending: teams.isPending }
    : {
        data: customers.data?.customers as Owner[] | undefined,
        error: customers.error,
        isPending: customers.isPending,
      };
}

function OwnerList({ kind }: { kind: OwnerKind }) {
  const w = WORDS[kind];
  const owners = useOwners(kind);
  const customers = useCustomers();
  const teams = useTeams();
  const limits = useRateLimits();
  const [opened, { open, close }] = useDisclosure(false);
  const navigate = useNavigate();
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>{w.title}</Title>
        <Button onClick={open}>New {kind}</Button>
      </Group>
      <Text size="sm" c="dimmed">
        {kind === 'team'
          ? 'A team’s budgets and rate limit apply to every virtual key of the team, on top of each key’s own. A team may belong to a customer.'
          : 'A customer’s budgets and rate limit apply to every virtual key of the customer and of its teams.'}
      </Text>
      <ErrorAlert error={owners.error ?? limits.error} title={`Could not load the ${w.title.toLowerCase()}`} />
      {owners.isPending ? (
        <Loading what={w.title.toLowerCase()} />
      ) : owners.data?.length === 0 ? (
        <Text>No {kind} yet.</Text>
      ) : (
        <Table striped highlightOnHover aria-label={w.title} verticalSpacing="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Name</Table.Th>
              <Table.Th scope="col">{kind === 'team' ? 'Customer' : 'Email and teams'}</Table.Th>
              <Table.Th scope="col">Budgets</Table.Th>
              <Table.Th scope="col">Rate limit</Table.Th>
              <Table.Th scope="col">Source</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {owners.data?.map((o) => (
              <Table.Tr key={o.id}>
                <Table.Td>
                  <Anchor component={Link} to={seg(o.id)}>
                    {o.name}
                  </Anchor>
                  {o.description && (
                    <Text size="xs" c="dimmed">
                      {o.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  {'customer_id' in o ? (
                    o.customer_id ? (
                      <Anchor component={Link} to={`/customers/${seg(o.customer_id)}`} size="sm">
                        {customers.data?.customers.find((c) => c.id === o.customer_id)?.name ?? o.customer_id}
                      </Anchor>
                    ) : (
                      <Text size="sm" c="dimmed">
                        none
                      </Text>
                    )
                  ) : (
                    <Stack gap={2}>
                      <Text size="sm">{(o as Customer).email ?? '(no email)'}</Text>
                      <Text size="xs" c="dimmed">
                        {teams.data?.teams.filter((t) => t.customer_id === o.id).length ?? 0} team(s)
                      </Text>
                    </Stack>
                  )}
                </Table.Td>
                <Table.Td>
                  <BudgetBars budgets={o.budgets} owner={o.name} />
                </Table.Td>
                <Table.Td>
                  <RateLimitBars
                    entry={rateEntryOf(limits.data?.rate_limits, kind, o.id)}
                    limit={o.rate_limit}
                    owner={o.name}
                  />
                </Table.Td>
                <Table.Td>
                  <SourceBadge row={o} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal opened={opened} onClose={close} title={`New ${kind}`} size="lg">
        <OwnerForm
          kind={kind}
          onCancel={close}
          onSaved={(o) => {
            close();
            void navigate(`${w.path}/${seg(o.id)}`);
          }}
        />
      </Modal>
    </Stack>
  );
}

interface OwnerValues {
  name: string;
  description: string;
  customer_id: string | null;
  email: string;
  budgets: BudgetDraft[];
  rate_limit: RateDraft;
}

function OwnerForm(props: {
  kind: OwnerKind;
  existing?: Owner;
  readOnly?: boolean;
  onCancel?: () => void;
  onSaved?: (o: Owner) => void;
  /** Whether the user has changed the form (the page keeps their typing when the row changes elsewhere). */
  onDirtyChange?: (dirty: boolean) => void;
}) {
  const { kind, existing, readOnly = false } = props;
  const w = WORDS[kind];
  const customers = useCustomers();
  const form = useForm<OwnerValues>({
    initialValues: {
      name: existing?.name ?? '',
      description: existing?.description ?? '',
      customer_id: existing && 'customer_id' in existing ? existing.customer_id : null,
      email: existing && 'email' in existing ? (existing.email ?? '') : '',
      budgets: budgetDrafts(existing?.budgets),
      rate_limit: rateDraft(existing?.rate_limit),
    },
    validate: { name: (v) => (v.trim() ? null : `Give the ${kind} a name`) },
  });
  useReportDirty(form.isDirty(), props.onDirtyChange);
  const f = form as unknown as FormLike;
  const save = useApiMutation(
    (v: OwnerValues) => {
      const body: Record<string, unknown> = {
        name: v.name.trim(),
        description: v.description,
        budgets: budgetBodies(v.budgets),
        rate_limit: rateBody(v.rate_limit),
      };
      if (kind === 'team') body['customer_id'] = v.customer_id || null;
      else body['email'] = v.email.trim() || null;
      return existing ? api.put<Owner>(`${w.api}/${seg(existing.id)}`, body) : api.post<Owner>(w.api, body);
    },
    { invalidate: [GOVERNANCE], success: (o) => `${w.one} ${o.name} saved` },
    { onSuccess: (o) => props.onSaved?.(o), onError: (e) => showFieldError(f, e) },
  );
  const values = form.getValues();
  return (
    <form
      onSubmit={form.onSubmit((v) => save.mutate(v))}
      aria-label={existing ? `Settings of ${existing.name}` : `New ${kind}`}
    >
      <Stack>
        <ErrorAlert error={save.error} />
        <TextInput label="Name" required disabled={readOnly} data-autofocus {...form.getInputProps('name')} />
        <Textarea label="Description" autosize minRows={1} disabled={readOnly} {...form.getInputProps('description')} />
        {kind === 'team' ? (
          <Select
            label="Customer"
            description="The customer this team belongs to (its budgets apply too)"
            data={(customers.data?.customers ?? []).map((c) => ({ value: c.id, label: c.name }))}
            clearable
            searchable
            disabled={readOnly}
            nothingFoundMessage="No customer yet"
            {...form.getInputProps('customer_id')}
          />
        ) : (
          <TextInput
            label="Email"
            type="email"
            description="Who to contact about this customer"
            disabled={readOnly}
            {...form.getInputProps('email')}
          />
        )}
        <Text fw={500} size="sm">
          Budgets
        </Text>
        <BudgetsFields form={f} path="budgets" budgets={values.budgets} owner={`the ${kind}`} disabled={readOnly} />
        <Text fw={500} size="sm">
          Rate limit
        </Text>
        <RateLimitFields form={f} path="rate_limit" owner={kind} disabled={readOnly} />
        {!readOnly && (
          <FormActions
            submit={existing ? `Save ${kind}` : `Create ${kind}`}
            saving={save.isPending}
            onCancel={props.onCancel}
          />
        )}
      </Stack>
    </form>
  );
}

function OwnerDetail({ kind }: { kind: OwnerKind }) {
  const w = WORDS[kind];
  const id = useParams()['id'] ?? '';
  const owner = useQuery({ queryKey: [...w.keys, id], queryFn: () => api.get<Owner>(`${w.api}/${seg(id)}`) });
  const version = useFormVersion(owner.data?.updated_at);
  const limits = useRateLimits();
  const keys = useVirtualKeys();
  const teams = useTeams();
  const del = useDeleteRow({
    path: `${w.api}/${seg(id)}`,
    rowKey: [...w.keys, id],
    leaveTo: w.path,
    success: `${w.one} deleted`,
  });
  const data = owner.data;
  const readOnly = data ? isOperatorOwned(data) : true;
  const memberKeys = (keys.data?.virtual_keys ?? []).filter(
    (k) => (kind === 'team' ? k.team_id : k.customer_id) === id,
  );
  const memberTeams = kind === 'customer' ? (teams.data?.teams ?? []).filter((t) => t.customer_id === id) : [];
  return (
    <Stack>
      <Anchor component={Link} to={w.path} size="sm">
        ← All {w.title.toLowerCase()}
      </Anchor>
      <Group justify="space-between">
        <Title order={2}>
          {w.one} {data?.name ?? ''}
        </Title>
        {data && !readOnly && (
          <ConfirmButton
            label="Delete"
            ariaLabel={`Delete ${kind}`}
            confirm={`Delete the ${kind} ${data.name}? Its budgets and rate limit stop applying to its keys.`}
            loading={del.isPending}
            onConfirm={() => del.mutate()}
          />
        )}
      </Group>
      <ErrorAlert error={owner.error ?? del.error} title={`Could not load or change the ${kind}`} />
      {owner.isPending && <Loading what={`the ${kind}`} />}
      {data && (
        <>
          <OperatorOwnedNotice row={data} />
          <Paper withBorder p="md">
            <Title order={3} size="h4" mb="sm">
              Usage
            </Title>
            <Group align="flex-start" grow>
              <Stack gap="xs" aria-label={`Budgets of ${data.name}`}>
                <Text fw={500} size="sm">
                  Budgets
                </Text>
                <BudgetBars budgets={data.budgets} owner={data.name} />
              </Stack>
              <Stack gap="xs">
                <Text fw={500} size="sm">
                  Rate limit
                </Text>
                <RateLimitBars
                  entry={rateEntryOf(limits.data?.rate_limits, kind, data.id)}
                  limit={data.rate_limit}
                  owner={data.name}
                />
              </Stack>
            </Group>
          </Paper>
          <Paper withBorder p="md">
            <Title order={3} size="h4" mb="sm">
              Members
            </Title>
            <Stack gap="xs">
              {kind === 'customer' && (
                <Text size="sm">
                  Teams:{' '}
                  {memberTeams.length === 0
                    ? 'none'
                    : memberTeams.map((t, i) => (
                        <span key={t.id}>
                          {i > 0 && ', '}
                          <Anchor component={Link} to={`/teams/${seg(t.id)}`}>
                            {t.name}
                          </Anchor>
                        </span>
                      ))}
                </Text>
              )}
              <Text size="sm">
                Virtual keys:{' '}
                {memberKeys.length === 0
                  ? 'none (choose this owner on a key’s page)'
                  : memberKeys.map((k, i) => (
                      <span key={k.id}>
                        {i > 0 && ', '}
                        <Anchor component={Link} to={`/virtual-keys/${seg(k.id)}`}>
                          {k.name}
                        </Anchor>
                      </span>
                    ))}
              </Text>
            </Stack>
          </Paper>
          <Paper withBorder p="md">
            <Title order={3} size="h4" mb="sm">
              Settings
            </Title>
            <Stack>
              <StaleNotice what={kind} version={version} />
              <OwnerForm
                key={version.key}
                kind={kind}
                existing={data}
                readOnly={readOnly}
                onDirtyChange={version.setDirty}
                onSaved={(o) => version.adopt(o.updated_at)}
              />
            </Stack>
          </Paper>
        </>
      )}
    </Stack>
  );
}
