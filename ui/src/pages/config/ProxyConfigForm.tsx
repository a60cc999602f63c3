import {
  Button,
  Group,
  NumberInput,
  Paper,
  PasswordInput,
  Select,
  Stack,
  Switch,
  TextInput,
  Title,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { api } from '../../api/client.ts';
import { ErrorAlert, useApiMutation } from '../../components/feedback.tsx';
import { configKey, type ProxyConfig } from './types.ts';

export function ProxyConfigForm({ current }: { current: ProxyConfig }) {
  const form = useForm({
    initialValues: {
      enabled: current.enabled,
      type: current.type,
      url: current.url,
      username: current.username,
      password: '',
      no_proxy: current.no_proxy,
      timeout: current.timeout as number | string,
      skip_tls_verify: current.skip_tls_verify,
      enable_for_inference: current.enable_for_inference,
    },
  });
  const save = useApiMutation(
    (v: typeof form.values) => {
      const { password, timeout, ...rest } = v;
      // An omitted password keeps the stored one.
      return api.put('/proxy-config', {
        ...rest,
        enable_for_api: current.enable_for_api,
        enable_for_scim: current.enable_for_scim,
        ...(typeof timeout === 'number' ? { timeout } : {}),
        ...(password ? { password } : {}),
      });
    },
    { invalidate: [configKey], success: 'Proxy settings saved' },
  );
  return (
    <Paper withBorder p="md">
      <form onSubmit={form.onSubmit((v) => save.mutate(v))} aria-labelledby="proxy-settings">
        <Stack>
          <Title order={3} size="h4" id="proxy-settings">
            Outbound proxy
          </Title>
          <ErrorAlert error={save.error} />
          <Switch
            label="Send provider calls through a proxy"
            {...form.getInputProps('enabled', { type: 'checkbox' })}
          />
          <Group grow>
            <Select
              label="Type"
              data={[
                { value: 'http', label: 'HTTP(S)' },
                { value: 'socks5', label: 'SOCKS5' },
                { value: 'tcp', label: 'TCP' },
              ]}
              allowDeselect={false}
              {...form.getInputProps('type')}
            />
            <TextInput label="Proxy URL" placeholder="http://proxy.internal:3128" {...form.getInputProps('url')} />
          </Group>
          <Group grow>
            <TextInput label="Username" autoComplete="off" {...form.getInputProps('username')} />
            <PasswordInput
              label="Password"
              description={current.password ? `Stored: ${current.password}. Leave empty to keep it` : undefined}
              autoComplete="off"
              {...form.getInputProps('password')}
            />
          </Group>
          <Group grow>
            <TextInput
              label="No proxy for"
              description="Hosts called directly, comma-separated"
              {...form.getInputProps('no_proxy')}
            />
            <NumberInput label="Connect timeout (seconds)" min={1} {...form.getInputProps('timeout')} />
          </Group>
          <Switch
            label="Use it for inference and model listing"
            {...form.getInputProps('enable_for_inference', { type: 'checkbox' })}
          />
          <Switch
            label="Accept any certificate of an https:// proxy"
            {...form.getInputProps('skip_tls_verify', { type: 'checkbox' })}
          />
          <Group justify="flex-end">
            <Button type="submit" loading={save.isPending}>
              Save proxy settings
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
