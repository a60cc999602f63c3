// The logs explorer: filters bound to the URL query, totals and charts over the same filters, the matching
// requests page by page (keyset: next_cursor), and (under logs/:id) one request's detail.
import { Anchor, Badge, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, Route, Routes, useLocation, useSearchParams } from 'react-router';
import { api } from '../../api/client.ts';
import { ErrorAlert, Loading } from '../../components/feedback.tsx';
import { FilterBar, useOwners } from './FilterBar.tsx';
import { apiFilters, type LogFilterState, readFilters, writeFilters } from './filters.ts';
import { formatCost, formatCount, formatMs, formatTime } from './format.ts';
import { LogCharts, StatsCards } from './LogCharts.tsx';
import { LogDetail } from './LogDetail.tsx';
import type { LogPage, Named } from './types.ts';

export default function LogsPage() {
  return (
    <Routes>
      <Route index element={<Explorer />} />
      <Route path=":id" element={<LogDetail />} />
    </Routes>
  );
}

function Explorer() {
  const [params, setParams] = useSearchParams();
  const search = params.toString();
  const filters = useMemo(() => readFilters(new URLSearchParams(search)), [search]);
  // A preset range ("last hour") is fixed when the filters change or on Refresh, so every query shares one window.
  const [refreshed, setRefreshed] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshed and search are the moments "now" is taken
  const now = useMemo(() => Date.now(), [search, refreshed]);
  const query = useMemo(() => apiFilters(filters, now), [filters, now]);
  const apply = (f: LogFilterState) => setParams(writeFilters(f));
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Logs</Title>
        <Button variant="default" onClick={() => setRefreshed((n) => n + 1)}>
          Refresh
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        Every request the gateway served, with its cost, tokens and latency. Filters are kept in the address, so a
        filtered view can be bookmarked or shared.
      </Text>
      <FilterBar key={search} initial={filters} onApply={apply} />
      <StatsCards query={query} />
      <LogCharts query={query} />
      <LogList query={query} sortBy={filters.sort_by} order={filters.order} limit={Number(filters.limit) || 50} />
    </Stack>
  );
}

function nameOf(rows: Named[] | undefined, id: string | null): string {
  if (!id) return '—';
  return rows?.find((r) => r.id === id)?.name ?? id;
}

function LogList(props: { query: Record<string, string | undefined>; sortBy: string; order: string; limit: number }) {
  const location = useLocation();
  const owners = useOwners();
  const list = useInfiniteQuery({
    queryKey: ['logs', 'list', props.query, props.sortBy, props.order, props.limit],
    queryFn: ({ pageParam }) =>
      api.get<LogPage>('/logs', {
        query: { ...props.query, sort_by: props.sortBy, order: props.order, limit: props.limit, cursor: pageParam },
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.pagination.next_cursor,
  });
  const rows = list.data?.pages.flatMap((p) => p.logs) ?? [];
  const total = list.data?.pages[0]?.pagination.total_count ?? 0;
  // The detail's "back" link returns to this exact filtered view.
  const back = `${location.pathname}${location.search}`;
  return (
    <Stack gap="xs">
      <Title order={3} size="h4">
        Requests
      </Title>
      <ErrorAlert error={list.error} title="Could not load the logs" />
      {list.isPending ? (
        <Loading what="logs" />
      ) : rows.length === 0 ? (
        <Text>
          {list.data?.pages[0]?.has_logs
            ? 'No request matches these filters.'
            : 'No request has been logged yet. Requests appear here a moment after they finish.'}
        </Text>
      ) : (
        <>
          <Text size="sm" c="dimmed" aria-live="polite">
            Showing {rows.length} of {formatCount(total)} matching requests
          </Text>
          <Table.ScrollContainer minWidth={900}>
            <Table striped highlightOnHover aria-label="Request logs">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Time</Table.Th>
                  <Table.Th scope="col">Type</Table.Th>
                  <Table.Th scope="col">Provider</Table.Th>
                  <Table.Th scope="col">Model</Table.Th>
                  <Table.Th scope="col">Status</Table.Th>
                  <Table.Th scope="col">Tokens</Table.Th>
                  <Table.Th scope="col">Cost</Table.Th>
                  <Table.Th scope="col">Latency</Table.Th>
                  <Table.Th scope="col">Virtual key</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((r) => (
                  <Table.Tr key={r.id}>
                    <Table.Td>
                      <Anchor
                        component={Link}
                        to={encodeURIComponent(r.id)}
                        state={{ back }}
                        aria-label={`Request ${r.id}`}
                      >
                        {formatTime(r.timestamp)}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{r.object}</Table.Td>
                    <Table.Td>{r.provider ?? '—'}</Table.Td>
                    <Table.Td>{r.model ?? '—'}</Table.Td>
                    <Table.Td>
                      <Group gap={4} wrap="nowrap">
                        <Badge color={r.status === 'success' ? 'teal' : 'red'} variant="light">
                          {r.status_code}
                        </Badge>
                        {r.cache_debug?.cache_hit && (
                          <Badge color="violet" variant="light">
                            cached
                          </Badge>
                        )}
                      </Group>
                    </Table.Td>
                    <Table.Td>{formatCount(r.total_tokens)}</Table.Td>
                    <Table.Td>{formatCost(r.cost)}</Table.Td>
                    <Table.Td>{formatMs(r.latency_ms)}</Table.Td>
                    <Table.Td>{nameOf(owners.vks, r.virtual_key_id)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
          {list.hasNextPage && (
            <Group justify="center">
              <Button variant="default" loading={list.isFetchingNextPage} onClick={() => void list.fetchNextPage()}>
                Load more
              </Button>
            </Group>
          )}
        </>
      )}
    </Stack>
  );
}
