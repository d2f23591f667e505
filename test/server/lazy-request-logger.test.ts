import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazyChildLogger } from '../../server/lazy-request-logger.js';

describe('lazyChildLogger', () => {
  it('writes the same lines as a pino child, bindings included, and makes the child on first use only', async () => {
    const lines: Array<Record<string, unknown>> = [];
    let childrenMade = 0;
    const app = Fastify({
      logger: { level: 'info', stream: { write: (l: string) => lines.push(JSON.parse(l)) } },
      disableRequestLogging: true,
      // The factory under test, over a parent that counts the children made from it.
      childLoggerFactory: (logger, bindings, options) => {
        const counting = Object.create(logger) as typeof logger;
        counting.child = (b, o) => {
          childrenMade++;
          return logger.child(b, o);
        };
        return lazyChildLogger(counting, bindings, options);
      },
    });
    app.get('/quiet', async () => ({ ok: true }));
    app.get('/loud', async (request) => {
      request.log.debug('not written at info');
      request.log.warn({ extra: 1 }, 'written');
      request.log.child({ part: 'sub' }).info('from a grandchild');
      return { level: request.log.level };
    });
    await app.ready();
    expect((await app.inject({ url: '/quiet', headers: { 'x-request-id': 'q1' } })).statusCode).toBe(200);
    expect(childrenMade).toBe(0);
    const loud = await app.inject({ url: '/loud', headers: { 'x-request-id': 'l1' } });
    expect(loud.json()).toEqual({ level: 'info' });
    expect(childrenMade).toBe(1);
    expect(lines.filter((l) => l.reqId !== undefined)).toEqual([
      expect.objectContaining({ level: 40, reqId: expect.any(String), extra: 1, msg: 'written' }),
      expect.objectContaining({ level: 30, reqId: expect.any(String), part: 'sub', msg: 'from a grandchild' }),
    ]);
    await app.close();
  });
});
