// Plugins: each built-in plugin with its switch, its settings (edited as JSON, checked by the gateway) and its
// status on this pod; then the semantic cache's entries: clearing them by cache id or by cache key.
import { Badge, Button, Group, Modal, Stack, Switch, Table, Text, Title, Tooltip } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, seg } from '../../api/client.ts';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorAlert, Loading, useApiMutation } from '../../components/feedback.tsx';
import { CachePanel } from './CachePanel.tsx';
import { SettingsForm } from './SettingsForm.tsx';
import { type Plugin, type PluginChanged, pluginKeys } from './types.ts';

const ABOUT: Record<string, string> = {
  logging: 'Writes a request-log row per request (the logs explorer).',
  telemetry: 'gen_ai metrics on /metrics and OpenTelemetry traces.',
  semantic_cache: 'Answers repeated or similar requests from stored answers.',
  compat: 'Converts requests a target model cannot take as sent.',
};

const SOURCE: Record<Plugin['source'], string> = {
  default: 'defaults',
  api: 'API',
  config_file: 'config.json',
};

/** The settings in effect on one line: `name: value` pairs (values as JSON). */
function summary(config: Record<string, unknown>): string {
  const entries = Object.entries(config);
  if (entries.length === 0) return 'no settings';
  return entries.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ');
}

export default function PluginsPage() {
  const list = useQuery({
    queryKey: pluginKeys,
    queryFn: () => api.get<{ plugins: Plugin[]; count: number }>('/plugins'),
    select: (d) => d.plugins,
  });
  const [editing, setEditing] = useState<Plugin | undefined>();
  const [title, setTitle] = useState('');
  const toggle = useApiMutation(
    (p: Plugin) => api.put<PluginChanged>(`/plugins/${seg(p.name)}`, { enabled: !p.enabled }),
    {
      invalidate: [pluginKeys],
      success: (r) => `Plugin ${r.plugin.name} ${r.plugin.enabled ? 'turned on' : 'turned off'}`,
    },
  );
  const reset = useApiMutation((p: Plugin) => api.del<{ message: string }>(`/plugins/${seg(p.name)}`), {
    invalidate: [pluginKeys],
    success: (r) => r.message,
  });
  const edit = (p: Plugin) => {
    setTitle(`Settings of ${p.name}`);
    setEditing(p);
  };
  return (
    <Stack>
      <Title order={2}>Plugins & cache</Title>
      <Text size="sm" c="dimmed">
        The gateway’s built-in plugins. A change applies on every gateway pod within moments.
      </Text>
      <ErrorAlert error={list.error ?? toggle.error ?? reset.error} />
      {list.isPending ? (
        <Loading what="plugins" />
      ) : (
        <Table aria-label="Plugins" striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Plugin</Table.Th>
              <Table.Th scope="col">On</Table.Th>
              <Table.Th scope="col">Status</Table.Th>
              <Table.Th scope="col">Settings</Table.Th>
              <Table.Th scope="col">Settings from</Table.Th>
              <Table.Th scope="col">Version</Table.Th>
              <Table.Th scope="col">
                <span className="visually-hidden">Actions</span>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.map((p) => (
              <Table.Tr key={p.name}>
                <Table.Td>
                  <Text size="sm" fw={500}>
                    {p.name}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {ABOUT[p.name] ?? ''}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Switch
                    checked={p.enabled}
                    aria-label={`Turn ${p.name} ${p.enabled ? 'off' : 'on'}`}
                    disabled={toggle.isPending}
                    onChange={() => toggle.mutate(p)}
                  />
                </Table.Td>
                <Table.Td>
                  <Tooltip label={p.status.logs.join('; ')} disabled={p.status.logs.length === 0}>
                    <Badge
                      color={p.status.status === 'active' ? 'teal' : p.status.status === 'error' ? 'red' : 'gray'}
                      variant="light"
                    >
                      {p.status.status}
                    </Badge>
                  </Tooltip>
                  {p.status.status === 'error' && (
                    <Text size="xs" c="red">
                      {p.status.logs.join('; ')}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td maw={320}>
                  <Text size="xs" ff="monospace" lineClamp={3}>
                    {summary(p.config)}
                  </Text>
                </Table.Td>
                <Table.Td>{SOURCE[p.source]}</Table.Td>
                <Table.Td>{p.version}</Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap" justify="flex-end">
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => edit(p)}
                      aria-label={`Edit settings of ${p.name}`}
                    >
                      Settings
                    </Button>
                    {p.source !== 'default' && (
                      <ConfirmButton
                        size="xs"
                        label="Reset"
                        ariaLabel={`Reset ${p.name} to its defaults`}
                        confirm={`Forget the stored settings of ${p.name}? It runs with its defaults again.`}
                        onConfirm={() => reset.mutate(p)}
                      />
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal opened={editing !== undefined} onClose={() => setEditing(undefined)} title={title} size="lg">
        {editing && <SettingsForm plugin={editing} onDone={() => setEditing(undefined)} />}
      </Modal>
      <CachePanel />
    </Stack>
  );
}
