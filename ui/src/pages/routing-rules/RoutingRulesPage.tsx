// Routing rules: the list in the order the gateway evaluates them (priority first), each with its condition,
// targets, fallbacks and scope, enabled or not; a new rule and (under routing-rules/:id) editing one.
import { Anchor, Badge, Button, Code, Group, Paper, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';
import { api, seg } from '../../api/client.ts';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorAlert, Loading, useApiMutation } from '../../components/feedback.tsx';
import { StaleNotice, useFormVersion } from '../../components/RemoteChange.tsx';
import {
  GOVERNANCE,
  saveAdopting,
  showFieldError,
  useCustomers,
  useDeleteRow,
  useTeams,
  useVirtualKeys,
} from '../virtual-keys/limits.tsx';
import { RuleForm } from './RuleForm.tsx';
import { type RoutingRule, ruleKeys } from './types.ts';

export default function RoutingRulesPage() {
  return (
    <Routes>
      <Route index element={<RuleList />} />
      <Route path="new" element={<NewRule />} />
      <Route path=":id" element={<RuleDetail />} />
    </Routes>
  );
}

function targetText(t: RoutingRule['targets'][number]): string {
  return `${t.provider ?? '(request’s provider)'}/${t.model ?? '(request’s model)'}`;
}

function ScopeText({ rule }: { rule: RoutingRule }) {
  const teams = useTeams();
  const customers = useCustomers();
  const keys = useVirtualKeys(rule.scope === 'virtual_key');
  if (rule.scope === 'global') return <Text size="sm">every request</Text>;
  const id = rule.scope_id ?? '';
  if (rule.scope === 'team') {
    const name = teams.data?.teams.find((t) => t.id === id)?.name ?? id;
    return (
      <Anchor component={Link} to={`/teams/${seg(id)}`} size="sm">
        team {name}
      </Anchor>
    );
  }
  if (rule.scope === 'customer') {
    const name = customers.data?.customers.find((c) => c.id === id)?.name ?? id;
    return (
      <Anchor component={Link} to={`/customers/${seg(id)}`} size="sm">
        customer {name}
      </Anchor>
    );
  }
  return (
    <Anchor component={Link} to={`/virtual-keys/${seg(id)}`} size="sm">
      virtual key {keys.data?.virtual_keys.find((k) => k.id === id)?.name ?? id}
    </Anchor>
  );
}

function RuleList() {
  const list = useQuery({
    queryKey: ruleKeys,
    queryFn: () => api.get<{ routing_rules: RoutingRule[] }>('/governance/routing-rules'),
  });
  const toggle = useApiMutation(
    (v: { rule: RoutingRule; enabled: boolean }) =>
      api.put<RoutingRule>(`/governance/routing-rules/${seg(v.rule.id)}`, { enabled: v.enabled }),
    { invalidate: [GOVERNANCE], success: (r) => `Rule ${r.name} ${r.enabled ? 'enabled' : 'disabled'}` },
  );
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Routing rules</Title>
        <Button component={Link} to="new">
          New routing rule
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        A rule sends the requests its CEL condition matches to other providers or models. Rules run by priority, highest
        first; the first that matches decides.
      </Text>
      <ErrorAlert error={list.error ?? toggle.error} title="Could not load or change the routing rules" />
      {list.isPending ? (
        <Loading what="routing rules" />
      ) : list.data?.routing_rules.length === 0 ? (
        <Text>No routing rule yet: requests go where their model says.</Text>
      ) : (
        <Table striped highlightOnHover aria-label="Routing rules" verticalSpacing="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Priority</Table.Th>
              <Table.Th scope="col">Name</Table.Th>
              <Table.Th scope="col">Condition</Table.Th>
              <Table.Th scope="col">Targets</Table.Th>
              <Table.Th scope="col">Fallbacks</Table.Th>
              <Table.Th scope="col">Scope</Table.Th>
              <Table.Th scope="col">Enabled</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.routing_rules.map((r) => (
              <Table.Tr key={r.id}>
                <Table.Td>{r.priority}</Table.Td>
                <Table.Td>
                  <Anchor component={Link} to={seg(r.id)}>
                    {r.name}
                  </Anchor>
                </Table.Td>
                <Table.Td maw={360}>
                  <Code style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>{r.cel_expression}</Code>
                </Table.Td>
                <Table.Td>
                  <Stack gap={2}>
                    {r.targets.map((t) => (
                      <Text key={targetText(t)} size="sm" component="div">
                        {targetText(t)}{' '}
                        <Badge variant="light" size="xs">
                          weight {t.weight}
                        </Badge>
                      </Text>
                    ))}
                  </Stack>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{r.fallbacks.length > 0 ? r.fallbacks.join(', ') : '—'}</Text>
                </Table.Td>
                <Table.Td>
                  <ScopeText rule={r} />
                </Table.Td>
                <Table.Td>
                  <Switch
                    checked={r.enabled}
                    aria-label={`Enabled: ${r.name}`}
                    disabled={toggle.isPending}
                    onChange={(e) => toggle.mutate({ rule: r, enabled: e.currentTarget.checked })}
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

function NewRule() {
  const navigate = useNavigate();
  const create = useApiMutation(
    (v: { body: Record<string, unknown> }) => api.post<RoutingRule>('/governance/routing-rules', v.body),
    { invalidate: [GOVERNANCE], success: (r) => `Routing rule ${r.name} created` },
  );
  return (
    <Stack>
      <Anchor component={Link} to="/routing-rules" size="sm">
        ← All routing rules
      </Anchor>
      <Title order={2}>New routing rule</Title>
      <Paper withBorder p="md">
        <RuleForm
          submitLabel="Create routing rule"
          saving={create.isPending}
          error={create.error}
          onSubmit={(body, form) =>
            create.mutate(
              { body },
              { onSuccess: () => void navigate('/routing-rules'), onError: (e) => showFieldError(form, e) },
            )
          }
          onCancel={() => void navigate('/routing-rules')}
        />
      </Paper>
    </Stack>
  );
}

function RuleDetail() {
  const id = useParams()['id'] ?? '';
  const rule = useQuery({
    queryKey: [...ruleKeys, id],
    queryFn: () => api.get<RoutingRule>(`/governance/routing-rules/${seg(id)}`),
  });
  const save = useApiMutation(
    (v: { body: Record<string, unknown> }) => api.put<RoutingRule>(`/governance/routing-rules/${seg(id)}`, v.body),
    { invalidate: [GOVERNANCE], success: (r) => `Routing rule ${r.name} saved` },
  );
  const del = useDeleteRow({
    path: `/governance/routing-rules/${seg(id)}`,
    rowKey: [...ruleKeys, id],
    leaveTo: '/routing-rules',
    success: 'Routing rule deleted',
  });
  const data = rule.data;
  const version = useFormVersion(data?.updated_at);
  return (
    <Stack>
      <Anchor component={Link} to="/routing-rules" size="sm">
        ← All routing rules
      </Anchor>
      <Group justify="space-between">
        <Title order={2}>Routing rule {data?.name ?? ''}</Title>
        {data && (
          <ConfirmButton
            label="Delete"
            ariaLabel="Delete routing rule"
            confirm={`Delete the routing rule ${data.name}? Matching requests go where their model says again.`}
            loading={del.isPending}
            onConfirm={() => del.mutate()}
          />
        )}
      </Group>
      <ErrorAlert error={rule.error ?? del.error} title="Could not load or change the routing rule" />
      {rule.isPending && <Loading what="the routing rule" />}
      {data && (
        <Paper withBorder p="md">
          <Stack>
            <StaleNotice what="routing rule" version={version} />
            <RuleForm
              key={version.key}
              existing={data}
              submitLabel="Save routing rule"
              saving={save.isPending}
              error={save.error}
              onDirtyChange={version.setDirty}
              onSubmit={saveAdopting(save, version)}
            />
          </Stack>
        </Paper>
      )}
    </Stack>
  );
}
