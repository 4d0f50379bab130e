// The schedule's times as the operator picks them: a date-time picker in the browser's time zone, the setting
// in UTC (ISO 8601 with Z, as the API keeps it). Pure, so it is tested in Node under any TZ.

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** An ISO 8601 UTC time as a datetime-local value in this time zone ("" for none or an unreadable one). */
export function isoToLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** A datetime-local value (this time zone) as the setting: ISO 8601 UTC, whole seconds, with Z ("" for none). */
export function localInputToIso(value: string): string {
  if (value.trim() === '') return '';
  // "YYYY-MM-DDTHH:mm[:ss]" without an offset is local time (ECMAScript's date-time form).
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toISOString().replace(/\.000Z$/, 'Z');
}

/** What the operator sees under the picker: the UTC instant the setting will hold. */
export function utcNote(value: string): string {
  const iso = localInputToIso(value);
  return iso === '' ? 'Not scheduled.' : `In UTC: ${iso}`;
}

/** The browser's time zone, named for the help text ("Europe/Berlin", else its offset). */
export function zoneName(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || `UTC${-new Date().getTimezoneOffset() / 60}`;
}
