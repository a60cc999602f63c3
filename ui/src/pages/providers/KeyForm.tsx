// Adding or editing a provider key. The value is typed once: afterwards only its redacted hint is shown, and an
// edit that leaves it empty keeps the stored secret (the API's rule for redacted or omitted secrets).
import { Button, Group, NumberInput, PasswordInput, Stack, TagsInput, Text, Textarea, TextInput } from '@mantine/core';
import { useForm } from '@mantine/form';
import { api, seg } from '../../api/client.ts';
import { ErrorAlert, useApiMutation } from '../../components/feedback.tsx';
import { keysOf, type ProviderKey } from './types.ts';

interface Values {
  name: string;
  value: string;
  models: string[];
  weight: number | string;
  azure_endpoint: string;
  azure_api_version: string;
  bedrock_region: string;
  bedrock_access_key: string;
  bedrock_secret_key: string;
  vertex_project_id: string;
  vertex_region: string;
  vertex_credentials: string;
}

/** The body of POST/PUT: secrets left empty are omitted (kept on an edit). */
function body(provider: string, v: Values, existing: ProviderKey | undefined): Record<string, unknown> {
  const b: Record<string, unknown> = {
    name: v.name.trim(),
    models: v.models,
    weight: typeof v.weight === 'number' ? v.weight : 1,
  };
  if (v.value) b['value'] = v.value;
  if (provider === 'azure' && v.azure_endpoint.trim()) {
    b['azure_key_config'] = {
      endpoint: v.azure_endpoint.trim(),
      ...(v.azure_api_version.trim() ? { api_version: v.azure_api_version.trim() } : {}),
    };
  }
  if (provider === 'bedrock' && v.bedrock_region.trim()) {
    b['bedrock_key_config'] = {
      region: v.bedrock_region.trim(),
      ...(v.bedrock_access_key ? { access_key: v.bedrock_access_key } : {}),
      ...(v.bedrock_secret_key ? { secret_key: v.bedrock_secret_key } : {}),
    };
  }
  if (provider === 'vertex' && v.vertex_project_id.trim()) {
    b['vertex_key_config'] = {
      project_id: v.vertex_project_id.trim(),
      region: v.vertex_region.trim(),
      ...(v.vertex_credentials ? { auth_credentials: v.vertex_credentials } : {}),
    };
  }
  if (existing) b['aliases'] = existing.aliases;
  return b;
}

export function KeyForm(props: { provider: string; existing: ProviderKey | undefined; onDone: () => void }) {
  const { provider, existing } = props;
  const form = useForm<Values>({
    initialValues: {
      name: existing?.name ?? '',
      value: '',
      models: existing?.models ?? [],
      weight: existing?.weight ?? 1,
      azure_endpoint: existing?.azure_key_config?.endpoint ?? '',
      azure_api_version: existing?.azure_key_config?.api_version ?? '',
      bedrock_region: existing?.bedrock_key_config?.region ?? '',
      bedrock_access_key: '',
      bedrock_secret_key: '',
      vertex_project_id: existing?.vertex_key_config?.project_id ?? '',
      vertex_region: existing?.vertex_key_config?.region ?? '',
      vertex_credentials: '',
    },
    validate: {
      name: (v) => (v.trim() ? null : 'Give the key a name'),
      value: (v) =>
        existing || provider === 'bedrock' || provider === 'vertex' || v ? null : 'Paste the provider’s API key',
    },
  });
  const path = `/providers/${seg(provider)}/keys`;
  const save = useApiMutation(
    (v: Values) =>
      existing
        ? api.put<ProviderKey>(`${path}/${seg(existing.id)}`, body(provider, v, existing))
        : api.post<ProviderKey>(path, body(provider, v, undefined)),
    { invalidate: [keysOf(provider)], success: (k) => (existing ? `Key ${k.name} saved` : `Key ${k.name} added`) },
    { onSuccess: props.onDone },
  );
  const keep = existing ? 'Leave empty to keep the stored value' : undefined;
  return (
    <form onSubmit={form.onSubmit((v) => save.mutate(v))}>
      <Stack>
        <ErrorAlert error={save.error} />
        <TextInput label="Name" required data-autofocus {...form.getInputProps('name')} />
        <PasswordInput
          label="API key"
          description={
            existing
              ? `Stored: ${existing.value || 'none'}. ${keep}`
              : 'Shown only now; afterwards only a redacted hint'
          }
          autoComplete="off"
          {...form.getInputProps('value')}
        />
        <TagsInput
          label="Models"
          description="Models this key serves (Enter after each); empty: every model"
          {...form.getInputProps('models')}
        />
        <NumberInput
          label="Weight"
          description="Share of requests among the provider’s keys; 0 takes none unless pinned"
          min={0}
          step={0.1}
          decimalScale={3}
          {...form.getInputProps('weight')}
        />
        {provider === 'azure' && (
          <Group grow>
            <TextInput
              label="Azure endpoint"
              placeholder="https://<resource>.openai.azure.com"
              {...form.getInputProps('azure_endpoint')}
            />
            <TextInput label="API version" {...form.getInputProps('azure_api_version')} />
          </Group>
        )}
        {provider === 'bedrock' && (
          <>
            <TextInput label="AWS region" {...form.getInputProps('bedrock_region')} />
            <Group grow>
              <PasswordInput
                label="Access key"
                description={
                  existing?.bedrock_key_config?.access_key
                    ? `Stored: ${existing.bedrock_key_config.access_key}`
                    : undefined
                }
                autoComplete="off"
                {...form.getInputProps('bedrock_access_key')}
              />
              <PasswordInput
                label="Secret key"
                description={keep}
                autoComplete="off"
                {...form.getInputProps('bedrock_secret_key')}
              />
            </Group>
          </>
        )}
        {provider === 'vertex' && (
          <>
            <Group grow>
              <TextInput label="Project id" {...form.getInputProps('vertex_project_id')} />
              <TextInput label="Region" {...form.getInputProps('vertex_region')} />
            </Group>
            <Textarea
              label="Service account JSON"
              description={keep}
              autosize
              minRows={3}
              maxRows={8}
              {...form.getInputProps('vertex_credentials')}
            />
          </>
        )}
        {existing && (
          <Text size="xs" c="dimmed">
            Key id {existing.id}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {existing ? 'Save key' : 'Add key'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
