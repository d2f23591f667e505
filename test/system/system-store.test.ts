import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { SystemStore, type Principal } from '../../engine/system/index.js';
import { tempDir } from '../helpers/temp-dir.js';

const cache = new PageCache<TreeNode>(4 * 1024 * 1024);
const dirs: Array<{ remove: () => void }> = [];
const open: SystemStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) d.remove();
});

async function fresh(): Promise<{ system: SystemStore; path: string }> {
  const dir = tempDir('system');
  dirs.push(dir);
  const system = await SystemStore.open({ dir: dir.path, cache });
  open.push(system);
  return { system, path: dir.path };
}

/** Closes `system` and opens the same directory again. */
async function reopen(system: SystemStore, path: string): Promise<SystemStore> {
  open.splice(open.indexOf(system), 1);
  await system.close();
  const again = await SystemStore.open({ dir: path, cache });
  open.push(again);
  return again;
}

/** The bytes of every file under `dir`, concatenated. */
function filesUnder(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    parts.push(statSync(p).isDirectory() ? filesUnder(p) : readFileSync(p));
  }
  return Buffer.concat(parts);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const KEY = /^tetra_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Replaces one character of the key's secret part at `index` from the end. */
function tamper(apiKey: string, fromEnd = 1): string {
  const i = apiKey.length - fromEnd;
  const c = apiKey[i] === 'A' ? 'B' : 'A';
  return apiKey.slice(0, i) + c + apiKey.slice(i + 1);
}

describe('SystemStore.signup', () => {
  it('creates a user, a tenant and a first key, and returns them', async () => {
    const { system } = await fresh();
    const out = await system.signup({ orgName: 'Acme Inc', email: 'alice@example.com' });
    expect(out.user).toEqual({ id: expect.stringMatching(/^u_[0-9a-f]{20}$/), email: 'alice@example.com', createdAt: expect.stringMatching(ISO) });
    expect(out.tenant).toEqual({ id: expect.stringMatching(/^t_[0-9a-f]{20}$/), name: 'Acme Inc', createdAt: out.user.createdAt });
    expect(out.user.id).toMatch(SAFE_ID);
    expect(out.tenant.id).toMatch(SAFE_ID);
    expect(out.apiKey).toMatch(KEY);
    expect(out.key).toEqual({ id: KEY.exec(out.apiKey)![1], name: null, createdAt: out.user.createdAt, createdBy: out.user.id, lastUsedAt: null });
    expect(system.getTenant(out.tenant.id)).toEqual(out.tenant);
    expect(system.listTenantIds()).toEqual([out.tenant.id]);
    expect(system.listKeys(out.tenant.id)).toEqual([out.key]);
    expect(system.authenticate(out.apiKey)).toEqual({ tenantId: out.tenant.id, userId: out.user.id, keyId: out.key.id });
  });

  it.each([
    ['  Alice@Example.COM ', 'alice@example.com'],
    ['BOB.SMITH+tag@Mail.Example.org', 'bob.smith+tag@mail.example.org'],
    ['\tx@y.io\n', 'x@y.io'],
  ])('normalises email %j to %j and trims orgName', async (email, expected) => {
    const { system } = await fresh();
    const out = await system.signup({ orgName: '  Org  ', email });
    expect(out.user.email).toBe(expected);
    expect(out.tenant.name).toBe('Org');
  });

  const badEmails: unknown[] = [
    undefined,
    null,
    42,
    { email: 'a@b.co' },
    '',
    '   ',
    'plainaddress',
    '@example.com',
    'alice@',
    'alice@localhost',
    'alice@@example.com',
    'a@b@example.com',
    'alice smith@example.com',
    'alice@exa mple.com',
    '.alice@example.com',
    'alice.@example.com',
    'al..ice@example.com',
    'alice@example..com',
    'alice@-example.com',
    'alice@example.com.',
    'alice@1.2',
    '"alice"@example.com',
    'ålice@example.com',
    `${'a'.repeat(65)}@example.com`,
    `a@${'b'.repeat(64)}.com`,
    `${'a'.repeat(64)}@${'b.'.repeat(95)}com`, // 64 + 1 + 193 = 258 > 254
  ];
  it.each(badEmails.map((e) => [e]))('rejects email %j with VALIDATION_FAILED naming the field', async (email) => {
    const { system } = await fresh();
    await expect(system.signup({ orgName: 'Org', email })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: 'email must be a valid email address' });
    expect(system.listTenantIds()).toEqual([]);
  });

  it('accepts the longest valid addresses', async () => {
    const { system } = await fresh();
    const local = 'a'.repeat(64);
    const email = `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.io`; // 254 chars
    expect(email).toHaveLength(254);
    await expect(system.signup({ orgName: 'Org', email })).resolves.toMatchObject({ user: { email } });
  });

  const badOrgNames: unknown[] = [undefined, null, 7, true, ['Org'], '', '    ', 'x'.repeat(201), ` ${'🙂'.repeat(201)} `];
  it.each(badOrgNames.map((n) => [n]))('rejects orgName %j with VALIDATION_FAILED naming the field', async (orgName) => {
    const { system } = await fresh();
    await expect(system.signup({ orgName, email: 'a@example.com' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'orgName must be a string of 1 to 200 characters',
    });
    expect(system.listTenantIds()).toEqual([]);
  });

  it('counts orgName in characters, not UTF-16 units', async () => {
    const { system } = await fresh();
    const name = '🙂'.repeat(200);
    await expect(system.signup({ orgName: name, email: 'a@example.com' })).resolves.toMatchObject({ tenant: { name } });
  });

  it('writes nothing for invalid input, even after reopen', async () => {
    const { system, path } = await fresh();
    await expect(system.signup({ orgName: '', email: 'a@example.com' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(system.signup({ orgName: 'Org', email: 'nope' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(system.signup(null as unknown as { orgName: unknown; email: unknown })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    const again = await reopen(system, path);
    expect(again.listTenantIds()).toEqual([]);
    // The rejected email was not reserved.
    await expect(again.signup({ orgName: 'Org', email: 'a@example.com' })).resolves.toBeDefined();
  });

  it('refuses an email already registered, in any case, with CONFLICT', async () => {
    const { system } = await fresh();
    await system.signup({ orgName: 'First', email: 'alice@example.com' });
    await expect(system.signup({ orgName: 'Second', email: ' ALICE@Example.com' })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(system.listTenantIds()).toHaveLength(1);
  });

  it('lets exactly one of many concurrent signups with one email succeed', async () => {
    const { system } = await fresh();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => system.signup({ orgName: `Org ${i}`, email: i % 2 ? 'Race@Example.com' : 'race@example.com' })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(9);
    for (const r of lost) expect(r.reason).toMatchObject({ code: 'CONFLICT' });
    expect(system.listTenantIds()).toHaveLength(1);
  });

  it('gives concurrent signups with different emails their own tenants', async () => {
    const { system } = await fresh();
    const outs = await Promise.all(Array.from({ length: 20 }, (_, i) => system.signup({ orgName: `Org ${i}`, email: `user${i}@example.com` })));
    expect(new Set(outs.map((o) => o.tenant.id)).size).toBe(20);
    expect(new Set(outs.map((o) => o.key.id)).size).toBe(20);
    expect(system.listTenantIds().sort()).toEqual(outs.map((o) => o.tenant.id).sort());
    for (const o of outs) expect(system.authenticate(o.apiKey)?.tenantId).toBe(o.tenant.id);
  });
});

describe('API keys', () => {
  it('have the documented shape with a 256-bit random secret', async () => {
    const { system } = await fresh();
    const { apiKey } = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    const principal = system.authenticate(apiKey)!;
    const keys = [apiKey];
    for (let i = 0; i < 50; i++) keys.push((await system.createKey(principal)).apiKey);
    const secrets = new Set<string>();
    for (const key of keys) {
      const m = KEY.exec(key);
      expect(m).not.toBeNull();
      const secret = Buffer.from(m![2]!, 'base64url');
      expect(secret.length * 8).toBeGreaterThanOrEqual(128);
      secrets.add(m![2]!);
    }
    expect(secrets.size).toBe(keys.length);
  });

  it('authenticate accepts the key and refuses bad, tampered and malformed ones', async () => {
    const { system } = await fresh();
    const { apiKey, user, tenant, key } = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    const [, keyId, secret] = KEY.exec(apiKey)!;
    const other = await system.signup({ orgName: 'Other', email: 'b@example.com' });
    expect(system.authenticate(apiKey)).toEqual({ tenantId: tenant.id, userId: user.id, keyId: key.id });
    const refused: Array<[string, unknown]> = [
      ['empty', ''],
      ['prefix only', 'tetra_'],
      ['secret tampered at the end', tamper(apiKey)],
      ['secret tampered at the start', tamper(apiKey, 43)],
      ['unknown key id', `tetra_${'0'.repeat(16)}_${secret}`],
      ['another key id with this secret', `tetra_${other.key.id}_${secret}`],
      ['upper-case key id', `tetra_${keyId!.toUpperCase()}_${secret}`],
      ['wrong prefix', `tetrb_${keyId}_${secret}`],
      ['upper-case prefix', apiKey.replace('tetra_', 'TETRA_')],
      ['truncated', apiKey.slice(0, -1)],
      ['extended', `${apiKey}A`],
      ['with whitespace', ` ${apiKey}`],
      ['with a Bearer prefix', `Bearer ${apiKey}`],
      ['wrong separator', `tetra_${keyId}-${secret}`],
      ['non-alphabet character', `${apiKey.slice(0, -1)}=`],
      ['huge', 'x'.repeat(1_000_000)],
      ['not a string', 12345],
      ['undefined', undefined],
    ];
    for (const [what, presented] of refused) expect(system.authenticate(presented as string), what).toBeUndefined();
  });

  it('parses keys whose secret contains underscores', async () => {
    const { system } = await fresh();
    const { apiKey } = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    const principal = system.authenticate(apiKey)!;
    // About half of 43-character base64url secrets contain an underscore; make sure some do.
    let withUnderscore = 0;
    for (let i = 0; i < 40 && withUnderscore < 3; i++) {
      const { apiKey: k } = await system.createKey(principal);
      if (KEY.exec(k)![2]!.includes('_')) {
        withUnderscore++;
        expect(system.authenticate(k)?.keyId).toBe(KEY.exec(k)![1]);
      }
    }
    expect(withUnderscore).toBeGreaterThan(0);
  });

  it('createKey adds a named key that lists newest first, without secrets or hashes', async () => {
    const { system } = await fresh();
    const first = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    const principal = system.authenticate(first.apiKey)!;
    const ci = await system.createKey(principal, '  ci  ');
    const unnamed = await system.createKey(principal, null);
    const deploy = await system.createKey(principal, 'deploy');
    expect(ci.key).toMatchObject({ name: 'ci', createdBy: first.user.id, lastUsedAt: null, createdAt: expect.stringMatching(ISO) });
    expect(unnamed.key.name).toBeNull();
    expect(system.authenticate(ci.apiKey)).toEqual({ ...principal, keyId: ci.key.id });
    const listed = system.listKeys(first.tenant.id);
    expect(listed.map((k) => k.id)).toEqual([deploy.key.id, unnamed.key.id, ci.key.id, first.key.id]);
    for (const k of listed) expect(Object.keys(k).sort()).toEqual(['createdAt', 'createdBy', 'id', 'lastUsedAt', 'name']);
    const json = JSON.stringify(listed);
    for (const k of [first, ci, unnamed, deploy]) expect(json).not.toContain(KEY.exec(k.apiKey)![2]);
    expect(system.listKeys('t_nosuchtenant')).toEqual([]);
  });

  it('whenDurable covers keys created and revoked by requests still in flight', async () => {
    const { system } = await fresh();
    const first = await system.signup({ orgName: 'Org', email: 'durable@example.com' });
    const principal = system.authenticate(first.apiKey)!;
    expect(system.whenDurable()).toBeUndefined();
    let created = false;
    const pending = system.createKey(principal, 'in flight').then((k) => {
      created = true;
      return k;
    });
    // The listing already shows the key; whenDurable is what a response waits for.
    expect(system.listKeys(first.tenant.id)).toHaveLength(2);
    const fence = system.whenDurable();
    expect(fence).toBeInstanceOf(Promise);
    await fence;
    const key = await pending;
    expect(created).toBe(true);
    let revoked = false;
    const revoking = system.revokeKey(first.tenant.id, key.key.id).then(() => (revoked = true));
    // A second revocation of the same key reports NOT_FOUND only once the first is durable.
    await expect(system.revokeKey(first.tenant.id, key.key.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(system.whenDurable()).toBeUndefined();
    await revoking;
    expect(revoked).toBe(true);
  });

  it.each([[''], ['   '], ['x'.repeat(101)], [42], [{}], [['ci']], [false]])('createKey rejects name %j with VALIDATION_FAILED', async (name) => {
    const { system } = await fresh();
    const { apiKey, tenant } = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    await expect(system.createKey(system.authenticate(apiKey)!, name)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'name must be a string of 1 to 100 characters',
    });
    expect(system.listKeys(tenant.id)).toHaveLength(1);
  });

  it('createKey refuses a principal whose key was revoked meanwhile', async () => {
    const { system } = await fresh();
    const { apiKey, tenant, key } = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    const principal = system.authenticate(apiKey)!;
    await system.createKey(principal);
    await system.revokeKey(tenant.id, key.id);
    await expect(system.createKey(principal)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    const forged: Principal = { ...principal, tenantId: 't_someoneelse' };
    await expect(system.createKey(forged)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('revokeKey stops the key at once and drops it from the listing', async () => {
    const { system } = await fresh();
    const { apiKey, tenant, key } = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    const spare = await system.createKey(system.authenticate(apiKey)!, 'spare');
    const revoking = system.revokeKey(tenant.id, key.id);
    // Refused before the revocation is even durable.
    expect(system.authenticate(apiKey)).toBeUndefined();
    await revoking;
    expect(system.authenticate(apiKey)).toBeUndefined();
    expect(system.authenticate(spare.apiKey)?.keyId).toBe(spare.key.id);
    expect(system.listKeys(tenant.id).map((k) => k.id)).toEqual([spare.key.id]);
    // Revoking twice: the key no longer exists for the tenant.
    await expect(system.revokeKey(tenant.id, key.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it.each([
    ['another tenant’s key', 'other'],
    ['an unknown key id', '0123456789abcdef'],
    ['a malformed key id', '../../etc'],
    ['an empty key id', ''],
  ])('revokeKey of %s is NOT_FOUND and changes nothing', async (_what, which) => {
    const { system } = await fresh();
    const mine = await system.signup({ orgName: 'Mine', email: 'a@example.com' });
    const theirs = await system.signup({ orgName: 'Theirs', email: 'b@example.com' });
    const keyId = which === 'other' ? theirs.key.id : which;
    await expect(system.revokeKey(mine.tenant.id, keyId)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(system.authenticate(theirs.apiKey)?.tenantId).toBe(theirs.tenant.id);
    expect(system.authenticate(mine.apiKey)?.tenantId).toBe(mine.tenant.id);
    expect(system.listKeys(theirs.tenant.id)).toHaveLength(1);
  });

  it('records lastUsedAt on use and keeps it across reopen', async () => {
    const { system, path } = await fresh();
    const { apiKey, tenant } = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    const before = Date.now();
    system.authenticate(apiKey);
    const used = system.listKeys(tenant.id)[0]!.lastUsedAt;
    expect(used).toMatch(ISO);
    expect(Date.parse(used!)).toBeGreaterThanOrEqual(before);
    const again = await reopen(system, path);
    expect(again.listKeys(tenant.id)[0]!.lastUsedAt).toBe(used);
  });
});

describe('SystemStore persistence and secrecy', () => {
  it('never writes the plaintext key or its secret to disk', async () => {
    const { system, path } = await fresh();
    const keys: string[] = [];
    const first = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    keys.push(first.apiKey);
    const principal = system.authenticate(first.apiKey)!;
    for (let i = 0; i < 5; i++) keys.push((await system.createKey(principal, `k${i}`)).apiKey);
    const hasSecret = (bytes: Buffer) => keys.some((k) => bytes.includes(k) || bytes.includes(KEY.exec(k)![2]!) || bytes.includes(Buffer.from(KEY.exec(k)![2]!, 'base64url')));
    // While open, the batches sit in the WAL ...
    const live = filesUnder(path);
    expect(live.includes('a@example.com')).toBe(true); // the scan does see stored data
    expect(hasSecret(live)).toBe(false);
    // ... and after close, in the page file.
    open.splice(open.indexOf(system), 1);
    await system.close();
    const closed = filesUnder(path);
    expect(closed.includes('a@example.com')).toBe(true);
    expect(hasSecret(closed)).toBe(false);
  });

  it('keeps users, tenants, keys and revocations across close and reopen', async () => {
    const { system, path } = await fresh();
    const a = await system.signup({ orgName: 'Alpha', email: 'a@example.com' });
    const b = await system.signup({ orgName: 'Beta', email: 'b@example.com' });
    const pa = system.authenticate(a.apiKey)!;
    const k1 = await system.createKey(pa, 'one');
    const k2 = await system.createKey(pa, 'two');
    await system.revokeKey(a.tenant.id, k1.key.id);
    const listedBefore = system.listKeys(a.tenant.id);

    const again = await reopen(system, path);
    // Before any authenticate() on the reopened store, which would move lastUsedAt.
    expect(again.listKeys(a.tenant.id)).toEqual(listedBefore);
    expect(again.listTenantIds().sort()).toEqual([a.tenant.id, b.tenant.id].sort());
    expect(again.getTenant(a.tenant.id)).toEqual(a.tenant);
    expect(again.getTenant(b.tenant.id)).toEqual(b.tenant);
    expect(again.getTenant('t_missing')).toBeUndefined();
    expect(again.authenticate(a.apiKey)).toEqual(pa);
    expect(again.authenticate(b.apiKey)?.tenantId).toBe(b.tenant.id);
    expect(again.authenticate(k1.apiKey)).toBeUndefined();
    expect(again.authenticate(k2.apiKey)?.keyId).toBe(k2.key.id);
    await expect(again.signup({ orgName: 'Again', email: 'A@example.com' })).rejects.toMatchObject({ code: 'CONFLICT' });
    // Keys created after reopen still list newest first.
    const k3 = await again.createKey(again.authenticate(a.apiKey)!, 'three');
    expect(again.listKeys(a.tenant.id).map((k) => k.id)).toEqual([k3.key.id, k2.key.id, a.key.id]);
    await expect(again.revokeKey(a.tenant.id, k1.key.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('refuses work after close with UNAVAILABLE', async () => {
    const { system } = await fresh();
    const { apiKey, tenant } = await system.signup({ orgName: 'Org', email: 'a@example.com' });
    open.splice(open.indexOf(system), 1);
    await system.close();
    await system.close(); // idempotent
    expect(() => system.authenticate(apiKey)).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
    expect(() => system.listKeys(tenant.id)).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
    await expect(system.signup({ orgName: 'Org', email: 'b@example.com' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
