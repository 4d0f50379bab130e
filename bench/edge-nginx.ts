// Verify at the edge (issue 36, docs/edge.md, docs/benchmarks.md "Verify at the edge"): CPU per proxied request
// of an admitted visitor, one nginx process each (Debian's nginx, master_process off, pinned to CPU 1), for
//   (a) nginx proxy_pass alone (the same request as (b): the visitor's cookies too);
//   (b) nginx + verification (deploy/nginx/anteroom-edge.conf as shipped, a valid edge cookie, a plain path): the
//       fast path, nginx maps and the cached verdict (njs asked once for the cookie, before the rounds);
//   (b2) the same nginx and cookie, a path with a %-escape (/%70roduct): njs's fast check (js_set) on every request;
//   (c) nginx + auth_request to Anteroom (deploy/nginx/anteroom-forward-auth.conf): nginx's CPU plus Anteroom's;
//   (d) Anteroom's gate alone (its gate port proxying to the origin);
// interleaved ROUNDS times, medians reported, each against (a) of the same round. Then Anteroom's side:
// its CPU per renewal (GET /_anteroom/renew?mac_only=1, the edge's one call, as the shipped nginx config asks
// it) against its CPU per forward-auth check (GET /_anteroom/check), and what the renewal costs per admitted
// request at RATE_PER_VISITOR requests a second per visitor with RENEWAL_SECONDS between renewals, against
// the forward-auth figure: (c), the CPU per proxied request of nginx + Anteroom (and, beside it, Anteroom's
// check alone). Both Anteroom figures repeat one visitor's cookie: its session is looked up in the store once
// per 5 s, not at every renewal (docs/benchmarks.md says what that leaves out). Origin and load generator on
// CPU 0; Anteroom on CPU 1.
//
//   node bench/edge-nginx.ts    (BENCH_EDGE_SECONDS per run, default 4; BENCH_EDGE_ROUNDS, default 3)

import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChildNode } from '../test/support/child-node.ts';
import { freePort, startNginx } from '../test/support/nginx.ts';
import { runLoad } from './load-runner.ts';
import { spawnListening } from './gate.ts';
import { cpuSeconds, median } from './proc-stats.ts';

const SECONDS = Number(process.env.BENCH_EDGE_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_EDGE_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SERVER_CPU = 1;
const LOAD_CPU = 0;
const RATE_PER_VISITOR = 1;
const RENEWAL_SECONDS = 30;
const ADMIN = 'bench-admin-token-0123456789';
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const deploy = (file: string) => fileURLToPath(new URL(`../deploy/nginx/${file}`, import.meta.url));

interface Round {
  rps: number;
  cpuMicros: number;
  non2xx: number;
}

/** One run of load against `url`; CPU µs per request of the processes `pids`, summed. */
async function round(url: string, pids: (number | undefined)[], headers: Record<string, string>): Promise<Round> {
  const before = pids.map((pid) => cpuSeconds(pid) ?? 0);
  const r = await runLoad({ url, connections: CONNECTIONS, durationSec: SECONDS, headers }, LOAD_CPU);
  const spent = pids.reduce<number>((sum, pid, i) => sum + (cpuSeconds(pid) ?? 0) - (before[i] as number), 0);
  return { rps: r.rps, cpuMicros: (spent * 1e6) / Math.max(1, r.total), non2xx: r.non2xx + r.errors };
}

// The cookies a browser would send next: a cleared one (`name=`, e.g. anteroom_join after admission) is not.
const cookieOf = (response: Response): string =>
  response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0] as string)
    .filter((c) => !c.endsWith('='))
    .join('; ');

export async function runEdgeBench(): Promise<void> {
  console.log(`Verify at the edge — ${SECONDS} s per run, ${ROUNDS} rounds interleaved, ${CONNECTIONS} connections; nginx and Anteroom on CPU ${SERVER_CPU}, origin and load on CPU ${LOAD_CPU}`);
  const stops: (() => Promise<void>)[] = [];
  try {
    const origin = await spawnListening([process.execPath, here('./canned-http-server.ts')], LOAD_CPU);
    stops.unshift(origin.stop);
    const originHost = new URL(origin.url).host;

    // Anteroom: one room protecting the origin; edge cookies admit for an hour (no renewal during the runs).
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-bench-edge-'));
    chmodSync(dir, 0o755);
    stops.push(async () => rmSync(dir, { recursive: true, force: true }));
    const gatePort = await freePort();
    const config = join(dir, 'rooms.json');
    writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Bench', gate: { origin: origin.url, routes: [{ path: '/' }], edge_renewal_interval: 3600 } }] }));
    const node = await startChildNode(
      ['--data-dir', dir, '--config', config, '--gate-port', String(gatePort), '--admin-token', ADMIN, '--queue-position-expiry-period', '86400'],
      {},
      { cpu: SERVER_CPU },
    );
    stops.unshift(async () => {
      node.process.kill('SIGTERM');
      await node.exited;
    });
    const gateUrl = `http://127.0.0.1:${gatePort}`;
    const place = cookieOf(await fetch(`${gateUrl}/`, { redirect: 'manual' }));
    await fetch(`${node.url}/private/increment_serving_counter`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ event_id: 'Bench', increment_by: 1 }) });
    const token = cookieOf(await fetch(`${gateUrl}/`, { redirect: 'manual', headers: { cookie: place } }));
    if (!token.startsWith('anteroom_token=')) throw new Error('the benchmark visitor was not admitted');
    const edge = cookieOf(await fetch(`${gateUrl}/_anteroom/renew?event_id=Bench&mac_only=1`, { headers: { cookie: token } }));
    if (!edge.startsWith('anteroom_edge=')) throw new Error('no edge cookie');
    const exported = await fetch(`${node.url}/private/edge_config`, { headers: { authorization: `Bearer ${ADMIN}` } });
    writeFileSync(join(dir, 'anteroom-edge-config.js'), await exported.text());
    const maps = await fetch(`${node.url}/private/edge_config?format=nginx`, { headers: { authorization: `Bearer ${ADMIN}` } });
    writeFileSync(join(dir, 'anteroom-edge-maps.conf'), await maps.text());
    mkdirSync(join(dir, 'cache'));
    for (const file of ['anteroom-edge.js', 'anteroom-edge-core.js']) copyFileSync(deploy(file), join(dir, file));

    const anteroomAt = (text: string) => text.replace('server 127.0.0.1:8081;', `server 127.0.0.1:${gatePort};`).replace('server 127.0.0.1:3000;', `server ${originHost};`);
    const start = async (httpBlock: string, main = '') => {
      const port = await freePort();
      const nginx = await startNginx(httpBlock.replace('listen 8000;', `listen 127.0.0.1:${port};`), port, { workers: 0, cpu: SERVER_CPU, main });
      stops.unshift(nginx.stop);
      return nginx;
    };
    const alone = await start(`upstream protected_site { server ${originHost}; keepalive 16; }
  server { listen 8000; location / { proxy_pass http://protected_site; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $host; proxy_set_header X-Forwarded-For $remote_addr; proxy_set_header X-Forwarded-Proto $scheme; } }`);
    const njs = await start(
      anteroomAt(readFileSync(deploy('anteroom-edge.conf'), 'utf8')).replaceAll('/etc/nginx/anteroom', dir).replaceAll('/var/cache/nginx/anteroom', join(dir, 'cache')),
      'load_module /usr/lib/nginx/modules/ngx_http_js_module.so;\npcre_jit on;',
    );
    const forwardAuth = await start(anteroomAt(readFileSync(deploy('anteroom-forward-auth.conf'), 'utf8')));

    const contenders: { label: string; url: string; pids: (number | undefined)[]; headers: Record<string, string> }[] = [
      // The same visitor's request everywhere: (a) proxies the same Cookie header as (b) (before, it had none, and
      // the ratio counted forwarding the cookies as the verification's cost).
      { label: '(a) nginx proxy_pass alone', url: `${alone.url}/product`, pids: [alone.pid], headers: { cookie: `${token}; ${edge}` } },
      { label: '(b) nginx + verification (maps, cached verdict)', url: `${njs.url}/product`, pids: [njs.pid], headers: { cookie: `${token}; ${edge}` } },
      { label: '(b2) nginx + njs fast check (/%70roduct)', url: `${njs.url}/%70roduct`, pids: [njs.pid], headers: { cookie: `${token}; ${edge}` } },
      { label: '(c) nginx + auth_request (nginx + Anteroom)', url: `${forwardAuth.url}/product`, pids: [forwardAuth.pid, node.process.pid], headers: { cookie: token } },
      { label: '(d) Anteroom\'s gate', url: `${gateUrl}/product`, pids: [node.process.pid], headers: { cookie: token } },
    ];
    // Each contender answers 200 before the rounds (and (b)'s verdict is cached).
    for (const c of contenders) {
      const answer = await fetch(c.url, { headers: c.headers, redirect: 'manual' });
      if (answer.status !== 200) throw new Error(`${c.label}: ${answer.status}`);
    }
    const rounds = new Map<string, Round[]>(contenders.map((c) => [c.label, []]));
    const loads: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      loads.push(loadavg()[0] as number);
      for (const c of contenders) (rounds.get(c.label) as Round[]).push(await round(c.url, c.pids, c.headers));
    }
    console.log(`load average (1 min) at the start of each round: ${loads.map((l) => l.toFixed(2)).join(', ')}`);
    const base = rounds.get(contenders[0]?.label as string) as Round[];
    for (const c of contenders) {
      const rs = rounds.get(c.label) as Round[];
      const ratios = rs.map((r, i) => r.cpuMicros / (base[i] as Round).cpuMicros);
      const errors = rs.reduce((sum, r) => sum + r.non2xx, 0);
      console.log(
        `${c.label.padEnd(50)} ${Math.round(median(rs.map((r) => r.rps)))} req/s   ${median(rs.map((r) => r.cpuMicros)).toFixed(1)} µs CPU/request (${rs.map((r) => r.cpuMicros.toFixed(1)).join(', ')})` +
          `   ×${median(ratios).toFixed(2)} of (a) (${ratios.map((x) => x.toFixed(2)).join(', ')})${errors ? `   non-2xx/errors ${errors}` : ''}`,
      );
    }

    // Anteroom's side: a renewal (what the edge asks once per interval) against a forward-auth check (every request).
    const renewRounds: Round[] = [];
    const checkRounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      renewRounds.push(await round(`${gateUrl}/_anteroom/renew?event_id=Bench&mac_only=1`, [node.process.pid], { cookie: token }));
      checkRounds.push(await round(`${gateUrl}/_anteroom/check`, [node.process.pid], { cookie: token, 'x-original-uri': '/product' }));
    }
    const renew = median(renewRounds.map((r) => r.cpuMicros));
    const check = median(checkRounds.map((r) => r.cpuMicros));
    const perRequest = renew / (RATE_PER_VISITOR * RENEWAL_SECONDS);
    const forwardAuthFigure = median((rounds.get(contenders[3]?.label as string) as Round[]).map((r) => r.cpuMicros));
    console.log(`Anteroom CPU per renewal (mac_only) ${renew.toFixed(1)} µs (${renewRounds.map((r) => r.cpuMicros.toFixed(1)).join(', ')}); per forward-auth check ${check.toFixed(1)} µs (${checkRounds.map((r) => r.cpuMicros.toFixed(1)).join(', ')})`);
    console.log(
      `at ${RATE_PER_VISITOR} req/s per visitor and ${RENEWAL_SECONDS} s renewal: Anteroom ${perRequest.toFixed(2)} µs per admitted request = 1/${Math.round(forwardAuthFigure / perRequest)} of forward auth's ${forwardAuthFigure.toFixed(1)} µs per proxied request (c) (target ≤ 1/100); 1/${Math.round(check / perRequest)} of Anteroom's ${check.toFixed(1)} µs per check alone`,
    );
  } finally {
    for (const stop of stops) await stop().catch(() => {});
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runEdgeBench();
