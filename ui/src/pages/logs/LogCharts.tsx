// Totals and charts of requests, tokens, cost and latency over time: /api/logs/stats and /api/logs/histogram*,
// with the explorer's filters and time window.
import { AreaChart, BarChart, LineChart } from '@mantine/charts';
import { Paper, SimpleGrid, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { api } from '../../api/client.ts';
import { ErrorAlert, Loading } from '../../components/feedback.tsx';
import type { ApiQuery } from './filters.ts';
import { bucketLabel, formatCost, formatCount, formatMs } from './format.ts';
import { TotalsGrid } from './TotalsGrid.tsx';
import type { CostHistogram, LatencyHistogram, LogStats, RequestHistogram, TokenHistogram } from './types.ts';

function useLogsQuery<T>(path: string, query: ApiQuery) {
  return useQuery({ queryKey: ['logs', path, query], queryFn: () => api.get<T>(path, { query }) });
}

export function StatsCards({ query }: { query: ApiQuery }) {
  const stats = useLogsQuery<LogStats>('/logs/stats', query);
  if (stats.error) return <ErrorAlert error={stats.error} title="Could not load the totals" />;
  const s = stats.data;
  const cards: [string, string][] = [
    ['Requests', s ? formatCount(s.total_requests) : '…'],
    ['Success rate', s ? `${s.success_rate.toFixed(1)}%` : '…'],
    ['Average latency', s ? formatMs(s.average_latency) : '…'],
    ['Tokens', s ? formatCount(s.total_tokens) : '…'],
    ['Cost', s ? formatCost(s.total_cost) : '…'],
  ];
  return <TotalsGrid cards={cards} />;
}

function ChartPanel(props: { title: string; error: unknown; loading: boolean; children: ReactNode }) {
  return (
    <Paper withBorder p="md" component="section" aria-label={props.title}>
      <Title order={3} size="h5" mb="sm">
        {props.title}
      </Title>
      <ErrorAlert error={props.error} title={`Could not load ${props.title.toLowerCase()}`} />
      {props.loading ? <Loading what={props.title.toLowerCase()} /> : props.children}
    </Paper>
  );
}

/** Buckets with a readable `time` label for the x axis. */
function labelled<B extends { timestamp: string }>(h: { buckets: B[]; bucket_size_seconds: number } | undefined) {
  return (h?.buckets ?? []).map((b) => ({ ...b, time: bucketLabel(b.timestamp, h?.bucket_size_seconds ?? 3600) }));
}

export function LogCharts({ query }: { query: ApiQuery }) {
  const requests = useLogsQuery<RequestHistogram>('/logs/histogram', query);
  const tokens = useLogsQuery<TokenHistogram>('/logs/histogram/tokens', query);
  const cost = useLogsQuery<CostHistogram>('/logs/histogram/cost', query);
  const latency = useLogsQuery<LatencyHistogram>('/logs/histogram/latency', query);
  const h = 200;
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
      <ChartPanel title="Requests over time" error={requests.error} loading={requests.isPending}>
        <BarChart
          h={h}
          data={labelled(requests.data)}
          dataKey="time"
          type="stacked"
          withLegend
          series={[
            { name: 'success', label: 'Succeeded', color: 'teal.6' },
            { name: 'error', label: 'Failed', color: 'red.6' },
          ]}
        />
      </ChartPanel>
      <ChartPanel title="Tokens over time" error={tokens.error} loading={tokens.isPending}>
        <AreaChart
          h={h}
          data={labelled(tokens.data)}
          dataKey="time"
          type="stacked"
          withLegend
          withDots={false}
          valueFormatter={(v) => formatCount(v)}
          series={[
            { name: 'prompt_tokens', label: 'Prompt', color: 'indigo.6' },
            { name: 'completion_tokens', label: 'Completion', color: 'cyan.6' },
          ]}
        />
      </ChartPanel>
      <ChartPanel title="Cost over time" error={cost.error} loading={cost.isPending}>
        <AreaChart
          h={h}
          data={labelled(cost.data)}
          dataKey="time"
          withDots={false}
          valueFormatter={(v) => formatCost(v)}
          series={[{ name: 'total_cost', label: 'Cost (USD)', color: 'grape.6' }]}
        />
      </ChartPanel>
      <ChartPanel title="Latency over time" error={latency.error} loading={latency.isPending}>
        <LineChart
          h={h}
          data={labelled(latency.data)}
          dataKey="time"
          withLegend
          withDots={false}
          valueFormatter={(v) => formatMs(v)}
          series={[
            { name: 'avg_latency', label: 'Average', color: 'blue.6' },
            { name: 'p90_latency', label: 'p90', color: 'orange.5' },
            { name: 'p99_latency', label: 'p99', color: 'red.6' },
          ]}
        />
      </ChartPanel>
    </SimpleGrid>
  );
}
