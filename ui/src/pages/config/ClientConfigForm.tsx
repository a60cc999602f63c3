import { Button, Group, NumberInput, Paper, Stack, Switch, TagsInput, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { api } from '../../api/client.ts';
import { ErrorAlert, useApiMutation } from '../../components/feedback.tsx';
import { type ClientConfig, configKey } from './types.ts';

export function ClientConfigForm({ current }: { current: ClientConfig }) {
  const form = useForm({
    initialValues: {
      enforce_auth_on_inference: current.enforce_auth_on_inference,
      max_request_body_size_mb: current.max_request_body_size_mb as number | string,
      max_file_upload_size_mb: current.max_file_upload_size_mb as number | string,
      allowed_origins: current.allowed_origins,
      session_stickiness_ttl_seconds: current.session_stickiness_ttl_seconds as number | string,
      log_retention_days: current.log_retention_days as number | string,
      mcp_external_client_url: current.mcp_external_client_url ?? '',
    },
  });
  const save = useApiMutation(
    (v: typeof form.values) => {
      // PUT replaces the client settings whole (omitted ones take their defaults): send every field.
      const { mcp_external_client_url, ...rest } = v;
      const client_config: Record<string, unknown> = { ...rest };
      if (mcp_external_client_url.trim()) client_config['mcp_external_client_url'] = mcp_external_client_url.trim();
      return api.put('/config', { client_config });
    },
    { invalidate: [configKey], success: 'Client settings saved' },
  );
  return (
    <Paper withBorder p="md">
      <form onSubmit={form.onSubmit((v) => save.mutate(v))} aria-labelledby="client-settings">
        <Stack>
          <Title order={3} size="h4" id="client-settings">
            Client settings
          </Title>
          <ErrorAlert error={save.error} />
          <Switch
            label="Require credentials on inference"
            description="Off: requests without any credential are served (a credential that is sent must still be valid)"
            {...form.getInputProps('enforce_auth_on_inference', { type: 'checkbox' })}
          />
          <Group grow>
            <NumberInput
              label="Request body limit (MB)"
              min={1}
              max={1024}
              {...form.getInputProps('max_request_body_size_mb')}
            />
            <NumberInput
              label="File upload limit (MB)"
              min={1}
              max={4096}
              {...form.getInputProps('max_file_upload_size_mb')}
            />
          </Group>
          <Group grow>
            <NumberInput
              label="Session stickiness (seconds)"
              min={1}
              max={604800}
              {...form.getInputProps('session_stickiness_ttl_seconds')}
            />
            <NumberInput
              label="Log retention (days)"
              min={1}
              max={3650}
              {...form.getInputProps('log_retention_days')}
            />
          </Group>
          <TagsInput
            label="Allowed origins (CORS)"
            description="Exact origins such as https://app.example.com, or *; Enter after each"
            {...form.getInputProps('allowed_origins')}
          />
          <TextInput
            label="Public base URL for MCP OAuth"
            description="Used for redirect and consent URLs; empty: derived from the request’s Host"
            placeholder="https://gateway.example.com"
            {...form.getInputProps('mcp_external_client_url')}
          />
          <Group justify="flex-end">
            <Button type="submit" loading={save.isPending}>
              Save client settings
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
