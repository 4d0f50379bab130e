// Admin credentials of the private API. Given by flag/environment, or generated on first start and kept in
// <data dir>/credentials.json with mode 0600 so a restart reuses them. Printed once, when generated.

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/**
 * Returns the credentials to use: each value given explicitly wins; the others come from the data
 * directory's file, which is created (0600) with generated values if missing. `generated` is true when
 * the file was created now — the only time the values are printed.
 */
export function loadOrCreateCredentials(
  dataDir: string,
  given: Partial<AdminCredentials>,
): { credentials: AdminCredentials; generated: boolean; file: string } {
  const file = join(dataDir, CREDENTIALS_FILE);
  let stored: AdminCredentials;
  let generated = false;
  if (existsSync(file)) {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const fields = ['adminToken', 'accessKeyId', 'secretAccessKey'] as const;
    for (const field of fields) {
      if (typeof parsed[field] !== 'string' || parsed[field] === '') {
        throw ConfigErrors.credentials(`${file} is missing "${field}"; delete the file to generate new credentials`);
      }
    }
    stored = parsed as unknown as AdminCredentials;
  } else {
    stored = generateCredentials();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
    generated = true;
  }
  return {
    credentials: {
      adminToken: given.adminToken ?? stored.adminToken,
      accessKeyId: given.accessKeyId ?? stored.accessKeyId,
      secretAccessKey: given.secretAccessKey ?? stored.secretAccessKey,
    },
    generated,
    file,
  };
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
