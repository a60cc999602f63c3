// The semantic cache's entries: clear one by its cache id (an answer's cache_debug.cache_id) or every entry of a
// cache key; the latest requests the cache ran for, with their cache record and a button to clear their entry.
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Code,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, seg } from '../../api/client.ts';
import { ErrorAlert, Loading, useApiMutation } from '../../components/feedback.tsx';
import { formatTime } from '../logs/format.ts';
import { CacheDebugView } from '../logs/LogDetail.tsx';
import type { LogEntry, LogPage } from '../logs/types.ts';
import type { CacheCleared } from './types.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The gateway's rule for cache keys (x-gateway-cache-key). */
const CACHE_KEY = /^[\x21-\x7e]{1,256}$/;
const RECENT = 200;

export function CachePanel() {
  const [result, setResult] = useState<string | undefined>();
  const byId = useApiMutation(
    (id: string) => api.del<CacheCleared>(`/cache/clear/${seg(id)}`),
    {},
    {
      onSuccess: (r) => setResult(r.message),
    },
  );
  const byKey = useApiMutation(
    (key: string) => api.del<CacheCleared>(`/cache/clear-by-key/${seg(key)}`),
    {},
    {
      onSuccess: (r) => setResult(r.message),
    },
  );
  return (
    <Paper withBorder p="md" component="section" aria-label="Semantic cache">
      <Stack>
        <Title order={3} size="h4">
          Semantic cache
        </Title>
        <Text size="sm" c="dimmed">
          Stored answers stay until they expire (<code>ttl_seconds</code>). Clear one entry by its cache id (from a
          request’s cache record), or every entry stored under a cache key, for every caller.
        </Text>
        {result && (
          <Alert color="teal" role="status" title="Cache cleared" withCloseButton onClose={() => setResult(undefined)}>
            {result}
          </Alert>
        )}
        <ErrorAlert error={byId.error ?? byKey.error} />
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <ClearForm
            label="Cache id"
            button="Clear entry"
            placeholder="e.g. 3f1c0a52-…"
            check={(v) => (UUID.test(v) ? null : 'A cache id is a UUID, as in a request’s cache record')}
            pending={byId.isPending}
            onClear={(v) => {
              setResult(undefined);
              byId.mutate(v);
            }}
          />
          <ClearForm
            label="Cache key"
            button="Clear key"
            placeholder="the x-gateway-cache-key"
            check={(v) =>
              CACHE_KEY.test(v) && !/[/?#%]/.test(v) ? null : '1-256 visible ASCII characters, without / ? # %'
            }
            pending={byKey.isPending}
            onClear={(v) => {
              setResult(undefined);
              byKey.mutate(v);
            }}
          />
        </SimpleGrid>
        <CachedRequests
          onClear={(id) => {
            setResult(undefined);
            byId.mutate(id);
          }}
        />
      </Stack>
    </Paper>
  );
}

function ClearForm(props: {
  label: string;
  button: string;
  placeholder: string;
  check: (v: string) => string | null;
  pending: boolean;
  onClear: (v: string) => void;
}) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      aria-label={`Clear by ${props.label.toLowerCase()}`}
      onSubmit={(e) => {
        e.preventDefault();
        const v = value.trim();
        const why = props.check(v);
        setError(why);
        if (!why) props.onClear(v);
      }}
    >
      <Group align="flex-end" wrap="nowrap">
        <TextInput
          label={props.label}
          placeholder={props.placeholder}
          value={value}
          onChange={(e) => setValue(e.currentTarget.value)}
          error={error}
          style={{ flex: 1 }}
        />
        <Button type="submit" color="red" variant="light" loading={props.pending}>
          {props.button}
        </Button>
      </Group>
    </form>
  );
}

function CachedRequests({ onClear }: { onClear: (cacheId: string) => void }) {
  const [shown, setShown] = useState<LogEntry | undefined>();
  const recent = useQuery({
    queryKey: ['logs', 'cached', RECENT],
    queryFn: () => api.get<LogPage>('/logs', { query: { limit: RECENT } }),
    select: (d) => d.logs.filter((l) => l.cache_debug && Object.keys(l.cache_debug).length > 0),
  });
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={4} size="h5">
          Latest cached requests
        </Title>
        <Button size="xs" variant="default" onClick={() => void recent.refetch()} loading={recent.isFetching}>
          Refresh
        </Button>
      </Group>
      <ErrorAlert error={recent.error} title="Could not load the latest requests" />
      {recent.isPending ? (
        <Loading what="cached requests" />
      ) : recent.data?.length === 0 ? (
        <Text size="sm">None of the latest {RECENT} requests went through the semantic cache.</Text>
      ) : (
        <Table aria-label="Cached requests" striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Time</Table.Th>
              <Table.Th scope="col">Model</Table.Th>
              <Table.Th scope="col">Cache</Table.Th>
              <Table.Th scope="col">Cache id</Table.Th>
              <Table.Th scope="col">
                <span className="visually-hidden">Actions</span>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {recent.data?.map((l) => (
              <Table.Tr key={l.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/logs/${encodeURIComponent(l.id)}`}>
                    {formatTime(l.timestamp)}
                  </Anchor>
                </Table.Td>
                <Table.Td>{l.model ?? '—'}</Table.Td>
                <Table.Td>
                  <Badge color={l.cache_debug?.cache_hit ? 'violet' : 'gray'} variant="light">
                    {l.cache_debug?.cache_hit ? 'hit' : 'miss'}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Code>{l.cache_debug?.cache_id ?? '—'}</Code>
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap" justify="flex-end">
                    <Button size="xs" variant="default" onClick={() => setShown(shown?.id === l.id ? undefined : l)}>
                      {shown?.id === l.id ? 'Hide record' : 'Show record'}
                    </Button>
                    {l.cache_debug?.cache_id && (
                      <Button
                        size="xs"
                        color="red"
                        variant="light"
                        aria-label={`Clear cache entry ${l.cache_debug.cache_id}`}
                        onClick={() => l.cache_debug?.cache_id && onClear(l.cache_debug.cache_id)}
                      >
                        Clear
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {shown && (
        <Paper withBorder p="sm" aria-label={`Cache record of request ${shown.id}`} component="section">
          <Text size="sm" fw={600} mb="xs">
            Cache record of request {shown.id}
          </Text>
          <CacheDebugView debug={shown.cache_debug} />
        </Paper>
      )}
    </Stack>
  );
}
