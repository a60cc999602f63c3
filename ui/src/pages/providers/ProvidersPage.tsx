// Providers: the list, adding one, and (under providers/:name) one provider's settings and keys.
import { Anchor, Button, Group, Modal, NumberInput, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { Link, Route, Routes, useNavigate } from 'react-router';
import { api } from '../../api/client.ts';
import { ErrorAlert, Loading, SourceBadge, useApiMutation } from '../../components/feedback.tsx';
import { ProviderDetail } from './ProviderDetail.tsx';
import { type NetworkConfig, type Provider, providerKeys } from './types.ts';

export default function ProvidersPage() {
  return (
    <Routes>
      <Route index element={<ProviderList />} />
      <Route path=":name" element={<ProviderDetail />} />
    </Routes>
  );
}

function ProviderList() {
  const list = useQuery({
    queryKey: providerKeys,
    queryFn: () => api.get<{ providers: Provider[]; total: number }>('/providers'),
  });
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Providers</Title>
        <Button onClick={open}>Add provider</Button>
      </Group>
      <Text size="sm" c="dimmed">
        The upstream AI providers the gateway calls, each with its pool of keys. Key values are never shown after they
        are saved.
      </Text>
      <ErrorAlert error={list.error} title="Could not load the providers" />
      {list.isPending ? (
        <Loading what="providers" />
      ) : list.data && list.data.providers.length === 0 ? (
        <Text>No provider yet. Add one to start routing requests.</Text>
      ) : (
        <Table striped highlightOnHover aria-label="Providers">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Name</Table.Th>
              <Table.Th scope="col">Base URL</Table.Th>
              <Table.Th scope="col">Source</Table.Th>
              <Table.Th scope="col">Updated</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.providers.map((p) => (
              <Table.Tr key={p.name}>
                <Table.Td>
                  <Anchor component={Link} to={encodeURIComponent(p.name)}>
                    {p.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{p.network_config.base_url ?? <Text c="dimmed">provider default</Text>}</Table.Td>
                <Table.Td>
                  <SourceBadge row={p} />
                </Table.Td>
                <Table.Td>{new Date(p.updated_at).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal opened={opened} onClose={close} title="Add a provider">
        <CreateProvider onDone={close} />
      </Modal>
    </Stack>
  );
}

function CreateProvider({ onDone }: { onDone: () => void }) {
  const navigate = useNavigate();
  const form = useForm({
    initialValues: { provider: '', base_url: '', timeout: '' as number | string, max_retries: '' as number | string },
    validate: { provider: (v) => (v.trim() ? null : 'Name the provider (e.g. openai, anthropic, azure)') },
  });
  const create = useApiMutation(
    (v: typeof form.values) => {
      const network_config: NetworkConfig = {};
      if (v.base_url.trim()) network_config.base_url = v.base_url.trim();
      if (typeof v.timeout === 'number') network_config.default_request_timeout_in_seconds = v.timeout;
      if (typeof v.max_retries === 'number') network_config.max_retries = v.max_retries;
      return api.post<Provider>('/providers', { provider: v.provider.trim(), network_config });
    },
    { invalidate: [providerKeys], success: (p) => `Provider ${p.name} added` },
    {
      onSuccess: (p) => {
        onDone();
        void navigate(encodeURIComponent(p.name));
      },
    },
  );
  return (
    <form onSubmit={form.onSubmit((v) => create.mutate(v))}>
      <Stack>
        <ErrorAlert error={create.error} />
        <TextInput
          label="Provider"
          description="The provider’s name as the gateway knows it: openai, anthropic, azure, bedrock, gemini, ..."
          required
          data-autofocus
          {...form.getInputProps('provider')}
        />
        <TextInput
          label="Base URL"
          description="Leave empty for the provider’s own endpoint"
          placeholder="https://"
          {...form.getInputProps('base_url')}
        />
        <Group grow>
          <NumberInput label="Timeout (seconds)" min={1} max={3600} {...form.getInputProps('timeout')} />
          <NumberInput label="Retries" min={0} max={10} {...form.getInputProps('max_retries')} />
        </Group>
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending}>
            Add provider
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
