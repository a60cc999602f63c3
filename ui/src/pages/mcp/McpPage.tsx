// MCP clients: the upstream tool servers, with their connection state and tools; adding one; and (under
// mcp/:id) one client's settings, tools, OAuth authorization and per-user flows.
import { Anchor, Badge, Button, Group, Modal, Stack, Table, Text, Title, Tooltip } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { Link, Route, Routes, useNavigate } from 'react-router';
import { api } from '../../api/client.ts';
import { ErrorAlert, Loading, SourceBadge } from '../../components/feedback.tsx';
import { McpClientDetail } from './McpClientDetail.tsx';
import { McpClientForm } from './McpClientForm.tsx';
import { type McpClient, mcpKeys } from './types.ts';

export default function McpPage() {
  return (
    <Routes>
      <Route index element={<McpList />} />
      <Route path=":id" element={<McpClientDetail />} />
    </Routes>
  );
}

const AUTH: Record<string, string> = {
  none: 'none',
  headers: 'headers',
  oauth: 'OAuth',
  per_user_oauth: 'per-user OAuth',
};

export function StateBadge({ client }: { client: McpClient }) {
  const color = client.state === 'connected' ? 'teal' : client.state === 'error' ? 'red' : 'gray';
  const label = client.config.disabled ? 'disabled' : client.state;
  return (
    <Tooltip label={client.state_message ?? ''} disabled={!client.state_message}>
      <Badge color={client.config.disabled ? 'gray' : color} variant="light">
        {label}
      </Badge>
    </Tooltip>
  );
}

function McpList() {
  const navigate = useNavigate();
  const list = useQuery({ queryKey: mcpKeys, queryFn: () => api.get<McpClient[]>('/mcp/clients') });
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>MCP clients</Title>
        <Button onClick={open}>Add MCP client</Button>
      </Group>
      <Text size="sm" c="dimmed">
        Upstream MCP tool servers. Their tools reach the virtual keys that name the client in their MCP settings. The
        state is what this gateway pod sees.
      </Text>
      <ErrorAlert error={list.error} title="Could not load the MCP clients" />
      {list.isPending ? (
        <Loading what="MCP clients" />
      ) : list.data?.length === 0 ? (
        <Text>No MCP client yet.</Text>
      ) : (
        <Table striped highlightOnHover aria-label="MCP clients">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Name</Table.Th>
              <Table.Th scope="col">Transport</Table.Th>
              <Table.Th scope="col">URL</Table.Th>
              <Table.Th scope="col">Auth</Table.Th>
              <Table.Th scope="col">State</Table.Th>
              <Table.Th scope="col">Tools</Table.Th>
              <Table.Th scope="col">Source</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.map((c) => (
              <Table.Tr key={c.config.client_id}>
                <Table.Td>
                  <Anchor component={Link} to={encodeURIComponent(c.config.client_id)}>
                    {c.config.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{c.config.connection_type}</Table.Td>
                <Table.Td>
                  <Text size="sm" style={{ wordBreak: 'break-all' }}>
                    {c.config.connection_string}
                  </Text>
                </Table.Td>
                <Table.Td>
                  {AUTH[c.config.auth_type] ?? c.config.auth_type}
                  {c.oauth && (
                    <Text size="xs" c={c.oauth.status === 'authorized' ? 'teal' : 'orange'}>
                      {c.oauth.status}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <StateBadge client={c} />
                </Table.Td>
                <Table.Td>
                  {c.tools.length === 0 ? (
                    <Text size="sm" c="dimmed">
                      none listed
                    </Text>
                  ) : (
                    <Tooltip label={c.tools.map((t) => t.name).join(', ')}>
                      <Text size="sm">
                        {c.tools.length} tool{c.tools.length === 1 ? '' : 's'}
                      </Text>
                    </Tooltip>
                  )}
                </Table.Td>
                <Table.Td>
                  <SourceBadge row={c.config} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal opened={opened} onClose={close} title="Add an MCP client" size="lg">
        <McpClientForm
          existing={undefined}
          onDone={(created) => {
            close();
            const id = created?.status === 'pending_oauth' ? created.mcp_client_id : created?.client.client_id;
            if (id) void navigate(encodeURIComponent(id));
          }}
        />
      </Modal>
    </Stack>
  );
}
