// Reads a page's settings from its URL, with the query parameters VWR's pages accept (`eventId`,
// `publicApiUrl`, `commerceApiUrl`, `privateApiUrl`, `regionName`) and same-origin defaults, so a page served by
// Anteroom itself needs no parameter at all.
//
// A link is anyone's to write: the waiting-room page passes the origins it may call (its own, plus the room's
// `allowed_api_origins`, from its <meta name="anteroom-api-origins">), and a `publicApiUrl` or `commerceApiUrl`
// elsewhere is ignored — else a crafted link to the official page would hand its visitor's place, token and
// hand-off to someone else's server.

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

/** The origins listed in a page's <meta name="anteroom-api-origins"> (space-separated), as parsed origins. */
export function listedOrigins(content: string | null | undefined): string[] {
  const origins: string[] = [];
  for (const entry of (content ?? '').split(/\s+/)) {
    const url = apiBaseUrl(entry);
    if (url !== undefined) origins.push(new URL(url).origin);
  }
  return origins;
}

/**
 * The page's settings. With `apiOrigins` (the waiting-room page), `publicApiUrl` and `commerceApiUrl` must be on
 * `origin` or one of `apiOrigins` (compared as parsed origins); a URL elsewhere is ignored (and reported).
 */
export function readSettings(search: string, origin: string, apiOrigins?: readonly string[]): PageSettings {
  const params = new URLSearchParams(search);
  const ignored: string[] = [];
  const allowed = apiOrigins === undefined ? undefined : new Set([new URL(origin).origin, ...apiOrigins]);
  const url = (name: string, fallback: string, restricted = false): string => {
    const given = params.get(name);
    if (given === null || given === '') return fallback;
    let parsed = apiBaseUrl(given);
    if (parsed !== undefined && restricted && allowed !== undefined && !allowed.has(new URL(parsed).origin)) parsed = undefined;
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
  const publicApiUrl = url('publicApiUrl', origin, true);
  const returnTo = params.get('return_to') ?? undefined;
  return {
    ...(returnTo ? { returnTo } : {}),
    eventId,
    publicApiUrl,
    privateApiUrl: url('privateApiUrl', `${origin}/private`),
    commerceApiUrl: url('commerceApiUrl', `${origin}/store`, true),
    regionName,
    ignored,
  };
}
