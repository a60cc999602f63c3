// MCP tool calls: every tool execution the gateway logged (GET /api/mcp-logs), with filters bound to the address
// as on the request logs page, the stats of the matching calls, numbered pages and sort, new calls added on top of
// the first page while Live is on (`mcp_log` messages of /ws), a detail drawer, and deleting the selected calls.
import {
  Anchor,
  Badge,
  Button,
  Checkbox,
  Group,
  Pagination,
  Paper,
  Stack,
  Switch,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { apiRequest } from '../../api/client.ts';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorAlert, Loading, useApiMutation } from '../../components/feedback.tsx';
import { LiveStatus } from '../../components/LiveStatus.tsx';
import { type ApiQuery, LIVE_PARAM } from '../logs/filters.ts';
import { formatCost, formatCount, formatMs, formatTime } from '../logs/format.ts';
import { LiveNotice, type Noun } from '../logs/LiveNotice.tsx';
import { withLiveRows } from '../logs/live-rows.ts';
import { TotalsGrid } from '../logs/TotalsGrid.tsx';
import { useLiveFeed } from '../logs/useLiveRows.ts';
import {
  type McpFilterState,
  mcpApiFilters,
  PAGE_PARAM,
  readMcpFilters,
  readPage,
  writeMcpFilters,
} from './filters.ts';
import { asMcpLog, mcpLiveVerdict } from './live-rows.ts';
import { McpFilterBar, useMcpFilterData } from './McpFilterBar.tsx';
import { keyLabel, McpLogDrawer } from './McpLogDetail.tsx';
import { type McpLogEntry, type McpLogPage, type McpLogStats, mcpLogKeys } from './types.ts';

const CALLS: Noun = { one: 'tool call', many: 'tool calls' };

export default function McpLogsPage() {
  const [params, setParams] = useSearchParams();
  const live = params.get(LIVE_PARAM) === '1';
  const page = readPage(params);
  // The filters' part of the address: switching Live or the page neither resets the form nor moves "now".
  const search = useMemo(() => {
    const p = new URLSearchParams(params);
    p.delete(LIVE_PARAM);
    p.delete(PAGE_PARAM);
    return p.toString();
  }, [params]);
  const filters = useMemo(() => readMcpFilters(new URLSearchParams(search)), [search]);
  const [refreshed, setRefreshed] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshed and search are the moments "now" is taken
  const now = useMemo(() => Date.now(), [search, refreshed]);
  const query = useMemo(() => mcpApiFilters(filters, now), [filters, now]);
  const apply = (f: McpFilterState) => {
    const p = writeMcpFilters(f);
    if (live) p.set(LIVE_PARAM, '1');
    setParams(p);
  };
  const setParam = (name: string, value: string | undefined, replace = false) =>
    setParams(
      (prev) => {
        const p = new URLSearchParams(prev);
        if (value === undefined) p.delete(name);
        else p.set(name, value);
        return p;
      },
      { replace },
    );
  const refresh = () => setRefreshed((n) => n + 1);
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>MCP tool calls</Title>
        <Group gap="md">
          <Switch
            label="Live"
            checked={live}
            onChange={(e) => setParam(LIVE_PARAM, e.currentTarget.checked ? '1' : undefined, true)}
          />
          {live && <LiveStatus label="Live tool calls" />}
          <Button variant="default" onClick={refresh}>
            Refresh
          </Button>
        </Group>
      </Group>
      <Text size="sm" c="dimmed">
        Every MCP tool the gateway executed, with its arguments, result, latency and cost. Filters are kept in the
        address. With Live on, new calls that match are added to the top of the first page as they are logged (the
        totals stay as of the last refresh).
      </Text>
      <McpFilterBar key={search} initial={filters} onApply={apply} />
      <CallList
        // A refresh, new filters or another page start the live rows afresh, over the newly fetched list.
        key={`${search}|${now}|${page}`}
        query={query}
        filters={filters}
        page={page}
        live={live}
        onPage={(n) => setParam(PAGE_PARAM, n === 1 ? undefined : String(n))}
        onRefresh={refresh}
      />
    </Stack>
  );
}

function Stats({ stats }: { stats: McpLogStats | undefined }) {
  const s = stats;
  return (
    <TotalsGrid
      cards={[
        ['Executions', s ? formatCount(s.total_executions) : '…'],
        ['Success rate', s ? `${s.success_rate.toFixed(1)}%` : '…'],
        ['Average latency', s ? formatMs(s.average_latency) : '…'],
        ['Cost', s ? formatCost(s.total_cost) : '…'],
      ]}
    />
  );
}

function EmptyState() {
  return (
    <Paper withBorder p="lg" role="note" aria-label="No tool calls yet">
      <Title order={3} size="h4" mb="xs">
        No MCP tool call has been logged yet
      </Title>
      <Text size="sm">
        Tool calls made through the gateway appear here a moment after they finish: calls to{' '}
        <code>POST /v1/mcp/tool/execute</code>, tools the gateway runs on its own during a model request (a virtual
        key’s auto-executed tools), and calls through the gateway’s <code>/mcp</code> server. Add a tool server on the{' '}
        <Anchor component={Link} to="/mcp">
          MCP clients
        </Anchor>{' '}
        page and grant its tools to a virtual key to start.
      </Text>
    </Paper>
  );
}

function CallList(props: {
  query: ApiQuery;
  filters: McpFilterState;
  page: number;
  live: boolean;
  onPage: (n: number) => void;
  onRefresh: () => void;
}) {
  const { sort_by: sortBy, order } = props.filters;
  const limit = Number(props.filters.limit) || 50;
  const list = useQuery({
    queryKey: [...mcpLogKeys, 'list', props.query, sortBy, order, limit, props.page],
    queryFn: () =>
      apiRequest<McpLogPage>('GET', '/mcp-logs', {
        query: { ...props.query, sort_by: sortBy, order, limit, offset: (props.page - 1) * limit },
      }),
  });
  const names = useMcpFilterData();
  // Live rows go on top of the first page only: further pages are a fixed window of older calls.
  const feed = useLiveFeed(
    props.live && props.page === 1,
    limit,
    'mcp_log',
    (m) => (m.type === 'mcp_log' ? asMcpLog(m.payload) : undefined),
    (e) => mcpLiveVerdict(props.filters, e),
  );
  const fetched = list.data?.logs ?? [];
  const rows = withLiveRows(feed.rows, fetched);
  const total = (list.data?.pagination.total_count ?? 0) + (rows.length - fetched.length);
  const pages = Math.max(1, Math.ceil((list.data?.pagination.total_count ?? 0) / limit));
  const [open, setOpen] = useState<McpLogEntry | undefined>(undefined);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const allOn = rows.length > 0 && rows.every((r) => selected.has(r.id));
  const remove = useApiMutation(
    (ids: string[]) => apiRequest<{ message: string; deleted: number }>('DELETE', '/mcp-logs', { body: { ids } }),
    { success: (d) => d.message },
    {
      onSuccess: () => {
        setSelected(new Set());
        props.onRefresh();
      },
    },
  );
  const todayName = (id: string | null) => names.data?.virtual_keys.find((k) => k.id === id)?.name;
  const hasLogs = list.data?.has_logs === true || rows.length > 0;
  return (
    <Stack gap="xs">
      <Stats stats={list.data?.stats} />
      <ErrorAlert error={list.error} title="Could not load the tool calls" />
      <ErrorAlert error={remove.error} title="Could not delete the tool calls" />
      <LiveNotice feed={feed} noun={CALLS} onRefresh={props.onRefresh} skippedApart />
      {props.live && props.page > 1 && (
        <Text size="sm" c="dimmed">
          New tool calls are added on the first page.
        </Text>
      )}
      {list.isPending ? (
        <Loading what="tool calls" />
      ) : !hasLogs ? (
        <EmptyState />
      ) : rows.length === 0 && props.page > 1 ? (
        <Group>
          <Text>No tool call on page {props.page}.</Text>
          <Button variant="default" size="xs" onClick={() => props.onPage(1)}>
            First page
          </Button>
        </Group>
      ) : rows.length === 0 ? (
        <Text>No tool call matches these filters.</Text>
      ) : (
        <>
          <Group justify="space-between">
            <Text size="sm" c="dimmed" aria-live="polite">
              Showing {rows.length} of {formatCount(total)} matching tool calls
            </Text>
            <Group gap="xs">
              {selected.size > 0 && <Text size="sm">{formatCount(selected.size)} selected</Text>}
              {selected.size > 0 && (
                <ConfirmButton
                  label="Delete"
                  size="xs"
                  ariaLabel="Delete the selected tool calls"
                  loading={remove.isPending}
                  confirm={`Delete the ${selected.size === 1 ? 'selected tool call' : `${formatCount(selected.size)} selected tool calls`} from the log? This cannot be undone.`}
                  onConfirm={() => remove.mutate([...selected])}
                />
              )}
            </Group>
          </Group>
          <Table.ScrollContainer minWidth={900}>
            <Table striped highlightOnHover aria-label="MCP tool calls">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">
                    <Checkbox
                      aria-label="Select every tool call shown"
                      checked={allOn}
                      indeterminate={!allOn && rows.some((r) => selected.has(r.id))}
                      onChange={(e) => {
                        const on = e.currentTarget.checked;
                        setSelected(on ? new Set(rows.map((r) => r.id)) : new Set());
                      }}
                    />
                  </Table.Th>
                  <Table.Th scope="col">Time</Table.Th>
                  <Table.Th scope="col">Tool</Table.Th>
                  <Table.Th scope="col">Server</Table.Th>
                  <Table.Th scope="col">Virtual key</Table.Th>
                  <Table.Th scope="col">Status</Table.Th>
                  <Table.Th scope="col">Latency</Table.Th>
                  <Table.Th scope="col">Cost</Table.Th>
                  <Table.Th scope="col">Request</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((r) => (
                  <Table.Tr key={r.id}>
                    <Table.Td>
                      <Checkbox
                        aria-label={`Select tool call ${r.id}`}
                        checked={selected.has(r.id)}
                        onChange={(e) => toggle(r.id, e.currentTarget.checked)}
                      />
                    </Table.Td>
                    <Table.Td>
                      <Anchor
                        component="button"
                        type="button"
                        onClick={() => setOpen(r)}
                        aria-label={`Tool call ${r.id}`}
                      >
                        {formatTime(r.timestamp)}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{r.tool_name}</Table.Td>
                    <Table.Td>{r.server_label}</Table.Td>
                    <Table.Td>{keyLabel(r, todayName(r.virtual_key_id))}</Table.Td>
                    <Table.Td>
                      <Badge color={r.status === 'success' ? 'teal' : 'red'} variant="light">
                        {r.status}
                      </Badge>
                    </Table.Td>
                    <Table.Td>{formatMs(r.latency)}</Table.Td>
                    <Table.Td>{formatCost(r.cost)}</Table.Td>
                    <Table.Td>
                      {r.llm_request_id ? (
                        <Anchor
                          component={Link}
                          to={`/logs/${encodeURIComponent(r.llm_request_id)}`}
                          aria-label={`Model request ${r.llm_request_id}`}
                        >
                          {r.llm_request_id.slice(0, 8)}…
                        </Anchor>
                      ) : (
                        '—'
                      )}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
          {pages > 1 && (
            <Group justify="center">
              <Pagination total={pages} value={props.page} onChange={props.onPage} aria-label="Pages of tool calls" />
            </Group>
          )}
        </>
      )}
      <McpLogDrawer log={open} onClose={() => setOpen(undefined)} />
    </Stack>
  );
}
