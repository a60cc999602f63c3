// Labelled totals in a row of cards: the request logs' totals and the MCP tool logs' stats (kept apart from the
// charts, so a page showing totals alone does not load the chart library).
import { Paper, SimpleGrid, Text } from '@mantine/core';

export function TotalsGrid({ cards }: { cards: [string, string][] }) {
  return (
    <SimpleGrid cols={{ base: 2, sm: cards.length }} spacing="sm" role="group" aria-label="Totals">
      {cards.map(([label, value]) => (
        <Paper withBorder p="sm" key={label}>
          <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
            {label}
          </Text>
          <Text fw={700} size="lg" aria-label={`${label}: ${value}`}>
            {value}
          </Text>
        </Paper>
      ))}
    </SimpleGrid>
  );
}
