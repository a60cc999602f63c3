// Config: the client settings (PUT /api/config) and the outbound proxy (PUT /api/proxy-config), with the stores'
// state. Each form saves on its own; errors name the field the gateway refused.
import { Badge, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { ErrorAlert, Loading } from '../../components/feedback.tsx';
import { ClientConfigForm } from './ClientConfigForm.tsx';
import { ProxyConfigForm } from './ProxyConfigForm.tsx';
import { type ConfigView, configKey } from './types.ts';

export default function ConfigPage() {
  const config = useQuery({ queryKey: configKey, queryFn: () => api.get<ConfigView>('/config') });
  return (
    <Stack>
      <Title order={2}>Config</Title>
      <ErrorAlert error={config.error} title="Could not load the configuration" />
      {config.isPending && <Loading what="the configuration" />}
      {config.data && (
        <>
          <Paper withBorder p="md">
            <Group gap="md" aria-label="Stores">
              <Status label="Database" ok={config.data.is_db_connected} />
              <Status label="Redis (counters, sessions)" ok={config.data.is_cache_connected} />
              <Status label="Request logs" ok={config.data.is_logs_connected} />
              {config.data.restart_required.required && <Badge color="orange">restart required</Badge>}
            </Group>
          </Paper>
          <ClientConfigForm current={config.data.client_config} />
          <ProxyConfigForm current={config.data.proxy_config} />
        </>
      )}
    </Stack>
  );
}

function Status({ label, ok }: { label: string; ok: boolean }) {
  return (
    <Group gap={6}>
      <Text size="sm">{label}</Text>
      <Badge color={ok ? 'green' : 'red'} variant="light">
        {ok ? 'connected' : 'unreachable'}
      </Badge>
    </Group>
  );
}
