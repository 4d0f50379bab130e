// A Web Worker that solves part of a proof-of-work challenge (ALTCHA's worker protocol: it tries the counters
// start, start + step, … with WebCrypto's SHA-256). proof-of-work.ts starts one per core.
import { handler } from 'altcha-lib/workers/shared';
import { deriveKey } from 'altcha-lib/algorithms/web/sha';

handler({ deriveKey });
