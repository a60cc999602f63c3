// Virtual keys: the list with each key's budgets and rate limits against their usage, a new key (its value shown
// once, in a dialog with a copy button, and never again), and (under virtual-keys/:id) one key's usage and settings.
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Code,
  CopyButton,
  Group,
  Modal,
  Paper,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
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
import { StaleNotice, useFormVersion } from '../../components/RemoteChange.tsx';
import {
  BudgetBars,
  budgetsWithUsage,
  GOVERNANCE,
  RateLimitBars,
  rateEntryOf,
  saveAdopting,
  showFieldError,
  useBudgets,
  useCustomers,
  useDeleteRow,
  useRateLimits,
  useTeams,
  useVirtualKeys,
} from './limits.tsx';
import { type VirtualKey, type VirtualKeyCreated, vkKeys } from './types.ts';
import { VirtualKeyForm } from './VirtualKeyForm.tsx';

export default function VirtualKeysPage() {
  return (
    <Routes>
      <Route index element={<VirtualKeyList />} />
      <Route path="new" element={<NewVirtualKey />} />
      <Route path=":id" element={<VirtualKeyDetail />} />
    </Routes>
  );
}

function useOwnerNames() {
  const teams = useTeams();
  const customers = useCustomers();
  return (vk: Pick<VirtualKey, 'team_id' | 'customer_id'>) => {
    if (vk.team_id) {
      const t = teams.data?.teams.find((x) => x.id === vk.team_id);
      return { kind: 'Team', name: t?.name ?? vk.team_id, to: `/teams/${seg(vk.team_id)}` };
    }
    if (vk.customer_id) {
      const c = customers.data?.customers.find((x) => x.id === vk.customer_id);
      return { kind: 'Customer', name: c?.name ?? vk.customer_id, to: `/customers/${seg(vk.customer_id)}` };
    }
    return undefined;
  };
}

function VirtualKeyList() {
  const list = useVirtualKeys();
  const budgets = useBudgets();
  const limits = useRateLimits();
  const ownerOf = useOwnerNames();
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Virtual keys</Title>
        <Button component={Link} to="new">
          New virtual key
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        The keys your applications send instead of provider keys: each says which providers and models it may use, and
        caps spending and traffic. A key’s value is shown once, when it is created.
      </Text>
      <ErrorAlert error={list.error ?? budgets.error ?? limits.error} title="Could not load the virtual keys" />
      {list.isPending ? (
        <Loading what="virtual keys" />
      ) : list.data && list.data.virtual_keys.length === 0 ? (
        <Text>No virtual key yet. Create one to give an application access.</Text>
      ) : (
        <Table striped highlightOnHover aria-label="Virtual keys" verticalSpacing="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Name</Table.Th>
              <Table.Th scope="col">Team or customer</Table.Th>
              <Table.Th scope="col">Active</Table.Th>
              <Table.Th scope="col">Providers</Table.Th>
              <Table.Th scope="col">Budgets</Table.Th>
              <Table.Th scope="col">Rate limit</Table.Th>
              <Table.Th scope="col">Source</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.virtual_keys.map((vk) => {
              const owner = ownerOf(vk);
              return (
                <Table.Tr key={vk.id}>
                  <Table.Td>
                    <Anchor component={Link} to={seg(vk.id)}>
                      {vk.name}
                    </Anchor>
                    <Text size="xs" c="dimmed">
                      {vk.value_hint}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    {owner ? (
                      <Anchor component={Link} to={owner.to} size="sm">
                        {owner.kind}: {owner.name}
                      </Anchor>
                    ) : (
                      <Text c="dimmed" size="sm">
                        none
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <ActiveBadge vk={vk} />
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">
                      {vk.provider_configs.length > 0
                        ? vk.provider_configs.map((pc) => pc.provider).join(', ')
                        : 'none'}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <BudgetBars budgets={budgetsWithUsage(budgets.data?.budgets, vk.budgets)} owner={vk.name} />
                  </Table.Td>
                  <Table.Td>
                    <RateLimitBars
                      entry={rateEntryOf(limits.data?.rate_limits, 'virtual_key', vk.id)}
                      limit={vk.rate_limit}
                      owner={vk.name}
                    />
                  </Table.Td>
                  <Table.Td>
                    <SourceBadge row={vk} />
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

function ActiveBadge({ vk }: { vk: VirtualKey }) {
  const expired = vk.expires_at !== null && Date.parse(vk.expires_at) <= Date.now();
  if (!vk.is_active) return <Badge color="gray">inactive</Badge>;
  if (expired) return <Badge color="orange">expired</Badge>;
  return <Badge color="green">active</Badge>;
}

function NewVirtualKey() {
  const navigate = useNavigate();
  // The value lives only here, until the dialog is closed; no query caches it and no page shows it again.
  const [created, setCreated] = useState<VirtualKeyCreated | undefined>(undefined);
  const create = useApiMutation(
    (v: { body: Record<string, unknown> }) => api.post<VirtualKeyCreated>('/governance/virtual-keys', v.body),
    { invalidate: [GOVERNANCE] },
  );
  /** Forgets the value (state and the mutation's result) and goes to the key's page. */
  const done = () => {
    const id = created?.id ?? '';
    setCreated(undefined);
    create.reset();
    void navigate(`/virtual-keys/${seg(id)}`);
  };
  return (
    <Stack>
      <Anchor component={Link} to="/virtual-keys" size="sm">
        ← All virtual keys
      </Anchor>
      <Title order={2}>New virtual key</Title>
      <Paper withBorder p="md">
        <VirtualKeyForm
          submitLabel="Create virtual key"
          saving={create.isPending}
          error={create.error}
          onSubmit={(body, form) =>
            create.mutate({ body }, { onSuccess: (vk) => setCreated(vk), onError: (e) => showFieldError(form, e) })
          }
          onCancel={() => void navigate('/virtual-keys')}
        />
      </Paper>
      <Modal
        opened={created !== undefined}
        onClose={done}
        title="Virtual key created"
        closeOnClickOutside={false}
        closeButtonProps={{ 'aria-label': 'Close' }}
        size="lg"
      >
        {created && <CreatedValue vk={created} onDone={done} />}
      </Modal>
    </Stack>
  );
}

function CreatedValue({ vk, onDone }: { vk: VirtualKeyCreated; onDone: () => void }) {
  return (
    <Stack>
      <Alert color="yellow" title="Copy it now">
        This is the only time the key’s value is shown. Store it where your application reads its secrets; if it is
        lost, create a new key.
      </Alert>
      <Text size="sm">
        Value of <strong>{vk.name}</strong>:
      </Text>
      <Code block aria-label="Virtual key value" style={{ wordBreak: 'break-all' }}>
        {vk.value}
      </Code>
      <Group justify="space-between">
        <CopyButton value={vk.value} timeout={4000}>
          {({ copied, copy }) => (
            <Button color={copied ? 'teal' : 'blue'} onClick={copy}>
              {copied ? 'Copied' : 'Copy key'}
            </Button>
          )}
        </CopyButton>
        <Text size="xs" c="dimmed">
          Send it as <Code>Authorization: Bearer …</Code> (or <Code>x-gateway-vk</Code>).
        </Text>
      </Group>
      <Group justify="flex-end">
        <Button variant="default" onClick={onDone}>
          Done: I have stored it
        </Button>
      </Group>
    </Stack>
  );
}

function VirtualKeyDetail() {
  const id = useParams()['id'] ?? '';
  const vk = useQuery({
    queryKey: [...vkKeys, id],
    queryFn: () => api.get<VirtualKey>(`/governance/virtual-keys/${seg(id)}`),
  });
  const limits = useRateLimits();
  const ownerOf = useOwnerNames();
  const save = useApiMutation(
    (v: { body: Record<string, unknown> }) => api.put<VirtualKey>(`/governance/virtual-keys/${seg(id)}`, v.body),
    { invalidate: [GOVERNANCE], success: (k) => `Virtual key ${k.name} saved` },
  );
  const del = useDeleteRow({
    path: `/governance/virtual-keys/${seg(id)}`,
    rowKey: [...vkKeys, id],
    leaveTo: '/virtual-keys',
    success: 'Virtual key deleted',
  });
  const data = vk.data;
  const version = useFormVersion(data?.updated_at);
  const readOnly = data ? isOperatorOwned(data) : true;
  const owner = data ? ownerOf(data) : undefined;
  return (
    <Stack>
      <Anchor component={Link} to="/virtual-keys" size="sm">
        ← All virtual keys
      </Anchor>
      <Group justify="space-between">
        <Title order={2}>Virtual key {data?.name ?? ''}</Title>
        {data && !readOnly && (
          <ConfirmButton
            label="Delete"
            ariaLabel="Delete virtual key"
            confirm={`Delete the virtual key ${data.name}? Applications using it are refused from then on.`}
            loading={del.isPending}
            onConfirm={() => del.mutate()}
          />
        )}
      </Group>
      <ErrorAlert error={vk.error ?? del.error} title="Could not load or change the virtual key" />
      {vk.isPending && <Loading what="the virtual key" />}
      {data && (
        <>
          <OperatorOwnedNotice row={data} />
          <Group gap="xs">
            <ActiveBadge vk={data} />
            <SourceBadge row={data} />
            <Text size="sm">
              Value: <Code>{data.value_hint}</Code> (shown in full only when it was created)
            </Text>
            {owner && (
              <Anchor component={Link} to={owner.to} size="sm">
                {owner.kind}: {owner.name}
              </Anchor>
            )}
          </Group>
          <Paper withBorder p="md">
            <Title order={3} size="h4" mb="sm">
              Usage
            </Title>
            <Table aria-label={`Usage of ${data.name}`} verticalSpacing="sm">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Applies to</Table.Th>
                  <Table.Th scope="col">Budgets</Table.Th>
                  <Table.Th scope="col">Rate limit</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                <Table.Tr>
                  <Table.Td>Every request of the key</Table.Td>
                  <Table.Td>
                    <BudgetBars budgets={data.budgets} owner={data.name} />
                  </Table.Td>
                  <Table.Td>
                    <RateLimitBars
                      entry={rateEntryOf(limits.data?.rate_limits, 'virtual_key', data.id)}
                      limit={data.rate_limit}
                      owner={data.name}
                    />
                  </Table.Td>
                </Table.Tr>
                {data.provider_configs.map((pc) => (
                  <Table.Tr key={pc.id}>
                    <Table.Td>Requests to {pc.provider}</Table.Td>
                    <Table.Td>
                      <BudgetBars budgets={pc.budgets} owner={`${data.name} on ${pc.provider}`} />
                    </Table.Td>
                    <Table.Td>
                      <RateLimitBars
                        entry={rateEntryOf(limits.data?.rate_limits, 'provider_config', pc.id)}
                        limit={pc.rate_limit}
                        owner={`${data.name} on ${pc.provider}`}
                      />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            <Group justify="flex-end" mt="xs">
              <Button variant="default" size="xs" onClick={() => void vk.refetch().then(() => limits.refetch())}>
                Refresh usage
              </Button>
            </Group>
          </Paper>
          <Paper withBorder p="md">
            <Title order={3} size="h4" mb="sm">
              Settings
            </Title>
            <Stack>
              <StaleNotice what="virtual key" version={version} />
              <VirtualKeyForm
                key={version.key}
                existing={data}
                readOnly={readOnly}
                submitLabel="Save virtual key"
                saving={save.isPending}
                error={save.error}
                onDirtyChange={version.setDirty}
                onSubmit={saveAdopting(save, version)}
              />
            </Stack>
          </Paper>
        </>
      )}
    </Stack>
  );
}
