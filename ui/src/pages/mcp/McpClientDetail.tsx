// One MCP client: its settings (header names only), connection state and tools, the virtual keys granted it,
// and its OAuth: the server-level authorization popup, or the per-user flows.
import { Anchor, Badge, Button, Code, Group, Modal, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
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
import { Field } from '../logs/LogDetail.tsx';
import { McpClientForm } from './McpClientForm.tsx';
import { StateBadge } from './McpPage.tsx';
import { OAuthPanel } from './OAuthPanel.tsx';
import { PerUserFlows } from './PerUserFlows.tsx';
import { type McpClient, mcpClientKey, mcpKeys } from './types.ts';

export function McpClientDetail() {
  const id = useParams()['id'] ?? '';
  const client = useQuery({
    queryKey: mcpClientKey(id),
    queryFn: () => api.get<McpClient>(`/mcp/client/${seg(id)}`),
    // A fresh connection lists its tools a moment later: look again while it is not connected.
    refetchInterval: (q) => {
      const d = q.state.data;
      // Per-user clients have no connection of their own to wait for.
      return d && d.state !== 'connected' && !d.config.disabled && d.config.auth_type !== 'per_user_oauth'
        ? 3000
        : false;
    },
  });
  const c = client.data;
  return (
    <Stack>
      <Anchor component={Link} to="/mcp" size="sm">
        ← All MCP clients
      </Anchor>
      <Title order={2}>MCP client {c?.config.name ?? id}</Title>
      {c && (
        // Tool logs name the client by its name (server_label), as it was when each call ran.
        <Anchor component={Link} to={`/mcp-logs?server_labels=${encodeURIComponent(c.config.name)}`} size="sm">
          Tool calls through {c.config.name}
        </Anchor>
      )}
      <ErrorAlert error={client.error} title="Could not load the MCP client" />
      {client.isPending && <Loading what="the MCP client" />}
      {c && (
        <>
          <OperatorOwnedNotice row={c.config} />
          <Settings client={c} />
          {c.config.auth_type === 'oauth' && c.config.oauth_config_id && <OAuthPanel client={c.config} />}
          {c.config.auth_type === 'per_user_oauth' && <PerUserFlows client={c.config} />}
          <Tools client={c} />
        </>
      )}
    </Stack>
  );
}

const list = (xs: string[]) => (xs.length === 0 ? 'none' : xs.join(', '));

function Settings({ client }: { client: McpClient }) {
  const c = client.config;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const readOnly = isOperatorOwned(c);
  const reconnect = useApiMutation(() => api.post<{ message: string }>(`/mcp/client/${seg(c.client_id)}/reconnect`), {
    invalidate: [mcpKeys],
    success: (r) => r.message,
  });
  const remove = useApiMutation(() => api.del<{ message: string }>(`/mcp/client/${seg(c.client_id)}`), {
    invalidate: [mcpKeys],
    success: (r) => r.message,
  });
  const headers = Object.keys(c.headers ?? {});
  return (
    <Paper withBorder p="md" component="section" aria-label="Settings">
      <Stack gap="sm">
        <Group justify="space-between">
          <Group gap="xs">
            <Title order={3} size="h4">
              Settings
            </Title>
            <StateBadge client={client} />
            <SourceBadge row={c} />
          </Group>
          <Group gap="xs">
            <Button
              variant="default"
              onClick={() => reconnect.mutate(undefined)}
              loading={reconnect.isPending}
              disabled={c.disabled}
            >
              Reconnect
            </Button>
            {!readOnly && (
              <>
                <Button variant="default" onClick={() => setEditing(true)}>
                  Edit
                </Button>
                <ConfirmButton
                  label="Delete"
                  ariaLabel={`Delete MCP client ${c.name}`}
                  confirm={`Delete MCP client ${c.name}? Its OAuth tokens and every virtual key’s access to its tools go with it.`}
                  loading={remove.isPending}
                  onConfirm={() => remove.mutate(undefined, { onSuccess: () => void navigate('/mcp') })}
                />
              </>
            )}
          </Group>
        </Group>
        <ErrorAlert error={reconnect.error ?? remove.error} />
        {client.state_message && (
          <Text size="sm" c={client.state === 'error' ? 'red' : 'dimmed'}>
            {client.state_message}
          </Text>
        )}
        <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} spacing="sm">
          <Field label="URL">{c.connection_string}</Field>
          <Field label="Transport">{c.connection_type === 'http' ? 'Streamable HTTP' : 'SSE'}</Field>
          <Field label="Authentication">{c.auth_type}</Field>
          {c.auth_type === 'headers' && (
            <Field label="Headers (values hidden)">
              {headers.length === 0
                ? 'none'
                : headers.map((h) => (
                    <Code key={h} mr={4}>
                      {h}
                    </Code>
                  ))}
            </Field>
          )}
          <Field label="Tools to execute">{list(c.tools_to_execute)}</Field>
          <Field label="Tools to auto-execute">{list(c.tools_to_auto_execute)}</Field>
          <Field label="Ping">{c.is_ping_available ? 'yes' : 'no'}</Field>
          <Field label="Virtual keys with access">
            {client.vk_configs.length === 0 ? 'none' : client.vk_configs.map((v) => v.virtual_key_name).join(', ')}
          </Field>
          <Field label="Client id">{c.client_id}</Field>
        </SimpleGrid>
      </Stack>
      <Modal opened={editing} onClose={() => setEditing(false)} title={`Edit MCP client ${c.name}`} size="lg">
        {editing && <McpClientForm existing={c} onDone={() => setEditing(false)} />}
      </Modal>
    </Paper>
  );
}

function Tools({ client }: { client: McpClient }) {
  return (
    <Paper withBorder p="md" component="section" aria-label="Tools">
      <Stack gap="sm">
        <Title order={3} size="h4">
          Tools
        </Title>
        {client.tools.length === 0 ? (
          <Text size="sm">
            {client.state === 'connected'
              ? 'The server lists no tool.'
              : client.config.auth_type === 'per_user_oauth'
                ? 'Known once a caller has authorized and listed them with their own token.'
                : 'No tool listed yet: the tools appear once the gateway is connected.'}
          </Text>
        ) : (
          <Table aria-label={`Tools of ${client.config.name}`} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Name callers see</Table.Th>
                <Table.Th scope="col">Description</Table.Th>
                <Table.Th scope="col">Executable</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {client.tools.map((t) => {
                const allowed =
                  client.config.tools_to_execute.includes('*') || client.config.tools_to_execute.includes(t.name);
                return (
                  <Table.Tr key={t.qualified_name}>
                    <Table.Td>
                      <Code>{t.qualified_name}</Code>
                    </Table.Td>
                    <Table.Td>{t.description ?? '—'}</Table.Td>
                    <Table.Td>
                      <Badge color={allowed ? 'teal' : 'gray'} variant="light">
                        {allowed ? 'yes' : 'no'}
                      </Badge>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Paper>
  );
}
