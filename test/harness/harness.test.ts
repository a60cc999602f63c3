// The harness itself: the shared servers are reachable, URLs reach child processes, databases are isolated.
import { execFile } from 'node:child_process';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createTestDatabase, testKeyPrefix } from './db.ts';

async function tablesOf(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

describe('test harness', () => {
  it('exposes the server URLs to child processes through the environment', async () => {
    const script = 'console.log(JSON.stringify([process.env.TEST_DATABASE_URL, process.env.TEST_REDIS_URL]))';
    const output = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['-e', script], (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
    expect(JSON.parse(output)).toEqual([inject('databaseUrl'), inject('redisUrl')]);
  });

  it('creates a fresh, isolated database per call', async () => {
    const first = await createTestDatabase();
    const second = await createTestDatabase();
    expect(first).not.toBe(second);
    const client = new pg.Client({ connectionString: first });
    await client.connect();
    await client.query('CREATE TABLE only_in_first (id int)');
    await client.end();
    expect(await tablesOf(first)).toEqual(['only_in_first']);
    expect(await tablesOf(second)).toEqual([]);
  });

  it('hands out distinct key prefixes', () => {
    expect(testKeyPrefix()).not.toBe(testKeyPrefix());
  });
});
