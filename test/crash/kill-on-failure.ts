import type { ServerProcess } from '../helpers/server-process.js';

/**
 * Runs `step` against a server the test started; when it throws, SIGKILLs the server and waits
 * for it to exit before rethrowing, so a failed check leaves no server running on the data
 * directory that afterAll removes.
 */
export async function killOnFailure<T>(server: ServerProcess, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    server.child.kill('SIGKILL');
    await server.exited;
    throw err;
  }
}
