// The explorer's filters: edited here, applied to the URL query (where the list and the charts read them).
import { Group, MultiSelect, Paper, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import {
  customRangeError,
  FilterActions,
  formValues,
  LatencyFields,
  nonNegative,
  options,
  PageSizeField,
  plain,
  SortFields,
  submitted,
  TimeRangeFields,
} from './FilterFields.tsx';
import { type LogFilterState, readFilters } from './filters.ts';
import type { FilterData, Named } from './types.ts';

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
    initialValues: formValues(props.initial),
    validate: {
      min_latency: nonNegative,
      max_latency: nonNegative,
      min_cost: nonNegative,
      max_cost: nonNegative,
      start_time: customRangeError,
    },
  });
  const data = useQuery({
    queryKey: ['logs', 'filterdata'],
    queryFn: () => api.get<FilterData>('/logs/filterdata'),
  });
  const owners = useOwners();
  const v = form.values;
  const apply = (values: LogFilterState) => props.onApply(submitted(values));
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
            <TimeRangeFields form={form} />
            <LatencyFields form={form} />
            <Group grow gap="xs" align="flex-start">
              <TextInput label="Min cost (USD)" inputMode="decimal" {...form.getInputProps('min_cost')} />
              <TextInput label="Max cost (USD)" inputMode="decimal" {...form.getInputProps('max_cost')} />
            </Group>
            <SortFields
              form={form}
              keys={[
                { value: 'timestamp', label: 'Time' },
                { value: 'latency', label: 'Latency' },
                { value: 'tokens', label: 'Tokens' },
                { value: 'cost', label: 'Cost' },
              ]}
            />
            <PageSizeField form={form} />
          </SimpleGrid>
          <FilterActions onClear={() => apply(readFilters(new URLSearchParams()))} />
        </Stack>
      </form>
    </Paper>
  );
}
