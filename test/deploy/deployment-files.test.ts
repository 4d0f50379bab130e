// The deployment files (Dockerfile, compose.yaml, the systemd unit and their example environments) name flags,
// environment variables, paths and room settings of `anteroom serve`; each must exist, or the file would
// start a server that refuses its own configuration. No container engine runs here, so the image is not
// built: these checks are what keeps the files true. The systemd unit goes through `systemd-analyze verify`.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { serveCommand } from '../../src/cli/serve-command.ts';
import { parseRoomSettings } from '../../src/domain/room-settings.ts';

const run = promisify(execFile);
const repoFile = (path: string) => new URL(`../../${path}`, import.meta.url);
const read = (path: string) => readFileSync(repoFile(path), 'utf8');

const serve = serveCommand();
const FLAGS = new Set(serve.options.map((o) => o.long));
const ENV_VARS = new Set(serve.options.map((o) => o.envVar).filter((v) => v !== undefined));
// Variables that are not flags but that the files may set.
const OTHER_ENV = new Set(['NODE_ENV']);

const manifest = JSON.parse(read('package.json')) as { name: string; bin: Record<string, string> };
/** Where `npm install anteroom-server` puts the command, relative to the install prefix. */
const INSTALLED_BIN = `node_modules/${manifest.name}/${manifest.bin.anteroom}`;

function unknownFlags(flags: Iterable<string>): string[] {
  return [...flags].filter((f) => !FLAGS.has(f));
}
function unknownEnv(names: Iterable<string>): string[] {
  return [...names].filter((n) => !ENV_VARS.has(n) && !OTHER_ENV.has(n));
}
const flagsIn = (words: string[]) => words.filter((w) => w.startsWith('--')).map((w) => w.split('=')[0]!);
const envNamesIn = (text: string) => [...text.matchAll(/^\s*#?\s*(?:ENV\s+|Environment=)?(ANTEROOM_[A-Z0-9_]+)=/gm)].map((m) => m[1]!);

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: unknown;
}
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> };
const anteroomServices = Object.entries(compose.services).filter(([, s]) => s.image === 'anteroom:local');

describe('deployment files name only what `anteroom serve` has', () => {
  it('Dockerfile: multi-stage, Node 24, non-root, healthcheck on /readyz, the installed package run with serve', () => {
    const dockerfile = read('Dockerfile');
    assert.ok((dockerfile.match(/^FROM /gm) ?? []).length >= 2, 'multi-stage');
    assert.match(dockerfile, /^ARG NODE_IMAGE=node:24[-.\w]*$/m);
    const user = /^USER (\S+)$/m.exec(dockerfile)?.[1];
    assert.ok(user && user !== 'root' && user !== '0', 'runs as a non-root user');
    assert.match(dockerfile, /^HEALTHCHECK .*\n?.*\/readyz/m);
    assert.ok(dockerfile.includes(`ENTRYPOINT ["node", "/opt/anteroom/${INSTALLED_BIN}"]`), `the entry point runs ${INSTALLED_BIN}`);
    assert.match(dockerfile, /^CMD \["serve"\]$/m);
    // ENV lines continue with backslashes: every ANTEROOM_ name in the file.
    const names = [...dockerfile.matchAll(/\b(ANTEROOM_[A-Z0-9_]+)=/g)].map((m) => m[1]!);
    assert.ok(names.length >= 3);
    assert.deepEqual(unknownEnv(names), []);
  });

  it('compose.yaml: two nodes and a gate on one Redis with AOF, the gate in front of the sample site', () => {
    const redis = compose.services.redis!;
    assert.deepEqual(redis.command?.slice(0, 3), ['redis-server', '--appendonly', 'yes']);
    assert.ok(redis.volumes?.some((v) => v.endsWith(':/data')), 'the AOF is on a volume');
    assert.equal(anteroomServices.length, 3);
    for (const [name, service] of anteroomServices) {
      assert.equal(service.environment?.ANTEROOM_STORE, 'redis://redis:6379', name);
      assert.deepEqual(unknownEnv(Object.keys(service.environment ?? {})), [], name);
      const command = service.command ?? ['serve'];
      assert.equal(command[0], 'serve', name);
      assert.deepEqual(unknownFlags(flagsIn(command)), [], name);
    }
    const gate = compose.services.gate!;
    const command = gate.command ?? [];
    assert.ok(command.includes('--gate-port'));
    const gatePort = command[command.indexOf('--gate-port') + 1];
    assert.ok(gate.ports?.includes(`${gatePort}:${gatePort}`));
    const events = JSON.parse(read('deploy/compose/events.json')) as { events: { gate: { origin: string } }[] };
    assert.ok(events.events.every((e) => e.gate.origin === 'http://site:80'), 'the gate protects the site service');
    assert.ok(compose.services.site);
  });

  it('compose: the variables its example .env sets exist', () => {
    assert.deepEqual(unknownEnv(envNamesIn(read('deploy/compose/example.env'))), []);
  });

  it('compose: the gate admits by itself, queueing only when the room is full (as compose.yaml says)', () => {
    assert.match(read('compose.yaml'), /queued when the room is full/);
    const { events } = JSON.parse(read('deploy/compose/events.json')) as { events: Record<string, unknown>[] };
    for (const room of events) {
      const parsed = parseRoomSettings(room);
      assert.ok(parsed.ok, JSON.stringify(parsed));
      assert.equal(parsed.settings.admission, 'automatic', `${String(room.event_id)}: a manual room would keep visitors waiting for ever`);
      assert.ok((parsed.settings.total_active_users ?? 0) > 0 && (parsed.settings.new_users_per_minute ?? 0) > 0);
    }
  });

  it('systemd: the unit and its environment file name existing variables and run the installed package', () => {
    const unit = read('deploy/systemd/anteroom.service');
    assert.match(unit, new RegExp(`^ExecStart=/usr/bin/node /opt/anteroom/${INSTALLED_BIN.replaceAll('.', '\\.')} serve$`, 'm'));
    const names = [...envNamesIn(unit), ...envNamesIn(read('deploy/systemd/anteroom.env'))];
    assert.ok(names.length >= 5);
    assert.deepEqual(unknownEnv(names), []);
    for (const setting of ['DynamicUser=yes', 'NoNewPrivileges=yes', 'ProtectSystem=strict', 'ProtectHome=yes', 'CapabilityBoundingSet=']) {
      assert.match(unit, new RegExp(`^${setting}$`, 'm'), setting);
    }
  });

  it('systemd: `systemd-analyze verify` accepts the unit without a warning', async (t) => {
    const available = await run('systemd-analyze', ['--version']).then(() => true, () => false);
    if (!available) return t.skip('systemd-analyze is not installed');
    const { stderr } = await run('systemd-analyze', ['verify', repoFile('deploy/systemd/anteroom.service').pathname]);
    assert.equal(stderr, '');
  });
});
