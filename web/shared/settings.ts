// Reads a page's settings from its URL, with the query parameters VWR's pages accept (`eventId`,
// `publicApiUrl`, `commerceApiUrl`, `privateApiUrl`, `regionName`) and same-origin defaults, so a page served by
// Anteroom itself needs no parameter at all.

export const DEFAULT_EVENT_ID = 'Sample';
export const DEFAULT_REGION = 'us-east-1';
const EVENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;

export interface PageSettings {
  eventId: string;
  publicApiUrl: string;
  privateApiUrl: string;
  commerceApiUrl: string;
  regionName: string;
  /**
   * `return_to`: the site to send the visitor back to once served, with a one-time `anteroom_handoff` code
   * (docs/gate.md#hand-off). The server checks it against the room's allowed_return_origins.
   */
  returnTo?: string;
  /** Parameters that were present but unusable, to show to the user instead of silently ignoring them. */
  ignored: string[];
}

/** An absolute http(s) URL without its trailing slash, or undefined. */
export function apiBaseUrl(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    url.hash = '';
    return url.href.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}

export function readSettings(search: string, origin: string): PageSettings {
  const params = new URLSearchParams(search);
  const ignored: string[] = [];
  const url = (name: string, fallback: string): string => {
    const given = params.get(name);
    if (given === null || given === '') return fallback;
    const parsed = apiBaseUrl(given);
    if (parsed === undefined) ignored.push(name);
    return parsed ?? fallback;
  };
  const givenEvent = params.get('eventId');
  let eventId = DEFAULT_EVENT_ID;
  if (givenEvent) {
    if (EVENT_ID.test(givenEvent)) eventId = givenEvent;
    else ignored.push('eventId');
  }
  const region = params.get('regionName');
  let regionName = DEFAULT_REGION;
  if (region) {
    if (/^[a-z0-9-]{1,32}$/.test(region)) regionName = region;
    else ignored.push('regionName');
  }
  const publicApiUrl = url('publicApiUrl', origin);
  const returnTo = params.get('return_to') ?? undefined;
  return {
    ...(returnTo ? { returnTo } : {}),
    eventId,
    publicApiUrl,
    privateApiUrl: url('privateApiUrl', `${origin}/private`),
    commerceApiUrl: url('commerceApiUrl', `${origin}/store`),
    regionName,
    ignored,
  };
}
