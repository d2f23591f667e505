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
    });
  });

  it('takes environment variables, and CLI flags over them', () => {
    const config = loadConfig({ PORT: '9000', TETRA_FSYNC: 'always', TETRA_RATE_LIMIT: '0' }, ['--port', '9100', '--data-dir', '/tmp/x']);
    expect(config).toMatchObject({ port: 9100, fsync: 'always', rateLimit: 0, dataDir: '/tmp/x' });
  });

  it.each([
    [{ PORT: 'eighty' }, [], /PORT must be an integer/],
    [{ PORT: '70000' }, [], /PORT must be an integer between 0 and 65535/],
    [{ TETRA_FSYNC: 'sometimes' }, [], /TETRA_FSYNC must be one of batch, always, off/],
    [{}, ['--fsync', 'never'], /--fsync must be one of/],
    [{ TETRA_BODY_LIMIT: '-1' }, [], /TETRA_BODY_LIMIT/],
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
