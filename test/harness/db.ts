// Per-test-file isolation on the shared harness servers: a fresh Postgres database, a unique Redis key prefix.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

function randomName(prefix: string): string {
  return `${prefix}${randomBytes(6).toString('hex')}`;
}

/** Replaces the database name in a Postgres URL. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Creates an empty database on the harness Postgres and returns its URL (dropped with the server at the end). */
export async function createTestDatabase(): Promise<string> {
  const adminUrl = inject('databaseUrl');
  const name = randomName('test_');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    // The name is generated above from hex digits only, so quoting it as an identifier is safe.
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  return withDatabase(adminUrl, name);
}

/** A unique key prefix so test files sharing the harness Redis never see each other's keys or channels. */
export function testKeyPrefix(): string {
  return `${randomName('t')}:`;
}
