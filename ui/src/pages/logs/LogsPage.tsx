// The logs explorer: filters bound to the URL query, totals and charts over the same filters, the matching
// requests page by page (keyset: next_cursor), new requests added on top while Live is on, and (under logs/:id)
// one request's detail.
import { Anchor, Badge, Button, Group, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, Route, Routes, useLocation, useSearchParams } from 'react-router';
import { api } from '../../api/client.ts';
import { ErrorAlert, Loading } from '../../components/feedback.tsx';
import { LiveStatus } from '../../components/LiveStatus.tsx';
import { FilterBar, useOwners } from './FilterBar.tsx';
import { type ApiQuery, apiFilters, LIVE_PARAM, type LogFilterState, readFilters, writeFilters } from './filters.ts';
import { formatCost, formatCount, formatMs, formatTime } from './format.ts';
import { LiveNotice, type Noun } from './LiveNotice.tsx';
import { LogCharts, StatsCards } from './LogCharts.tsx';
import { LogDetail } from './LogDetail.tsx';
import { withLiveRows } from './live-rows.ts';
import type { LogPage, Named } from './types.ts';
import { useLiveRows } from './useLiveRows.ts';

const REQUESTS: Noun = { one: 'request', many: 'requests' };

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
  const live = params.get(LIVE_PARAM) === '1';
  // The filters' part of the address: switching Live neither refetches nor resets the form.
  const search = useMemo(() => {
    const p = new URLSearchParams(params);
    p.delete(LIVE_PARAM);
    return p.toString();
  }, [params]);
  const filters = useMemo(() => readFilters(new URLSearchParams(search)), [search]);
  // A preset range ("last hour") is fixed when the filters change or on Refresh, so every query shares one window.
  const [refreshed, setRefreshed] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshed and search are the moments "now" is taken
  const now = useMemo(() => Date.now(), [search, refreshed]);
  const query = useMemo(() => apiFilters(filters, now), [filters, now]);
  const apply = (f: LogFilterState) => {
    const p = writeFilters(f);
    if (live) p.set(LIVE_PARAM, '1');
    setParams(p);
  };
  const setLive = (on: boolean) =>
    setParams(
      (prev) => {
        const p = new URLSearchParams(prev);
        if (on) p.set(LIVE_PARAM, '1');
        else p.delete(LIVE_PARAM);
        return p;
      },
      { replace: true },
    );
  const refresh = () => setRefreshed((n) => n + 1);
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Logs</Title>
        <Group gap="md">
          <Switch label="Live" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} />
          {live && <LiveStatus label="Live logs" />}
          <Button variant="default" onClick={refresh}>
            Refresh
          </Button>
        </Group>
      </Group>
      <Text size="sm" c="dimmed">
        Every request the gateway served, with its cost, tokens and latency. Filters are kept in the address, so a
        filtered view can be bookmarked or shared. With Live on, new requests that match are added to the top of the
        list as they are logged (totals and charts stay as of the last refresh).
      </Text>
      <FilterBar key={search} initial={filters} onApply={apply} />
      <StatsCards query={query} />
      <LogCharts query={query} />
      <LogList
        // A refresh or new filters start the live rows afresh, over the newly fetched list.
        key={`${search}|${now}`}
        query={query}
        filters={filters}
        live={live}
        onRefresh={refresh}
      />
    </Stack>
  );
}

function nameOf(rows: Named[] | undefined, id: string | null): string {
  if (!id) return '—';
  return rows?.find((r) => r.id === id)?.name ?? id;
}

function LogList(props: { query: ApiQuery; filters: LogFilterState; live: boolean; onRefresh: () => void }) {
  const location = useLocation();
  const owners = useOwners();
  const { sort_by: sortBy, order } = props.filters;
  const limit = Number(props.filters.limit) || 50;
  const list = useInfiniteQuery({
    queryKey: ['logs', 'list', props.query, sortBy, order, limit],
    queryFn: ({ pageParam }) =>
      api.get<LogPage>('/logs', {
        query: { ...props.query, sort_by: sortBy, order, limit, cursor: pageParam },
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.pagination.next_cursor,
  });
  // At most a page of live rows on top: past that, the list says how many more a refresh would show.
  const feed = useLiveRows(props.live, props.filters, limit);
  const fetched = list.data?.pages.flatMap((p) => p.logs) ?? [];
  const rows = withLiveRows(feed.rows, fetched);
  // The live rows shown count; those only the notice mentions do not (some may not match).
  const total = (list.data?.pages[0]?.pagination.total_count ?? 0) + (rows.length - fetched.length);
  // The detail's "back" link returns to this exact filtered view.
  const back = `${location.pathname}${location.search}`;
  return (
    <Stack gap="xs">
      <Title order={3} size="h4">
        Requests
      </Title>
      <ErrorAlert error={list.error} title="Could not load the logs" />
      <LiveNotice feed={feed} noun={REQUESTS} onRefresh={props.onRefresh} />
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
