// Process entry: read the environment, boot, drain on SIGTERM/SIGINT.
import { bootGateway, createLogger } from './boot.ts';
import { ConfigError, readEnvSettings } from './config/load.ts';

async function main(): Promise<void> {
  const env = readEnvSettings(process.env);
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
