// The MCP tool-log page's filters: tools, servers and virtual keys seen in the logs (GET /api/mcp-logs/filterdata),
// status, the request a call belongs to, text, and the fields every explorer shares (time, latency, sort, size).
import { MultiSelect, Paper, SimpleGrid, Stack, TagsInput, TextInput } from '@mantine/core';
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
} from '../logs/FilterFields.tsx';
import { type McpFilterState, readMcpFilters } from './filters.ts';
import { type McpFilterData, mcpLogKeys } from './types.ts';

export function useMcpFilterData() {
  return useQuery({
    queryKey: [...mcpLogKeys, 'filterdata'],
    queryFn: () => api.get<McpFilterData>('/mcp-logs/filterdata'),
  });
}

export function McpFilterBar(props: { initial: McpFilterState; onApply: (f: McpFilterState) => void }) {
  const form = useForm<McpFilterState>({
    initialValues: formValues(props.initial),
    validate: { min_latency: nonNegative, max_latency: nonNegative, start_time: customRangeError },
  });
  const data = useMcpFilterData();
  const v = form.values;
  const apply = (values: McpFilterState) => props.onApply(submitted(values));
  return (
    <Paper withBorder p="md">
      <form onSubmit={form.onSubmit(apply)} aria-label="Tool call filters">
        <Stack gap="sm">
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }} spacing="sm">
            <MultiSelect
              label="Tool"
              data={plain(data.data?.tool_names, v.tool_names)}
              searchable
              clearable
              {...form.getInputProps('tool_names')}
            />
            <MultiSelect
              label="Server"
              description="The MCP client"
              data={plain(data.data?.server_labels, v.server_labels)}
              searchable
              clearable
              {...form.getInputProps('server_labels')}
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
            <MultiSelect
              label="Virtual key"
              data={options(data.data?.virtual_keys, v.virtual_key_ids)}
              searchable
              clearable
              {...form.getInputProps('virtual_key_ids')}
            />
            <TextInput
              label="Text"
              description="In the arguments, the result, the error or the tool name"
              {...form.getInputProps('content_search')}
            />
            <TagsInput
              label="Request id"
              description="The model request that called the tool"
              clearable
              {...form.getInputProps('llm_request_ids')}
            />
            <TimeRangeFields form={form} />
            <LatencyFields form={form} />
            <SortFields
              form={form}
              keys={[
                { value: 'timestamp', label: 'Time' },
                { value: 'latency', label: 'Latency' },
                { value: 'cost', label: 'Cost' },
              ]}
            />
            <PageSizeField form={form} />
          </SimpleGrid>
          <FilterActions onClear={() => apply(readMcpFilters(new URLSearchParams()))} />
        </Stack>
      </form>
    </Paper>
  );
}
