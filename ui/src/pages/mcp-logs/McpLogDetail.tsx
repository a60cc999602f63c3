// One tool call, in a drawer over the list: where it ran and for whom, what it cost and took, the request that
// asked for it, and its arguments, result and error as pretty JSON (or why they are not there).
import { Alert, Anchor, Badge, Code, Drawer, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { formatCost, formatMs, formatTime } from '../logs/format.ts';
import { Field } from '../logs/LogDetail.tsx';
import { isRecord } from '../logs/live-rows.ts';
import type { McpLogEntry } from './types.ts';

export function McpLogDrawer({ log, onClose }: { log: McpLogEntry | undefined; onClose: () => void }) {
  return (
    <Drawer
      opened={log !== undefined}
      onClose={onClose}
      position="right"
      size="xl"
      title={log ? `Tool call ${log.server_label} / ${log.tool_name}` : ''}
    >
      {log && <McpLogDetail log={log} />}
    </Drawer>
  );
}

/** Who ran the call: the key's name as logged, its id, or nobody (the admin key). */
export function keyLabel(log: McpLogEntry, today?: string | null): string {
  if (!log.virtual_key_id) return '—';
  return today ?? log.virtual_key_name ?? log.virtual_key_id;
}

export function McpLogDetail({ log }: { log: McpLogEntry }) {
  const err = log.error_details;
  const contentOff = log.arguments === null && log.result === null;
  return (
    <Stack>
      {err && (
        <Alert color="red" title="The tool call failed" role="alert" aria-label="Error">
          <Text size="sm">{err.error.message}</Text>
          <Text size="xs" c="dimmed" mt={4}>
            {err.is_gateway_error ? 'Reported by the gateway' : 'Reported by the tool server'} ({err.error.type}
            {err.error.code && err.error.code !== err.error.type ? `, ${err.error.code}` : ''})
          </Text>
        </Alert>
      )}
      <Paper withBorder p="md" component="section" aria-label="Summary">
        <SimpleGrid cols={{ base: 2, md: 3 }} spacing="sm">
          <Field label="Time">{formatTime(log.timestamp)}</Field>
          <Field label="Tool">{log.tool_name}</Field>
          <Field label="Server">{log.server_label}</Field>
          <Field label="Status">
            <Badge color={log.status === 'success' ? 'teal' : 'red'} variant="light">
              {log.status}
            </Badge>
          </Field>
          <Field label="Latency">{formatMs(log.latency)}</Field>
          <Field label="Cost">{log.cost === null ? 'not priced' : formatCost(log.cost)}</Field>
          <Field label="Virtual key">{keyLabel(log)}</Field>
          <Field label="Model request">
            {log.llm_request_id ? (
              <Anchor component={Link} to={`/logs/${encodeURIComponent(log.llm_request_id)}`}>
                {log.llm_request_id}
              </Anchor>
            ) : (
              'none: called directly'
            )}
          </Field>
          <Field label="Log id">{log.id}</Field>
        </SimpleGrid>
      </Paper>
      {contentOff ? (
        <Paper withBorder p="md" component="section" aria-label="Content">
          <Title order={3} size="h5" mb="xs">
            Arguments and result
          </Title>
          <Text size="sm">
            Not logged: content logging was off (the logging plugin’s <code>disable_content_logging</code>) when this
            call ran, so only its metadata was kept.
          </Text>
        </Paper>
      ) : (
        <>
          <JsonSection title="Arguments" value={log.arguments} missing="No arguments recorded." />
          <JsonSection
            title="Result"
            value={log.result}
            missing={
              log.status === 'error' ? 'No result: the call failed (see the error above).' : 'No result recorded.'
            }
          />
        </>
      )}
      {err && <JsonSection title="Error details" value={err} missing="" />}
    </Stack>
  );
}

/** A live message leaves out a large value (`{"omitted":"too_large_for_live","chars":N}`); the list has it. */
function omittedChars(v: unknown): number | undefined {
  if (!isRecord(v) || v['omitted'] !== 'too_large_for_live') return undefined;
  return typeof v['chars'] === 'number' ? v['chars'] : 0;
}

function JsonSection(props: { title: string; value: unknown; missing: string }) {
  const omitted = omittedChars(props.value);
  return (
    <Paper withBorder p="md" component="section" aria-label={props.title}>
      <Title order={3} size="h5" mb="xs">
        {props.title}
      </Title>
      {props.value === null || props.value === undefined ? (
        <Text size="sm">{props.missing}</Text>
      ) : omitted !== undefined ? (
        <Text size="sm">
          Too large for the live update ({omitted.toLocaleString('en-US')} characters): refresh the list to load it.
        </Text>
      ) : (
        <Code block aria-label={`${props.title} JSON`} mah={400} style={{ overflow: 'auto' }}>
          {JSON.stringify(props.value, null, 2)}
        </Code>
      )}
    </Paper>
  );
}
