// The floors the benchmarks put their figures beside, measured on the server's core in the same run: a bare
// node:http handler (bench/bare-server.ts) answering a POST, and three bare JWT signatures of each signing
// algorithm made the way src/tokens/signer.ts makes them. A figure is read as a ratio to these, never alone:
// this machine is shared, and its speed differs from boot to boot by up to 2×.

import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { pinnedCommand } from '../test/support/child-node.ts';
import { runLoad } from './load-runner.ts';
import { cpuSeconds } from './proc-stats.ts';
import type { SigningAlgorithm } from '../src/domain/ports/tokens.ts';

export interface BareServer {
  url: string;
  pid: number | undefined;
  stop: () => Promise<void>;
}

/** A bare node:http server pinned to `cpu`, answering every request with a small JSON body. */
export async function startBare(cpu: number): Promise<BareServer> {
  const [command, argv] = pinnedCommand(cpu, [process.execPath, fileURLToPath(new URL('./bare-server.ts', import.meta.url))]);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`bare server exited (${code}) before listening`)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\d+)/.exec(out);
      if (match) resolve(match[1] as string);
    });
  });
  child.removeAllListeners('exit');
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/**
 * CPU µs per POST of a bare node:http handler on `cpu` (the server's core), the load from `loadCpu`: started,
 * warmed, measured over `spec` (autocannon's amount or durationSec, connections), stopped.
 */
export async function barePostCost(cpu: number, loadCpu: number, spec: { connections: number; amount?: number; durationSec?: number }): Promise<number> {
  const bare = await startBare(cpu);
  try {
    const post = { url: `${bare.url}/`, method: 'POST', body: '{"event_id":"Sample"}' };
    await runLoad({ ...post, connections: spec.connections, amount: 2000 }, loadCpu);
    const before = cpuSeconds(bare.pid) ?? 0;
    const r = await runLoad({ ...post, ...spec }, loadCpu);
    return (((cpuSeconds(bare.pid) ?? 0) - before) * 1e6) / Math.max(1, r.ok);
  } finally {
    await bare.stop();
  }
}

const SIGNER = new URL('../src/tokens/signer.ts', import.meta.url).href;

/**
 * CPU µs of three bare signatures of `algorithm` (a token set), in a child pinned to `cpu`, signed as
 * src/tokens/signer.ts signs: RS256 PKCS#1 v1.5 with a 2048-bit key, ES256 on a KeyObject with the DER signature
 * turned into r || s (derToJoseSignature), EdDSA Ed25519. For ES256 also `p1363`: node:crypto's own
 * `dsaEncoding: 'ieee-p1363'`, the way the signer does not take (it costs about as much again).
 */
export function bareSignCost(cpu: number, algorithm: SigningAlgorithm): { micros: number; p1363: number | null } {
  const code = `
    import { generateKeyPairSync, sign } from 'node:crypto';
    import { derToJoseSignature } from ${JSON.stringify(SIGNER)};
    const algorithm = ${JSON.stringify(algorithm)};
    const key = algorithm === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 0x10001 }).privateKey
      : generateKeyPairSync(algorithm === 'ES256' ? 'ec' : 'ed25519', algorithm === 'ES256' ? { namedCurve: 'P-256' } : {}).privateKey;
    const input = Buffer.from('eyJhbGciOiJFUzI1NiIsImtpZCI6ImsiLCJ0eXAiOiJKV1QifQ.eyJhdWQiOiJFYyIsInN1YiI6IngiLCJ0b2tlbl91c2UiOiJhY2Nlc3MifQ');
    const cost = (once, n) => {
      for (let i = 0; i < n / 10; i++) once();
      const t = process.cpuUsage();
      for (let i = 0; i < n; i++) once();
      const u = process.cpuUsage(t);
      return ((u.user + u.system) / n) * 3;
    };
    const n = algorithm === 'RS256' ? 300 : 3000;
    const micros = algorithm === 'RS256' ? cost(() => sign('sha256', input, key), n)
      : algorithm === 'ES256' ? cost(() => derToJoseSignature(sign('sha256', input, key)), n)
      : cost(() => sign(null, input, key), n);
    const p1363 = algorithm === 'ES256' ? cost(() => sign('sha256', input, { key, dsaEncoding: 'ieee-p1363' }), n) : null;
    console.log(JSON.stringify({ micros, p1363 }));`;
  const [command, argv] = pinnedCommand(cpu, [process.execPath, '--input-type=module', '-e', code]);
  const child = spawnSync(command, argv, { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`bare ${algorithm} signatures: ${child.stderr}`);
  return JSON.parse(child.stdout.trim()) as { micros: number; p1363: number | null };
}
