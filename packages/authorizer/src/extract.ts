// Finds the token a client presented. VWR's sample site sends the raw JWT as `Authorization: <jwt>`, standard
// clients send `Authorization: Bearer <jwt>`, and browser pages may rely on a cookie instead.

/** Node's `IncomingHttpHeaders`, or the `headers` of an API Gateway event (whose names keep their case). */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined | null>>;

export interface ExtractOptions {
  /** Also accept the token from this cookie when no Authorization header carries one. */
  cookieName?: string;
}

/** The presented token, or undefined when none is presented. The Authorization header wins over the cookie. */
export function extractToken(headers: HeaderBag | null | undefined, options: ExtractOptions = {}): string | undefined {
  const fromAuthorization = tokenFromAuthorization(headerValue(headers, 'authorization'));
  if (fromAuthorization !== undefined || options.cookieName === undefined) return fromAuthorization;
  return tokenFromCookie(headerValue(headers, 'cookie'), options.cookieName);
}

/**
 * `Bearer <jwt>` or a bare `<jwt>`. A credential of another scheme (`Basic …`) is no token of ours, so it
 * counts as missing (401) rather than invalid (403).
 */
export function tokenFromAuthorization(value: string | null | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  const match = /^\s*(?:bearer(?:\s+|$))?(\S*)\s*$/i.exec(value);
  return match?.[1] ? match[1] : undefined;
}

function tokenFromCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

function headerValue(headers: HeaderBag | null | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  let value = headers[name];
  if (value === undefined) {
    const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
    if (key !== undefined) value = headers[key];
  }
  if (typeof value === 'string') return value;
  return value?.[0];
}
