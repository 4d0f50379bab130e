// credentials.json holds only credentials that work: the generated ones in use, never a value a flag or the
// environment replaced (that one would answer 403).

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadOrCreateCredentials } from '../../src/config/credentials.ts';

const root = mkdtempSync(join(tmpdir(), 'anteroom-credentials-'));
after(() => rmSync(root, { recursive: true, force: true }));
const fileOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')) as Record<string, string>;

describe('loadOrCreateCredentials: credentials.json', () => {
  it('a first start generates all three into a 0600 file; the next start reuses them and generates nothing', () => {
    const dir = join(root, 'first');
    const first = loadOrCreateCredentials(dir, {});
    assert.equal(first.generated, true);
    assert.deepEqual(fileOf(dir), { ...first.credentials });
    assert.equal(statSync(first.file).mode & 0o777, 0o600);
    const second = loadOrCreateCredentials(dir, {});
    assert.equal(second.generated, false);
    assert.deepEqual(second.credentials, first.credentials);
  });

  it('with --admin-token given, the file holds no admin token (only the generated access key pair)', () => {
    const dir = join(root, 'given-token');
    const { credentials } = loadOrCreateCredentials(dir, { adminToken: 'given-admin-token-0123456789abcdef' });
    assert.equal(credentials.adminToken, 'given-admin-token-0123456789abcdef');
    assert.deepEqual(fileOf(dir), { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey });
  });

  it('a token given later drops the generated one from the file; started without it again, a new one is generated and kept', () => {
    const dir = join(root, 'later');
    const before = loadOrCreateCredentials(dir, {}).credentials;
    const given = loadOrCreateCredentials(dir, { adminToken: 'given-admin-token-0123456789abcdef' });
    assert.equal(given.generated, false);
    assert.deepEqual(fileOf(dir), { accessKeyId: before.accessKeyId, secretAccessKey: before.secretAccessKey });
    const again = loadOrCreateCredentials(dir, {});
    assert.equal(again.generated, true, 'the new token is printed');
    assert.notEqual(again.credentials.adminToken, before.adminToken);
    assert.equal(again.credentials.accessKeyId, before.accessKeyId);
    assert.deepEqual(fileOf(dir), { ...again.credentials });
  });

  it('with all three given there is no file (an earlier one is removed)', () => {
    const dir = join(root, 'all-given');
    loadOrCreateCredentials(dir, {});
    const given = { adminToken: 'given-admin-token-0123456789abcdef', accessKeyId: 'AKARGIVEN0000000001', secretAccessKey: 'given-secret' };
    const result = loadOrCreateCredentials(dir, given);
    assert.deepEqual(result.credentials, given);
    assert.equal(existsSync(result.file), false);
  });

  it('a file with an empty value is refused, naming the field and the file', () => {
    const dir = join(root, 'empty');
    loadOrCreateCredentials(dir, {});
    const file = join(dir, 'credentials.json');
    const text = readFileSync(file, 'utf8').replace(/"adminToken": "[^"]*"/, '"adminToken": ""');
    writeFileSync(file, text);
    assert.throws(() => loadOrCreateCredentials(dir, {}), /credentials\.json has an empty or non-text "adminToken"/);
  });
});
