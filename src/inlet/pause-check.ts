// The pause signal of the periodic inlet, in place of VWR's CloudWatch alarm: an HTTP GET of the site's
// health URL. ALARM ("site struggling", skip this tick) when the answer is not 2xx, or when the number at
// json_path in its JSON body is over the threshold.
//
// Fail safe: when the check cannot tell — timeout, refused connection, a body that is not JSON, no number
// at the path — it also says ALARM. Admitting more visitors into a site whose health is unknown is the
// riskier mistake; a paused inlet only delays people, who keep their place in the queue.

import type { PauseCheck, PauseVerdict } from '../domain/admission/periodic.ts';
import type { PauseCheckSettings } from '../domain/room-settings.ts';

/** Health documents are small; a larger answer is not what was configured. */
const MAX_BODY_BYTES = 1024 * 1024;

export function pauseChecker(settings: PauseCheckSettings, fetchImpl: typeof fetch = fetch): PauseCheck {
  return () => checkPause(settings, fetchImpl);
}

export async function checkPause(settings: PauseCheckSettings, fetchImpl: typeof fetch = fetch): Promise<PauseVerdict> {
  const alarm = (reason: string): PauseVerdict => ({ state: 'ALARM', reason });
  const signal = AbortSignal.timeout(Math.round(settings.timeout * 1000));
  let response: Response;
  try {
    response = await fetchImpl(settings.url, { signal, headers: { accept: 'application/json, */*;q=0.5' } });
  } catch (error) {
    return alarm(`health check failed: ${describeFetchError(error, settings.timeout)}`);
  }
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => {});
    return alarm(`health check answered HTTP ${response.status}`);
  }
  if (settings.json_path === undefined || settings.threshold === undefined) {
    await response.body?.cancel().catch(() => {});
    return { state: 'OK', reason: `health check answered HTTP ${response.status}` };
  }
  let document: unknown;
  try {
    document = JSON.parse(await readCapped(response, MAX_BODY_BYTES));
  } catch (error) {
    return alarm(`health check body unusable: ${describeFetchError(error, settings.timeout)}`);
  }
  const value = toNumber(readJsonPath(document, settings.json_path));
  if (value === null) return alarm(`health check body has no number at ${settings.json_path}`);
  return value > settings.threshold
    ? alarm(`${settings.json_path} = ${value} is over the threshold ${settings.threshold}`)
    : { state: 'OK', reason: `${settings.json_path} = ${value} is within the threshold ${settings.threshold}` };
}

async function readCapped(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > limit) throw new Error(`body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchError(error: unknown, timeoutSec: number): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutSec} s`;
  if (e.name === 'SyntaxError') return 'not JSON';
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(error);
}

/** The value at `path` (the syntax checked by isJsonPath in src/domain/room-settings.ts), or undefined. Only own properties are followed. */
export function readJsonPath(document: unknown, path: string): unknown {
  const segments = path.startsWith('/')
    ? path.slice(1).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    : path.replace(/^\$\.?/, '').split('.').filter((s, i, all) => !(all.length === 1 && s === ''));
  let current = document;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return current;
}

/** A finite number, or a string holding one (some metric endpoints quote their values). */
function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) return Number(value);
  return null;
}
