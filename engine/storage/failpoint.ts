/**
 * Crash-test hooks. When TETRA_FAILPOINT names a step, the process SIGKILLs itself there, so
 * tests can prove that a crash at every step of a checkpoint or compaction loses nothing.
 * The variable is read once; with it unset each call is one comparison.
 */
const armed = process.env.TETRA_FAILPOINT ?? '';

/** Kills this process with SIGKILL when `name` is the armed failpoint. */
export function failpoint(name: string): void {
  if (armed !== '' && armed === name) {
    process.kill(process.pid, 'SIGKILL');
  }
}

/** True when `name` is the armed failpoint (for steps that must do half their work first). */
export function failpointArmed(name: string): boolean {
  return armed !== '' && armed === name;
}
