// Process entry: read the environment, boot, drain on SIGTERM/SIGINT.
import { bootGateway, createLogger } from './boot.ts';
import { ConfigError, readEnvSettings } from './config/load.ts';
import { providerCatalog } from './providers/registry.ts';
import { upgradeDryRun } from './state/upgrade/index.ts';

async function main(): Promise<void> {
  const env = readEnvSettings(process.env);
  if (process.argv.includes('--dry-run') || ['1', 'true'].includes(process.env['GATEWAY_UPGRADE_DRY_RUN'] ?? '')) {
    // The 1.4.x upgrade's dry run: prints what the next start would change, writes nothing, does not serve.
    const lines = await upgradeDryRun({
      databaseUrl: env.databaseUrl,
      sqliteFile: env.import14Sqlite,
      catalog: providerCatalog,
    });
    process.stdout.write(`${lines.join('\n')}\n`);
    return;
  }
  const logger = createLogger(env.logLevel);
  const gw = await bootGateway({
    env,
    logger,
    onGeneratedAdminKey: (key) =>
      // Printed once, on purpose: it is stored only as a hash.
      process.stdout.write(
        `\n  Admin API key (shown once, stored hashed; set GATEWAY_ADMIN_API_KEY to choose your own):\n  ${key}\n\n`,
      ),
  });
  logger.info(
    { address: gw.url, database: gw.rt.state.db.kind, coordination: gw.rt.state.coord.kind },
    'gateway listening',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    await gw.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  const msg =
    err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`gateway failed to start: ${msg}\n`);
  process.exit(1);
});
