// One provider: its network settings and its keys. Operator-owned rows are read-only and say which object to edit.
import {
  Anchor,
  Badge,
  Button,
  Group,
  Modal,
  NumberInput,
  Paper,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
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
import { KeyForm } from './KeyForm.tsx';
import { keysOf, type NetworkConfig, type Provider, type ProviderKey, providerKeys } from './types.ts';

export function ProviderDetail() {
  const name = useParams()['name'] ?? '';
  const provider = useQuery({
    queryKey: [...providerKeys, name],
    queryFn: () => api.get<Provider>(`/providers/${seg(name)}`),
  });
  return (
    <Stack>
      <Anchor component={Link} to="/providers" size="sm">
        ← All providers
      </Anchor>
      <Title order={2}>Provider {name}</Title>
      <ErrorAlert error={provider.error} title="Could not load the provider" />
      {provider.isPending && <Loading what="the provider" />}
      {provider.data && (
        <>
          <OperatorOwnedNotice row={provider.data} />
          <NetworkSettings provider={provider.data} />
          <Keys provider={provider.data} />
        </>
      )}
    </Stack>
  );
}

function NetworkSettings({ provider }: { provider: Provider }) {
  const navigate = useNavigate();
  const readOnly = isOperatorOwned(provider);
  const nc = provider.network_config;
  const form = useForm({
    initialValues: {
      base_url: nc.base_url ?? '',
      timeout: (nc.default_request_timeout_in_seconds ?? '') as number | string,
      max_retries: (nc.max_retries ?? '') as number | string,
    },
  });
  const save = useApiMutation(
    (v: typeof form.values) => {
      // network_config is replaced whole: keep the fields this form does not show.
      const next: NetworkConfig = { ...nc };
      delete next.base_url;
      delete next.default_request_timeout_in_seconds;
      delete next.max_retries;
      if (v.base_url.trim()) next.base_url = v.base_url.trim();
      if (typeof v.timeout === 'number') next.default_request_timeout_in_seconds = v.timeout;
      if (typeof v.max_retries === 'number') next.max_retries = v.max_retries;
      return api.put<Provider>(`/providers/${seg(provider.name)}`, { network_config: next });
    },
    { invalidate: [providerKeys], success: 'Provider settings saved' },
  );
  const remove = useApiMutation(() => api.del(`/providers/${seg(provider.name)}`), {
    invalidate: [providerKeys],
    success: `Provider ${provider.name} deleted`,
  });
  return (
    <Paper withBorder p="md">
      <form onSubmit={form.onSubmit((v) => save.mutate(v))} aria-label="Network settings">
        <Stack>
          <Group justify="space-between">
            <Title order={3} size="h4">
              Network settings
            </Title>
            <SourceBadge row={provider} />
          </Group>
          <ErrorAlert error={save.error ?? remove.error} />
          <TextInput
            label="Base URL"
            description="Leave empty for the provider’s own endpoint"
            disabled={readOnly}
            {...form.getInputProps('base_url')}
          />
          <Group grow>
            <NumberInput
              label="Timeout (seconds)"
              min={1}
              max={3600}
              disabled={readOnly}
              {...form.getInputProps('timeout')}
            />
            <NumberInput label="Retries" min={0} max={10} disabled={readOnly} {...form.getInputProps('max_retries')} />
          </Group>
          {!readOnly && (
            <Group justify="space-between">
              <ConfirmButton
                label="Delete provider"
                confirm={`Delete provider ${provider.name} and all its keys?`}
                loading={remove.isPending}
                onConfirm={() => remove.mutate(undefined, { onSuccess: () => void navigate('/providers') })}
              />
              <Button type="submit" loading={save.isPending}>
                Save settings
              </Button>
            </Group>
          )}
        </Stack>
      </form>
    </Paper>
  );
}

function Keys({ provider }: { provider: Provider }) {
  const keys = useQuery({
    queryKey: keysOf(provider.name),
    queryFn: () => api.get<{ keys: ProviderKey[]; total: number }>(`/providers/${seg(provider.name)}/keys`),
    select: (d) => d.keys,
  });
  const [editing, setEditing] = useState<ProviderKey | 'new' | undefined>();
  // The dialog keeps its title while it closes (editing is already undefined then).
  const [title, setTitle] = useState('');
  const edit = (k: ProviderKey | 'new') => {
    setTitle(k === 'new' ? `Add a key to ${provider.name}` : `Edit key ${k.name}`);
    setEditing(k);
  };
  const remove = useApiMutation((k: ProviderKey) => api.del(`/providers/${seg(provider.name)}/keys/${seg(k.id)}`), {
    invalidate: [keysOf(provider.name)],
    success: 'Key deleted',
  });
  return (
    <Paper withBorder p="md">
      <Stack>
        <Group justify="space-between">
          <Title order={3} size="h4">
            Keys
          </Title>
          {!isOperatorOwned(provider) && <Button onClick={() => edit('new')}>Add key</Button>}
        </Group>
        <ErrorAlert error={keys.error ?? remove.error} />
        {keys.isPending ? (
          <Loading what="keys" />
        ) : keys.data?.length === 0 ? (
          <Text>No key yet: requests to {provider.name} fail until one is added.</Text>
        ) : (
          <Table aria-label={`Keys of ${provider.name}`} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Name</Table.Th>
                <Table.Th scope="col">Value</Table.Th>
                <Table.Th scope="col">Models</Table.Th>
                <Table.Th scope="col">Weight</Table.Th>
                <Table.Th scope="col">Source</Table.Th>
                <Table.Th scope="col">
                  <span className="visually-hidden">Actions</span>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {keys.data?.map((k) => (
                <Table.Tr key={k.id}>
                  <Table.Td>
                    <Text size="sm" fw={500}>
                      {k.name}
                    </Text>
                    <Text size="xs" c="dimmed">
                      {k.id}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <code>{k.value || '—'}</code>
                  </Table.Td>
                  <Table.Td>
                    {k.models.length === 0 ? (
                      <Text size="sm" c="dimmed">
                        all
                      </Text>
                    ) : (
                      <Group gap={4}>
                        {k.models.map((m) => (
                          <Badge key={m} variant="outline" size="sm" tt="none">
                            {m}
                          </Badge>
                        ))}
                      </Group>
                    )}
                  </Table.Td>
                  <Table.Td>{k.weight}</Table.Td>
                  <Table.Td>
                    <SourceBadge row={k} />
                  </Table.Td>
                  <Table.Td>
                    {!isOperatorOwned(k) && (
                      <Group gap="xs" wrap="nowrap">
                        <Button size="xs" variant="default" onClick={() => edit(k)} aria-label={`Edit key ${k.name}`}>
                          Edit
                        </Button>
                        <ConfirmButton
                          size="xs"
                          label="Delete"
                          ariaLabel={`Delete key ${k.name}`}
                          confirm={`Delete key ${k.name}? Requests stop using it at once.`}
                          onConfirm={() => remove.mutate(k)}
                        />
                      </Group>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
      <Modal opened={editing !== undefined} onClose={() => setEditing(undefined)} title={title} size="lg">
        {editing !== undefined && (
          <KeyForm
            provider={provider.name}
            existing={editing === 'new' ? undefined : editing}
            onDone={() => setEditing(undefined)}
          />
        )}
      </Modal>
    </Paper>
  );
}
