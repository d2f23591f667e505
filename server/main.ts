import { mkdirSync } from 'node:fs';
import { isTetraError } from '../engine/errors.js';
import { buildApp } from './app.js';
import { applyHeapGrowth, loadConfig, resolveLogFormat } from './config.js';

/** Starts the service from environment variables and CLI flags; stops cleanly on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`tetradb: ${isTetraError(err) ? err.message : String(err)}\n`);
    process.exit(2);
  }
  applyHeapGrowth(config.heapGrowthPercent);
  // The one place that looks at the terminal: buildApp gets the decision, not the global.
  config = { ...config, logFormat: resolveLogFormat(config.logFormat, process.stdout.isTTY === true) };
  mkdirSync(config.dataDir, { recursive: true });
  const app = await buildApp(config);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests, then checkpointing');
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const url = await app.listen({ port: config.port, host: config.host });
  app.log.info({ url, dataDir: config.dataDir, fsync: config.fsync, logLevel: config.logLevel, slowRequestMs: config.slowRequestMs, heapGrowthPercent: config.heapGrowthPercent }, 'tetradb ready');
  // Started by a parent with an IPC channel (a process manager, the test harness): tell it where
  // this process listens. With --port 0 that is the only way to know, and it names this process's
  // own socket, never another that took a port the parent had picked.
  process.send?.({ tetradb: 'ready', url });
}

main().catch((err: unknown) => {
  process.stderr.write(`tetradb failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
