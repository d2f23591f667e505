// The base commit of an A/B bench (http-ab, inproc-ab), checked out next to this checkout.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface BaseCheckout {
  /** The base commit, short. */
  commit: string;
  /** This checkout's HEAD, short. */
  head: string;
  /** This checkout has uncommitted changes to engine/ or server/. */
  dirty: boolean;
  /** The base commit's tree: a temporary git worktree sharing this checkout's node_modules. */
  root: string;
  /** A scratch directory beside it, removed with it. */
  work: string;
  /** Labels for the two versions in tables: the base's, then this checkout's. */
  labels: [base: string, head: string];
  /** What the run compared, for the line above its table. */
  describe(): string;
  /** Removes the worktree and the scratch directory. */
  remove(): void;
}

/** Checks out `base` into a temporary git worktree. */
export function checkoutBase(base: string, prefix: string): BaseCheckout {
  const git = (...args: string[]): string => execFileSync('git', ['-C', repoRoot, ...args], { encoding: 'utf8' }).trim();
  const commit = git('rev-parse', '--short', base);
  const head = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--', 'engine', 'server') !== '';
  const work = mkdtempSync(join(tmpdir(), prefix));
  const root = join(work, 'base');
  execFileSync('git', ['-C', repoRoot, 'worktree', 'add', '--detach', '--force', root, commit], { stdio: 'ignore' });
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  return {
    commit,
    head,
    dirty,
    root,
    work,
    labels: [`base ${commit}`, `this checkout ${head}${dirty ? ' (uncommitted changes)' : ''}`],
    describe: () => `base ${commit} against this checkout (${head}${dirty ? ', with uncommitted changes to engine/ or server/' : ''})`,
    remove: () => {
      execFileSync('git', ['-C', repoRoot, 'worktree', 'remove', '--force', root], { stdio: 'ignore' });
      rmSync(work, { recursive: true, force: true });
    },
  };
}
