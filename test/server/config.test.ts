import { describe, expect, it } from 'vitest';
import { loadConfig, SETTINGS } from '../../server/config.js';
import { readFileSync } from 'node:fs';

describe('configuration', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({}, [])).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: './data',
      fsync: 'batch',
      bodyLimit: 1048576,
      rateLimit: 1000,
      quotaBytes: 1073741824,
      cacheBytes: 268435456,
      dirtyBytes: 134217728,
      snapshotMaxAgeMs: 300000,
      logLevel: 'info',
      logFormat: 'auto',
      slowRequestMs: 1000,
    });
  });

  it('takes environment variables, and CLI flags over them', () => {
    const config = loadConfig({ PORT: '9000', TETRA_FSYNC: 'always', TETRA_RATE_LIMIT: '0', TETRA_LOG_FORMAT: 'json', TETRA_SLOW_REQUEST_MS: '0' }, ['--port', '9100', '--data-dir', '/tmp/x', '--log-format', 'pretty']);
    expect(config).toMatchObject({ port: 9100, fsync: 'always', rateLimit: 0, dataDir: '/tmp/x', logFormat: 'pretty', slowRequestMs: 0 });
    expect(loadConfig({ TETRA_HEAP_GROWTH_PERCENT: '20' }, []).heapGrowthPercent).toBe(20);
    expect(loadConfig({ TETRA_HEAP_GROWTH_PERCENT: '20' }, ['--heap-growth-percent', '0']).heapGrowthPercent).toBe(0);
  });

  it.each([
    [{ PORT: 'eighty' }, [], /PORT must be an integer/],
    [{ PORT: '70000' }, [], /PORT must be an integer between 0 and 65535/],
    [{ TETRA_FSYNC: 'sometimes' }, [], /TETRA_FSYNC must be one of batch, always, off/],
    [{}, ['--fsync', 'never'], /--fsync must be one of/],
    [{ TETRA_BODY_LIMIT: '-1' }, [], /TETRA_BODY_LIMIT/],
    [{ TETRA_LOG_FORMAT: 'fancy' }, [], /TETRA_LOG_FORMAT must be one of auto, pretty, json/],
    [{}, ['--slow-request-ms', 'soon'], /--slow-request-ms must be an integer between 0 and 3600000/],
    [{ TETRA_SLOW_REQUEST_MS: '1.5' }, [], /TETRA_SLOW_REQUEST_MS must be an integer/],
    [{ TETRA_DIRTY_BYTES: '1000' }, [], /TETRA_DIRTY_BYTES must be an integer between 1048576/],
    [{}, ['--snapshot-max-ms', 'later'], /--snapshot-max-ms must be an integer between 0/],
    [{ TETRA_HEAP_GROWTH_PERCENT: '500' }, [], /TETRA_HEAP_GROWTH_PERCENT must be an integer between 0 and 300/],
  ] as const)('rejects %j %j with a message naming the setting', (env, argv, message) => {
    expect(() => loadConfig(env, [...argv])).toThrow(message);
  });

  it('rejects unknown flags', () => {
    expect(() => loadConfig({}, ['--prot', '1'])).toThrow();
  });

  it('documents every setting in docs/configuration.md', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    for (const setting of Object.values(SETTINGS)) {
      expect(doc, setting.env).toContain(`\`${setting.env}\``);
      expect(doc, setting.flag).toContain(`\`--${setting.flag}\``);
    }
  });
});
