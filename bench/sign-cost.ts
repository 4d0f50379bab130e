// The CPU cost of signing on this machine, per JWS algorithm a room can choose (signing_algorithm): one token
// set = three signatures. RS256 is measured as before; ES256 and EdDSA next to it, in the same process.
import { generateKeyPairSync, sign, type KeyObject, type SignKeyObjectInput } from 'node:crypto';
import { derToJoseSignature } from '../src/tokens/signer.ts';

const input = Buffer.from('eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJTYW1wbGUiLCJzdWIiOiJ4In0');

function perSignature(signOnce: () => void, n: number): number {
  for (let i = 0; i < 50; i++) signOnce();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) signOnce();
  return Number(process.hrtime.bigint() - start) / n / 1e6;
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const ed: KeyObject = generateKeyPairSync('ed25519').privateKey;
const ecInput: SignKeyObjectInput = { key: ec, dsaEncoding: 'ieee-p1363' };
const costs = {
  RS256: perSignature(() => sign('sha256', input, rsa), 600),
  // As src/tokens/signer.ts signs: the bare KeyObject (DER), converted to r || s; 'ieee-p1363' costs twice that.
  ES256: perSignature(() => derToJoseSignature(sign('sha256', input, ec)), 3000),
  'ES256 (ieee-p1363)': perSignature(() => sign('sha256', input, ecInput), 3000),
  EdDSA: perSignature(() => sign(null, input, ed), 3000),
};
const line = (alg: keyof typeof costs) =>
  `${alg} ${costs[alg].toFixed(3)} ms per signature = ${(costs[alg] * 3).toFixed(2)} ms of CPU per token set (≈ ${Math.round(1000 / (costs[alg] * 3))} new token sets/s per core)`;
process.stdout.write(
  `${line('RS256')}\n  ${line('ES256')}, ${(costs.RS256 / costs.ES256).toFixed(1)}× faster\n  ${line('ES256 (ieee-p1363)')}, ${(costs.RS256 / costs['ES256 (ieee-p1363)']).toFixed(1)}× faster\n  ${line('EdDSA')}, ${(costs.RS256 / costs.EdDSA).toFixed(1)}× faster\n`,
);
