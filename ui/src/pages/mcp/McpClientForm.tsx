// Adding or editing an MCP client. Header values are typed, never shown again: an edit lists the stored names and
// keeps each value left empty ("[redacted]" is sent back). Transport, URL and auth type are fixed once created.
import {
  ActionIcon,
  Button,
  Checkbox,
  Group,
  PasswordInput,
  Select,
  Stack,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { randomId } from '@mantine/hooks';
import { api, seg } from '../../api/client.ts';
import { ErrorAlert, useApiMutation } from '../../components/feedback.tsx';
import { type AuthType, type Created, type McpClientConfig, mcpKeys } from './types.ts';

const REDACTED = '[redacted]';

interface HeaderRow {
  name: string;
  value: string;
  /** Stored already: an empty value keeps it. */
  stored: boolean;
  /** React's key for the row (rows are added and removed). */
  key: string;
}

interface Values {
  name: string;
  connection_type: string;
  connection_string: string;
  auth_type: string;
  headers: HeaderRow[];
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
  is_ping_available: boolean;
  disabled: boolean;
  client_id: string;
  client_secret: string;
  server_url: string;
  authorize_url: string;
  token_url: string;
  scopes: string;
  flow_mode: string;
}

const AUTH_TYPES = [
  { value: 'none', label: 'None' },
  { value: 'headers', label: 'Static headers' },
  { value: 'oauth', label: 'OAuth (one authorization for the gateway)' },
  { value: 'per_user_oauth', label: 'Per-user OAuth (each caller authorizes)' },
];

const isOAuth = (t: string) => t === 'oauth' || t === 'per_user_oauth';

function oauthBody(v: Values, editing: boolean): Record<string, unknown> | undefined {
  const o: Record<string, unknown> = {};
  if (v.client_id.trim()) o['client_id'] = v.client_id.trim();
  if (v.client_secret) o['client_secret'] = v.client_secret;
  if (!editing) {
    if (v.server_url.trim()) o['server_url'] = v.server_url.trim();
    if (v.authorize_url.trim()) o['authorize_url'] = v.authorize_url.trim();
    if (v.token_url.trim()) o['token_url'] = v.token_url.trim();
    // Typed comma-separated, as the API takes it (it splits and checks each scope).
    if (v.scopes.trim()) o['scopes'] = v.scopes.trim();
    if (v.auth_type === 'per_user_oauth') o['flow_mode'] = v.flow_mode;
  }
  return Object.keys(o).length > 0 || !editing ? o : undefined;
}

function body(v: Values, existing: McpClientConfig | undefined): Record<string, unknown> {
  const b: Record<string, unknown> = {
    name: v.name.trim(),
    tools_to_execute: v.tools_to_execute,
    tools_to_auto_execute: v.tools_to_auto_execute,
    is_ping_available: v.is_ping_available,
    disabled: v.disabled,
  };
  if (!existing) {
    b['connection_type'] = v.connection_type;
    b['connection_string'] = v.connection_string.trim();
    b['auth_type'] = v.auth_type;
  }
  if (v.auth_type === 'headers') {
    const headers: Record<string, string> = {};
    for (const h of v.headers) {
      if (!h.name.trim()) continue;
      headers[h.name.trim()] = h.value === '' && h.stored ? REDACTED : h.value;
    }
    b['headers'] = headers;
  }
  if (isOAuth(v.auth_type)) {
    const o = oauthBody(v, existing !== undefined);
    if (o) b['oauth_config'] = o;
  }
  return b;
}

function useMcpForm(existing: McpClientConfig | undefined) {
  return useForm<Values>({
    initialValues: {
      name: existing?.name ?? '',
      connection_type: existing?.connection_type ?? 'http',
      connection_string: existing?.connection_string ?? '',
      auth_type: existing?.auth_type ?? 'none',
      headers: Object.keys(existing?.headers ?? {}).map((name) => ({ name, value: '', stored: true, key: randomId() })),
      tools_to_execute: existing?.tools_to_execute ?? ['*'],
      tools_to_auto_execute: existing?.tools_to_auto_execute ?? [],
      is_ping_available: existing?.is_ping_available ?? true,
      disabled: existing?.disabled ?? false,
      client_id: '',
      client_secret: '',
      server_url: '',
      authorize_url: '',
      token_url: '',
      scopes: '',
      flow_mode: 'vk',
    },
    validate: {
      name: (v) => (/^[A-Za-z0-9_]{1,32}$/.test(v.trim()) ? null : 'Letters, digits and _ only, at most 32'),
      connection_string: (v) => (/^https?:\/\/\S+$/.test(v.trim()) ? null : 'The MCP endpoint’s http(s) URL'),
      headers: {
        name: (v) => (v.trim() && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(v.trim()) ? 'Not a header name' : null),
        value: (v, all, path) => {
          const i = Number(path.split('.')[1]);
          const row = all.headers[i];
          return row?.name.trim() && !v && !row.stored ? 'Give the header’s value' : null;
        },
      },
    },
  });
}
type McpForm = ReturnType<typeof useMcpForm>;

export function McpClientForm(props: { existing: McpClientConfig | undefined; onDone: (created?: Created) => void }) {
  const { existing } = props;
  const form = useMcpForm(existing);
  const save = useApiMutation(
    (v: Values) =>
      existing
        ? api.put<{ message: string }>(`/mcp/client/${seg(existing.client_id)}`, body(v, existing))
        : api.post<Created>('/mcp/client', body(v, undefined)),
    {
      invalidate: [mcpKeys],
      // A pending OAuth client is authorized from its page (the API's own words point at authorize_url).
      success: (r) =>
        'status' in r && r.status === 'pending_oauth'
          ? `MCP client ${form.values.name.trim()} added: authorize it now`
          : r.message,
    },
    { onSuccess: (r) => props.onDone(existing ? undefined : (r as Created)) }, // a create answers Created
  );
  const v = form.values;
  return (
    <form onSubmit={form.onSubmit((values) => save.mutate(values))}>
      <Stack>
        <ErrorAlert error={save.error} />
        <TextInput
          label="Name"
          description="Tools are offered as <name>-<tool>; virtual keys refer to the client by this name"
          required
          data-autofocus
          {...form.getInputProps('name')}
        />
        <Group grow align="flex-start">
          <Select
            label="Transport"
            data={[
              { value: 'http', label: 'Streamable HTTP' },
              { value: 'sse', label: 'SSE' },
            ]}
            allowDeselect={false}
            disabled={!!existing}
            {...form.getInputProps('connection_type')}
          />
          <Select
            label="Authentication"
            data={AUTH_TYPES}
            allowDeselect={false}
            disabled={!!existing}
            {...form.getInputProps('auth_type')}
          />
        </Group>
        <TextInput
          label="URL"
          placeholder="https://tools.example.com/mcp"
          required
          disabled={!!existing}
          {...form.getInputProps('connection_string')}
        />
        {v.auth_type === 'headers' && <HeaderRows form={form} />}
        {isOAuth(v.auth_type as AuthType) && (
          <Stack gap="xs">
            {existing ? (
              <Text size="sm" c="dimmed">
                To rotate the OAuth client credentials, type new ones; empty fields keep the stored values.
              </Text>
            ) : (
              <Text size="sm" c="dimmed">
                Leave the client id empty to let the gateway register itself at the authorization server.
              </Text>
            )}
            <Group grow align="flex-start">
              <TextInput label="OAuth client id" autoComplete="off" {...form.getInputProps('client_id')} />
              <PasswordInput label="OAuth client secret" autoComplete="off" {...form.getInputProps('client_secret')} />
            </Group>
            {!existing && (
              <>
                <TextInput
                  label="Authorization server URL"
                  description="Where discovery starts (default: the MCP server’s origin)"
                  {...form.getInputProps('server_url')}
                />
                <Group grow align="flex-start">
                  <TextInput label="Authorize URL" {...form.getInputProps('authorize_url')} />
                  <TextInput label="Token URL" {...form.getInputProps('token_url')} />
                </Group>
                <TextInput
                  label="Scopes"
                  description="Comma-separated, e.g. tools:read, tools:write"
                  {...form.getInputProps('scopes')}
                />
                {v.auth_type === 'per_user_oauth' && (
                  <Select
                    label="Token belongs to"
                    data={[
                      { value: 'vk', label: 'The calling virtual key' },
                      { value: 'user', label: 'A user (x-gateway-user-id)' },
                      { value: 'session', label: 'A session (x-gateway-session-id)' },
                    ]}
                    allowDeselect={false}
                    {...form.getInputProps('flow_mode')}
                  />
                )}
              </>
            )}
          </Stack>
        )}
        <TagsInput
          label="Tools to execute"
          description="Tool names (Enter after each); * for every tool. Virtual keys never get more than these."
          {...form.getInputProps('tools_to_execute')}
        />
        <TagsInput
          label="Tools to auto-execute"
          description="Run by the gateway without returning to the caller; * for every executable tool"
          {...form.getInputProps('tools_to_auto_execute')}
        />
        <Group>
          <Checkbox label="Ping the server" {...form.getInputProps('is_ping_available', { type: 'checkbox' })} />
          <Checkbox label="Disabled" {...form.getInputProps('disabled', { type: 'checkbox' })} />
        </Group>
        <Group justify="flex-end">
          <Button variant="default" onClick={() => props.onDone()}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {existing ? 'Save client' : 'Add client'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function HeaderRows({ form }: { form: McpForm }) {
  const rows = form.values.headers;
  return (
    <Stack gap="xs">
      <Text size="sm" fw={500}>
        Headers
      </Text>
      <Text size="xs" c="dimmed">
        Sent on every call to the server. Stored values are never shown: leave a stored header’s value empty to keep it.
      </Text>
      {rows.map((h, i) => (
        <Group key={h.key} align="flex-start" wrap="nowrap">
          <TextInput
            aria-label={`Header ${i + 1} name`}
            placeholder="X-Api-Key"
            disabled={h.stored}
            style={{ flex: 1 }}
            {...form.getInputProps(`headers.${i}.name`)}
          />
          <PasswordInput
            aria-label={`Header ${i + 1} value`}
            placeholder={h.stored ? 'stored (leave empty to keep)' : 'value'}
            autoComplete="off"
            style={{ flex: 1 }}
            {...form.getInputProps(`headers.${i}.value`)}
          />
          <ActionIcon
            variant="subtle"
            color="red"
            size="lg"
            aria-label={`Remove header ${h.name || i + 1}`}
            onClick={() => form.removeListItem('headers', i)}
          >
            ×
          </ActionIcon>
        </Group>
      ))}
      <Group>
        <Button
          size="xs"
          variant="default"
          onClick={() => form.insertListItem('headers', { name: '', value: '', stored: false, key: randomId() })}
        >
          Add header
        </Button>
      </Group>
    </Stack>
  );
}
