// Per-user OAuth of an MCP client: each caller authorizes on the gateway's own consent page. Here: the flows
// (who, which state) with a link to each pending consent page, and starting a flow for a virtual key's user.
import {
  Anchor,
  Badge,
  Button,
  CopyButton,
  Group,
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
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { ErrorAlert, Loading, useApiMutation } from '../../components/feedback.tsx';
import { useOwners } from '../logs/FilterBar.tsx';
import { formatTime } from '../logs/format.ts';
import type { McpClientConfig, PerUserFlow } from './types.ts';

const COLORS: Record<PerUserFlow['status'], string> = {
  pending: 'yellow',
  authorized: 'teal',
  failed: 'red',
  expired: 'gray',
};

/** The gateway's consent page of a flow (same origin as the dashboard). */
const consentUrl = (flowId: string) => `${window.location.origin}/api/oauth/consent/${encodeURIComponent(flowId)}`;

function identity(f: PerUserFlow): string {
  const vk = f.virtual_key ? `virtual key ${f.virtual_key.name}` : '';
  if (f.flow_mode === 'user') return `user ${f.user?.name ?? '?'}${vk ? ` (${vk})` : ''}`;
  if (f.flow_mode === 'session') return `session ${f.session_id ?? '?'}${vk ? ` (${vk})` : ''}`;
  return vk || 'a virtual key';
}

export function PerUserFlows({ client }: { client: McpClientConfig }) {
  const key = ['mcp', 'flows', client.client_id] as const;
  const flows = useQuery({
    queryKey: key,
    queryFn: () =>
      api.get<{ flows: PerUserFlow[] }>('/oauth/per-user/flows', {
        query: { mcp_client_id: client.client_id, limit: 100 },
      }),
    select: (d) => d.flows,
  });
  return (
    <Paper withBorder p="md" component="section" aria-label="Per-user authorizations">
      <Stack gap="sm">
        <Title order={3} size="h4">
          Per-user authorizations
        </Title>
        <Text size="sm" c="dimmed">
          Each caller signs in once on the gateway’s consent page; a tool call without a token answers with that link.
          You can also start a flow here and send the link to the user.
        </Text>
        <StartFlow client={client} invalidate={key} />
        <ErrorAlert error={flows.error} title="Could not load the flows" />
        {flows.isPending ? (
          <Loading what="flows" />
        ) : flows.data?.length === 0 ? (
          <Text size="sm">No caller has started an authorization yet.</Text>
        ) : (
          <Table aria-label="Per-user OAuth flows" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">For</Table.Th>
                <Table.Th scope="col">Status</Table.Th>
                <Table.Th scope="col">Started</Table.Th>
                <Table.Th scope="col">Expires</Table.Th>
                <Table.Th scope="col">Consent page</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {flows.data?.map((f) => (
                <Table.Tr key={f.id}>
                  <Table.Td>{identity(f)}</Table.Td>
                  <Table.Td>
                    <Badge color={COLORS[f.status]} variant="light">
                      {f.status}
                    </Badge>
                    {f.status_message && (
                      <Text size="xs" c="dimmed">
                        {f.status_message}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{formatTime(f.created_at)}</Table.Td>
                  <Table.Td>{formatTime(f.expires_at)}</Table.Td>
                  <Table.Td>
                    {f.status === 'pending' ? (
                      <Anchor href={consentUrl(f.id)} target="_blank" rel="noreferrer">
                        Open consent page
                      </Anchor>
                    ) : (
                      '—'
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Paper>
  );
}

function StartFlow({ client, invalidate }: { client: McpClientConfig; invalidate: readonly unknown[] }) {
  const owners = useOwners();
  const [link, setLink] = useState<string | undefined>();
  const form = useForm({
    initialValues: { virtual_key_id: '', user_id: '', session_id: '' },
    validate: { virtual_key_id: (v) => (v ? null : 'Pick the virtual key the user calls with') },
  });
  const start = useApiMutation(
    (v: typeof form.values) =>
      api.post<{ consent_url: string; created: boolean }>('/oauth/per-user/flows', {
        mcp_client_id: client.client_id,
        virtual_key_id: v.virtual_key_id,
        ...(v.user_id.trim() ? { user_id: v.user_id.trim() } : {}),
        ...(v.session_id.trim() ? { session_id: v.session_id.trim() } : {}),
      }),
    {
      invalidate: [invalidate],
      success: (r) => (r.created ? 'Authorization flow started' : 'A pending flow already existed: its link'),
    },
    { onSuccess: (r) => setLink(r.consent_url) },
  );
  return (
    <form onSubmit={form.onSubmit((v) => start.mutate(v))} aria-label="Start an authorization">
      <Stack gap="xs">
        <ErrorAlert error={start.error} />
        <Group align="flex-end" grow>
          <Select
            label="Virtual key"
            data={(owners.vks ?? []).map((k) => ({ value: k.id, label: k.name }))}
            searchable
            {...form.getInputProps('virtual_key_id')}
          />
          <TextInput label="User id" description="For user-bound clients" {...form.getInputProps('user_id')} />
          <TextInput label="Session id" description="For session-bound clients" {...form.getInputProps('session_id')} />
          <Button type="submit" loading={start.isPending}>
            Start authorization
          </Button>
        </Group>
        {link && (
          <Group gap="xs">
            <Text size="sm">Send the user this link:</Text>
            <Anchor href={link} target="_blank" rel="noreferrer" size="sm">
              {link}
            </Anchor>
            <CopyButton value={link}>
              {({ copied, copy }) => (
                <Button size="xs" variant="default" onClick={copy}>
                  {copied ? 'Copied' : 'Copy'}
                </Button>
              )}
            </CopyButton>
          </Group>
        )}
      </Stack>
    </form>
  );
}
