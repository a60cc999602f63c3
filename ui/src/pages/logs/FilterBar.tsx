// The explorer's filters: edited here, applied to the URL query (where the list and the charts read them).
import { Button, Group, MultiSelect, Paper, Select, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import {
  fromLocalInput,
  type LogFilterState,
  PAGE_SIZES,
  RANGES,
  type RangeName,
  readFilters,
  toLocalInput,
} from './filters.ts';
import type { FilterData, Named } from './types.ts';

/** Options of a select: the known rows by name, and any id in the filter that is not (deleted since). */
function options(rows: Named[] | undefined, chosen: string[]): { value: string; label: string }[] {
  const out = (rows ?? []).map((r) => ({ value: r.id, label: r.name }));
  for (const id of chosen) if (!out.some((o) => o.value === id)) out.push({ value: id, label: id });
  return out;
}

function plain(values: string[] | undefined, chosen: string[]): string[] {
  return [...new Set([...(values ?? []), ...chosen])];
}

/** The governance rows whose names the filters and the table show. */
export function useOwners() {
  const vks = useQuery({
    queryKey: ['governance', 'virtual-keys', 'names'],
    queryFn: () => api.get<{ virtual_keys: Named[] }>('/governance/virtual-keys'),
    select: (d) => d.virtual_keys.map(({ id, name }) => ({ id, name })),
  });
  const teams = useQuery({
    queryKey: ['governance', 'teams', 'names'],
    queryFn: () => api.get<{ teams: Named[] }>('/governance/teams'),
    select: (d) => d.teams.map(({ id, name }) => ({ id, name })),
  });
  const customers = useQuery({
    queryKey: ['governance', 'customers', 'names'],
    queryFn: () => api.get<{ customers: Named[] }>('/governance/customers'),
    select: (d) => d.customers.map(({ id, name }) => ({ id, name })),
  });
  return { vks: vks.data, teams: teams.data, customers: customers.data };
}

export function FilterBar(props: { initial: LogFilterState; onApply: (f: LogFilterState) => void }) {
  const form = useForm<LogFilterState>({
    initialValues: {
      ...props.initial,
      start_time: toLocalInput(props.initial.start_time),
      end_time: toLocalInput(props.initial.end_time),
    },
    validate: {
      min_latency: nonNegative,
      max_latency: nonNegative,
      min_cost: nonNegative,
      max_cost: nonNegative,
      start_time: (v, all) => (all.range === 'custom' && !v && !all.end_time ? 'Give a start, an end, or both' : null),
    },
  });
  const data = useQuery({
    queryKey: ['logs', 'filterdata'],
    queryFn: () => api.get<FilterData>('/logs/filterdata'),
  });
  const owners = useOwners();
  const v = form.values;
  const apply = (values: LogFilterState) =>
    props.onApply({
      ...values,
      start_time: fromLocalInput(values.start_time),
      end_time: fromLocalInput(values.end_time),
    });
  return (
    <Paper withBorder p="md">
      <form onSubmit={form.onSubmit(apply)} aria-label="Log filters">
        <Stack gap="sm">
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }} spacing="sm">
            <MultiSelect
              label="Provider"
              data={plain(data.data?.providers, v.providers)}
              searchable
              clearable
              {...form.getInputProps('providers')}
            />
            <MultiSelect
              label="Model"
              data={plain(data.data?.models, v.models)}
              searchable
              clearable
              {...form.getInputProps('models')}
            />
            <MultiSelect
              label="Status"
              data={[
                { value: 'success', label: 'Success' },
                { value: 'error', label: 'Error' },
              ]}
              clearable
              {...form.getInputProps('status')}
            />
            <TextInput
              label="Text"
              description="In the content, the error or the model"
              {...form.getInputProps('content_search')}
            />
            <MultiSelect
              label="Virtual key"
              data={options(owners.vks, v.virtual_key_ids)}
              searchable
              clearable
              {...form.getInputProps('virtual_key_ids')}
            />
            <MultiSelect
              label="Team"
              data={options(owners.teams, v.team_ids)}
              searchable
              clearable
              {...form.getInputProps('team_ids')}
            />
            <MultiSelect
              label="Customer"
              data={options(owners.customers, v.customer_ids)}
              searchable
              clearable
              {...form.getInputProps('customer_ids')}
            />
            <Select
              label="Time range"
              data={RANGES.map((r) => ({ value: r.value, label: r.label }))}
              allowDeselect={false}
              value={v.range}
              onChange={(r) => form.setFieldValue('range', (r ?? '24h') as RangeName)} // data holds RangeNames only
            />
            {v.range === 'custom' && (
              <>
                <TextInput type="datetime-local" label="From" {...form.getInputProps('start_time')} />
                <TextInput type="datetime-local" label="To" {...form.getInputProps('end_time')} />
              </>
            )}
            <Group grow gap="xs" align="flex-start">
              <TextInput label="Min latency (ms)" inputMode="decimal" {...form.getInputProps('min_latency')} />
              <TextInput label="Max latency (ms)" inputMode="decimal" {...form.getInputProps('max_latency')} />
            </Group>
            <Group grow gap="xs" align="flex-start">
              <TextInput label="Min cost (USD)" inputMode="decimal" {...form.getInputProps('min_cost')} />
              <TextInput label="Max cost (USD)" inputMode="decimal" {...form.getInputProps('max_cost')} />
            </Group>
            <Group grow gap="xs" align="flex-start">
              <Select
                label="Sort by"
                data={[
                  { value: 'timestamp', label: 'Time' },
                  { value: 'latency', label: 'Latency' },
                  { value: 'tokens', label: 'Tokens' },
                  { value: 'cost', label: 'Cost' },
                ]}
                allowDeselect={false}
                {...form.getInputProps('sort_by')}
              />
              <Select
                label="Order"
                data={[
                  { value: 'desc', label: 'Descending' },
                  { value: 'asc', label: 'Ascending' },
                ]}
                allowDeselect={false}
                {...form.getInputProps('order')}
              />
            </Group>
            <Select
              label="Rows per page"
              data={[...PAGE_SIZES]}
              allowDeselect={false}
              {...form.getInputProps('limit')}
            />
          </SimpleGrid>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => apply(readFilters(new URLSearchParams()))}>
              Clear filters
            </Button>
            <Button type="submit">Apply filters</Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}

function nonNegative(v: string): string | null {
  if (!v.trim()) return null;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? null : 'A number, 0 or more';
}
