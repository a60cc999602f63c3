// One request: what it cost and how long it took, its semantic-cache record, the logged content (when content
// logging is on), and the attempt trail: each try on each key, and what the gateway did next.
import { Alert, Anchor, Badge, Code, Group, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useLocation, useParams } from 'react-router';
import { api, seg } from '../../api/client.ts';
import { ErrorAlert, Loading } from '../../components/feedback.tsx';
import { useOwners } from './FilterBar.tsx';
import { errorWords, formatCost, formatCount, formatMs, formatTime } from './format.ts';
import type { Attempt, CacheDebug, LogEntry, Named } from './types.ts';

export function LogDetail() {
  const id = useParams()['id'] ?? '';
  const location = useLocation();
  // Typed by LogList's link state; anything else falls back to the unfiltered explorer.
  const back = (location.state as { back?: unknown } | null)?.back;
  const log = useQuery({ queryKey: ['logs', 'entry', id], queryFn: () => api.get<LogEntry>(`/logs/${seg(id)}`) });
  return (
    <Stack>
      <Anchor component={Link} to={typeof back === 'string' ? back : '/logs'} size="sm">
        ← All requests
      </Anchor>
      <Title order={2}>Request {id}</Title>
      <ErrorAlert error={log.error} title="Could not load the request" />
      {log.isPending && <Loading what="the request" />}
      {log.data && <Detail log={log.data} />}
    </Stack>
  );
}

/** A labelled value of a detail page (also the MCP client's). */
export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm" component="div" style={{ overflowWrap: 'anywhere' }}>
        {children}
      </Text>
    </div>
  );
}

const named = (rows: Named[] | undefined, id: string | null) =>
  id ? (rows?.find((r) => r.id === id)?.name ?? id) : '—';

function Detail({ log }: { log: LogEntry }) {
  const owners = useOwners();
  const failure = errorWords(log.error);
  return (
    <>
      {failure && (
        <Alert color="red" title={`The request failed (${log.status_code})`}>
          {failure}
        </Alert>
      )}
      <Paper withBorder p="md" component="section" aria-label="Summary">
        <Title order={3} size="h4" mb="sm">
          Summary
        </Title>
        <SimpleGrid cols={{ base: 2, md: 4 }} spacing="sm">
          <Field label="Time">{formatTime(log.timestamp)}</Field>
          <Field label="Type">
            {log.object}
            {log.stream ? ' (stream)' : ''}
          </Field>
          <Field label="Status">
            <Badge color={log.status === 'success' ? 'teal' : 'red'} variant="light">
              {log.status} {log.status_code}
            </Badge>
          </Field>
          <Field label="Provider">{log.provider ?? '—'}</Field>
          <Field label="Model requested">{log.original_model_requested ?? '—'}</Field>
          <Field label="Model used">{log.resolved_model_used ?? '—'}</Field>
          <Field label="Provider key">{log.selected_key_name || '—'}</Field>
          <Field label="Fallback">
            {log.fallback_index === 0 ? 'primary target' : `fallback ${log.fallback_index}`}
          </Field>
          <Field label="Prompt tokens">{formatCount(log.prompt_tokens)}</Field>
          <Field label="Completion tokens">{formatCount(log.completion_tokens)}</Field>
          <Field label="Total tokens">{formatCount(log.total_tokens)}</Field>
          <Field label="Cost">{log.cost === null ? 'not priced' : formatCost(log.cost)}</Field>
          <Field label="Latency">{formatMs(log.latency_ms)}</Field>
          <Field label="Virtual key">{named(owners.vks, log.virtual_key_id)}</Field>
          <Field label="Team">{named(owners.teams, log.team_id)}</Field>
          <Field label="Customer">{named(owners.customers, log.customer_id)}</Field>
          {log.routing_rule_id && <Field label="Routing rule">{log.routing_rule_id}</Field>}
        </SimpleGrid>
      </Paper>
      <Paper withBorder p="md" component="section" aria-label="Semantic cache">
        <Title order={3} size="h4" mb="sm">
          Semantic cache
        </Title>
        <CacheDebugView debug={log.cache_debug} />
      </Paper>
      <Paper withBorder p="md" component="section" aria-label="Attempts">
        <Title order={3} size="h4" mb="sm">
          Attempts
        </Title>
        <AttemptTrail trail={log.attempt_trail ?? []} />
      </Paper>
      <Paper withBorder p="md" component="section" aria-label="Content">
        <Title order={3} size="h4" mb="sm">
          Content
        </Title>
        <Content content={log.content} />
      </Paper>
    </>
  );
}

const NEXT: Record<string, string> = {
  retry: 'retried the same key',
  rotate: 'tried another key',
  fallback: 'fell back to the next target',
  fail: 'gave up',
};

function AttemptTrail({ trail }: { trail: Attempt[] }) {
  if (trail.length === 0) {
    return <Text size="sm">No upstream attempt: the gateway answered before calling a provider.</Text>;
  }
  return (
    <Table.ScrollContainer minWidth={800}>
      <Table aria-label="Attempt trail" striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">#</Table.Th>
            <Table.Th scope="col">Provider</Table.Th>
            <Table.Th scope="col">Model</Table.Th>
            <Table.Th scope="col">Key</Table.Th>
            <Table.Th scope="col">Try</Table.Th>
            <Table.Th scope="col">Status</Table.Th>
            <Table.Th scope="col">Latency</Table.Th>
            <Table.Th scope="col">Then</Table.Th>
            <Table.Th scope="col">Error</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {trail.map((a, i) => (
            // Attempts have no id; their order is the trail's.
            // biome-ignore lint/suspicious/noArrayIndexKey: the trail never reorders
            <Table.Tr key={i}>
              <Table.Td>{i + 1}</Table.Td>
              <Table.Td>{a.provider}</Table.Td>
              <Table.Td>{a.model}</Table.Td>
              <Table.Td>{a.key_name || a.key_id}</Table.Td>
              <Table.Td>{a.attempt}</Table.Td>
              <Table.Td>
                <Badge color={a.outcome === 'success' ? 'teal' : 'red'} variant="light">
                  {a.status ?? 'no answer'}
                </Badge>
                {a.phase === 'stream' && (
                  <Text size="xs" c="dimmed">
                    failed during the stream
                  </Text>
                )}
              </Table.Td>
              <Table.Td>{formatMs(a.latency_ms)}</Table.Td>
              <Table.Td>{a.next ? NEXT[a.next] : '—'}</Table.Td>
              <Table.Td>{a.error ? `${a.error_type ? `${a.error_type}: ` : ''}${a.error}` : '—'}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** The semantic cache's record of a request, in words (also on the plugins page). */
export function CacheDebugView({ debug }: { debug: CacheDebug | null }) {
  if (!debug || Object.keys(debug).length === 0) {
    return <Text size="sm">The semantic cache did not run for this request.</Text>;
  }
  const rows: [string, ReactNode][] = [
    ['Result', debug.cache_hit ? `hit (${debug.hit_type ?? 'direct'})` : 'miss: the answer was stored'],
  ];
  if (debug.cache_id) rows.push(['Cache id', <Code key="id">{debug.cache_id}</Code>]);
  if (debug.similarity !== undefined) rows.push(['Similarity', debug.similarity.toFixed(4)]);
  if (debug.threshold !== undefined) rows.push(['Threshold', String(debug.threshold)]);
  if (debug.provider_used) rows.push(['Embedding provider', debug.provider_used]);
  if (debug.model_used) rows.push(['Embedding model', debug.model_used]);
  if (debug.input_tokens !== undefined) rows.push(['Embedding tokens', formatCount(debug.input_tokens)]);
  return (
    <Table aria-label="Cache record" withRowBorders={false} w="auto">
      <Table.Tbody>
        {rows.map(([k, v]) => (
          <Table.Tr key={k}>
            <Table.Th scope="row" fw={500}>
              {k}
            </Table.Th>
            <Table.Td>{v}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** The row's content: `{"request": ..., "response": ...}` (a JSON column; older rows may hold it as text). */
function contentOf(content: unknown): { request?: unknown; response?: unknown } | string {
  let v = content;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return content as string; // checked just above: a string that is not JSON is shown as it is
    }
  }
  // Either shape is shown: an object's request and response, or anything else as a request body.
  return v && typeof v === 'object' && !Array.isArray(v)
    ? (v as { request?: unknown; response?: unknown })
    : { request: v };
}

function Content({ content }: { content: unknown }) {
  if (content === null || content === undefined) {
    return (
      <Text size="sm">
        Not logged: content logging is off (the logging plugin’s <code>disable_content_logging</code>), so only metadata
        was kept.
      </Text>
    );
  }
  const parsed = contentOf(content);
  const pretty = (v: unknown) => JSON.stringify(v, null, 2);
  return (
    <Group align="flex-start" grow wrap="wrap">
      <Stack gap={4} miw={300}>
        <Text fw={600} size="sm">
          Request
        </Text>
        <Code block aria-label="Request body" mah={400} style={{ overflow: 'auto' }}>
          {typeof parsed === 'string' ? parsed : pretty(parsed.request ?? null)}
        </Code>
      </Stack>
      {typeof parsed !== 'string' && (
        <Stack gap={4} miw={300}>
          <Text fw={600} size="sm">
            Response
          </Text>
          <Code block aria-label="Response body" mah={400} style={{ overflow: 'auto' }}>
            {pretty(parsed.response ?? null)}
          </Code>
        </Stack>
      )}
    </Group>
  );
}
