// What an explorer's live feed could not place in its list, with the refresh that would: rows past the page size,
// rows only the gateway can place (text search, another order), messages the gateway skipped, a dropped connection.
import { Alert, Button, Group, Stack, Text } from '@mantine/core';
import { formatCount } from './format.ts';
import type { LiveFeed } from './useLiveRows.ts';

/** What the list holds, singular and plural ("request", "requests"). */
export interface Noun {
  one: string;
  many: string;
}

const counted = (n: number, noun: Noun) => `${formatCount(n)} ${n === 1 ? noun.one : noun.many}`;

/**
 * `skippedApart`: say skipped messages that do not name their log (from a gateway pod older than `log_type`) apart
 * from the new rows (the MCP tool-log page, for which they may be request logs).
 */
export function LiveNotice(props: {
  feed: LiveFeed<{ id: string }>;
  noun: Noun;
  onRefresh: () => void;
  skippedApart?: boolean;
}) {
  const { feed, noun } = props;
  const lines: string[] = [];
  const more = props.skippedApart ? feed.more - feed.unattributed : feed.more;
  if (more > 0) lines.push(`${formatCount(more)} more new ${more === 1 ? noun.one : noun.many}`);
  if (props.skippedApart && feed.unattributed > 0) {
    lines.push(
      `${counted(feed.unattributed, { one: 'live update was', many: 'live updates were' })} skipped by the gateway`,
    );
  }
  if (feed.unsure > 0) {
    lines.push(
      `${formatCount(feed.unsure)} new ${feed.unsure === 1 ? noun.one : noun.many} that may match these filters ` +
        '(text search and sort order are checked by the gateway)',
    );
  }
  if (feed.interrupted) lines.push(`The live connection was interrupted: ${noun.many} logged meanwhile are not shown`);
  if (lines.length === 0) return null;
  return (
    <Alert color="blue" role="status" aria-label={`New ${noun.many} not shown`} py="xs">
      <Group justify="space-between" wrap="nowrap">
        <Stack gap={2}>
          {lines.map((l) => (
            <Text size="sm" key={l}>
              {l} — refresh to see them.
            </Text>
          ))}
        </Stack>
        <Button size="xs" variant="light" onClick={props.onRefresh}>
          Refresh the list
        </Button>
      </Group>
    </Alert>
  );
}
