// Admin credentials of the private API. Given by flag/environment, or generated on first start and kept in
// <data dir>/credentials.json with mode 0600 so a restart reuses them. Printed once, when generated.

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigErrors } from '../domain/errors.ts';
import type { Store } from '../domain/ports/store.ts';

export interface AdminCredentials {
  adminToken: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export const CREDENTIALS_FILE = 'credentials.json';

const ALNUM_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function randomFrom(alphabet: string, length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}

export function generateCredentials(): AdminCredentials {
  return {
    adminToken: randomBytes(32).toString('base64url'),
    // Shaped like an AWS access key ID so tools that check the format accept it.
    accessKeyId: `AKAR${randomFrom(ALNUM_UPPER, 16)}`,
    secretAccessKey: randomBytes(30).toString('base64'),
  };
}

const FIELDS = ['adminToken', 'accessKeyId', 'secretAccessKey'] as const;

/**
 * Returns the credentials to use: each value given explicitly wins; the others come from the data
 * directory's file, generated if the file lacks them. The file (0600) holds exactly the values not given, the
 * ones in use: a value given by flag or environment is never kept there (nor left there from an earlier start,
 * where it would no longer work), and with all three given there is no file. `generated` is true when a value
 * was generated now — the only time values are printed.
 */
export function loadOrCreateCredentials(
  dataDir: string,
  given: Partial<AdminCredentials>,
): { credentials: AdminCredentials; generated: boolean; file: string } {
  const file = join(dataDir, CREDENTIALS_FILE);
  const stored: Partial<Record<(typeof FIELDS)[number], string>> = {};
  const existed = existsSync(file);
  if (existed) {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    for (const field of FIELDS) {
      if (!(field in parsed)) continue;
      if (typeof parsed[field] !== 'string' || parsed[field] === '') {
        throw ConfigErrors.credentials(`${file} has an empty or non-text "${field}"; delete the file to generate new credentials`);
      }
      stored[field] = parsed[field];
    }
  }
  const fresh = generateCredentials();
  let generated = false;
  const credentials = {} as AdminCredentials;
  const kept: Partial<AdminCredentials> = {};
  for (const field of FIELDS) {
    const value = given[field] ?? stored[field] ?? ((generated = true), fresh[field]);
    credentials[field] = value;
    if (given[field] === undefined) kept[field] = value;
  }
  const unchanged = existed && FIELDS.every((field) => kept[field] === stored[field]);
  if (!unchanged) {
    if (Object.keys(kept).length === 0) rmSync(file, { force: true });
    else {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      // Written whole under another name, then renamed over the file: never a half-written file.
      const partial = `${file}.${process.pid}.tmp`;
      writeFileSync(partial, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 });
      chmodSync(partial, 0o600);
      renameSync(partial, file);
    }
  }
  return { credentials, generated, file };
}

/** Name of the generated credentials in a shared store (Redis key <prefix>secret:admin-credentials). */
export const STORED_CREDENTIALS_NAME = 'admin-credentials';

/**
 * The same for a store shared by several nodes (Redis): the generated values live in the store, so every
 * node — and every node started later — uses the same ones, with nothing to copy between machines. The
 * first node to start stores them (`generated`: only it prints them); the others read them. Values given
 * explicitly still win, and when all three are given nothing is stored.
 */
export async function claimStoredCredentials(
  store: Pick<Store, 'claimSecret' | 'description'>,
  given: Partial<AdminCredentials>,
): Promise<{ credentials: AdminCredentials; generated: boolean }> {
  if (given.adminToken && given.accessKeyId && given.secretAccessKey) {
    return { credentials: given as AdminCredentials, generated: false };
  }
  const candidate = JSON.stringify(generateCredentials());
  const storedText = await store.claimSecret(STORED_CREDENTIALS_NAME, candidate);
  const stored = JSON.parse(storedText) as Record<string, unknown>;
  for (const field of ['adminToken', 'accessKeyId', 'secretAccessKey'] as const) {
    if (typeof stored[field] !== 'string' || stored[field] === '') {
      throw ConfigErrors.credentials(
        `the credentials kept in ${store.description} (secret "${STORED_CREDENTIALS_NAME}") are missing "${field}"; ` +
          'delete them to generate new ones',
      );
    }
  }
  const values = stored as unknown as AdminCredentials;
  return {
    credentials: {
      adminToken: given.adminToken ?? values.adminToken,
      accessKeyId: given.accessKeyId ?? values.accessKeyId,
      secretAccessKey: given.secretAccessKey ?? values.secretAccessKey,
    },
    generated: storedText === candidate,
  };
}
