// A plugin's settings as JSON: checked for JSON here, for meaning by the gateway (whose refusal names the field).
import { Button, Group, JsonInput, Stack, Switch, Text } from '@mantine/core';
import { useState } from 'react';
import { api, seg } from '../../api/client.ts';
import { ErrorAlert, useApiMutation } from '../../components/feedback.tsx';
import { type Plugin, type PluginChanged, pluginKeys } from './types.ts';

/** The settings object typed, or why it is not one. */
export function parseSettings(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; why: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() || '{}');
  } catch (err) {
    return { ok: false, why: `Not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, why: 'The settings are a JSON object: { "name": value, ... }' };
  }
  // Checked just above: a plain object.
  return { ok: true, value: value as Record<string, unknown> };
}

export function SettingsForm({ plugin, onDone }: { plugin: Plugin; onDone: () => void }) {
  const [text, setText] = useState(() => JSON.stringify(plugin.config, null, 2));
  const [enabled, setEnabled] = useState(plugin.enabled);
  const [local, setLocal] = useState<string | undefined>();
  const save = useApiMutation(
    (config: Record<string, unknown>) => api.put<PluginChanged>(`/plugins/${seg(plugin.name)}`, { enabled, config }),
    { invalidate: [pluginKeys], success: (r) => `Settings of ${r.plugin.name} saved` },
    { onSuccess: onDone },
  );
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const parsed = parseSettings(text);
    if (!parsed.ok) {
      setLocal(parsed.why);
      return;
    }
    setLocal(undefined);
    save.mutate(parsed.value);
  };
  return (
    <form onSubmit={submit} aria-label={`Settings of ${plugin.name}`}>
      <Stack>
        <ErrorAlert error={save.error} title="The gateway refused these settings" />
        <Switch label="On" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
        <JsonInput
          label="Settings (JSON)"
          description="Fields left out take their defaults. Saving replaces the stored settings."
          autosize
          minRows={8}
          maxRows={20}
          formatOnBlur
          validationError="Not valid JSON"
          value={text}
          onChange={setText}
          error={local}
          data-autofocus
        />
        <Text size="xs" c="dimmed">
          Version {plugin.version}, settings hash {plugin.config_hash.slice(0, 12)}
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save settings
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
