// Parameters of the OAuth2 endpoints, from a query string or a form body, keeping every value of every name:
// RFC 6749 §3.1/§3.2 forbids repeating a parameter, and the checks must be able to see a repeat.

export type RawParameters = ReadonlyMap<string, readonly string[]>;

export function rawParameters(search: URLSearchParams): RawParameters {
  const raw = new Map<string, string[]>();
  for (const [name, value] of search) {
    const values = raw.get(name);
    if (values) values.push(value);
    else raw.set(name, [value]);
  }
  return raw;
}

/** Whether a Content-Type header names application/x-www-form-urlencoded (any charset parameter). */
export function isFormEncoded(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}
