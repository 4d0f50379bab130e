// Starts a real Anteroom node in this process (real HTTP on 127.0.0.1, port 0) for tests, with a clock the
// test controls and fixed admin credentials.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNode, type AnteroomNode, type StartOptions } from '../../src/app.ts';
import type { ServerConfig } from '../../src/config/config.ts';
import type { AdminCredentials } from '../../src/config/credentials.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';

export const TEST_CREDENTIALS: AdminCredentials = {
  adminToken: 'test-admin-token-0123456789abcdef',
  accessKeyId: 'AKARTESTACCESSKEY001',
  secretAccessKey: 'test-secret-access-key-0123456789abcdefgh',
};

/** A clock tests move by hand: `clock.advance(seconds)`. Starts at a fixed, whole second. */
export class TestClock {
  ms: number;
  constructor(startMs = Date.UTC(2026, 10, 22, 12, 0, 0)) {
    this.ms = startMs;
  }
  now = (): number => this.ms;
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

/**
 * A TestClock that follows the wall clock, for nodes whose jobs tick on real time (`jobs: true`): a clock frozen at
 * its start would show every timer the same tick, and the scheduler runs a tick once. advance() moves it ahead.
 */
export function wallClock(): TestClock {
  const clock = new TestClock(Date.now());
  let aheadMs = 0;
  clock.now = () => Date.now() + aheadMs;
  clock.advance = (seconds: number) => {
    aheadMs += seconds * 1000;
  };
  return clock;
}

export interface TestNode extends AnteroomNode {
  url: string;
  privateUrl: string;
  clock: TestClock;
  dataDir: string;
  /** fetch against the public API: path like '/serving_num?event_id=Sample'. */
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Private API with the admin bearer token. */
  admin(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<Response>;
  stop(): Promise<void>;
}

export function testConfig(overrides: Partial<ServerConfig> = {}, dataDir?: string): ServerConfig {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'anteroom-test-'));
  return {
    host: '127.0.0.1',
    port: 0,
    dataDir: dir,
    store: { kind: 'memory' },
    sqliteSynchronous: 'full',
    events: [defaultSettings('Sample')],
    privateBasePath: '/private',
    pollTtl: 1,
    expiryJobIntervalSec: 60,
    metricsJobIntervalSec: 60,
    joinBatchWindowMs: 0,
    logLevel: 'silent',
    logRequests: false,
    ...overrides,
  };
}

export function eventSettings(eventId: string, overrides: Partial<RoomSettings> = {}): RoomSettings {
  return { ...defaultSettings(eventId), ...overrides };
}

export async function startTestNode(
  overrides: Partial<ServerConfig> = {},
  options: Omit<Partial<StartOptions>, 'clock'> & { clock?: TestClock } = {},
): Promise<TestNode> {
  const clock = options.clock ?? new TestClock();
  const config = testConfig(overrides);
  const node = await startNode(config, { credentials: TEST_CREDENTIALS, jobs: false, ...options, clock: clock.now });
  const url = node.publicUrl;
  const json = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body));
  return {
    ...node,
    url,
    privateUrl: node.privateUrl,
    clock,
    dataDir: config.dataDir,
    get: (path, headers = {}) => fetch(`${url}${path}`, { headers }),
    post: (path, body, headers = {}) =>
      fetch(`${url}${path}`, { method: 'POST', body: json(body), headers: { 'content-type': 'application/json', ...headers } }),
    admin: (method, path, body) =>
      fetch(`${node.privateUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: json(body) }),
      }),
    stop: async () => {
      await node.close();
      rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
}
