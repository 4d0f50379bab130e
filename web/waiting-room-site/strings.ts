// The page's words, in the language the server rendered it in: a JSON data block (#strings) written by the
// template (src/web/page-template.ts), so the script itself carries no text and stays small.

const block = document.getElementById('strings');
const strings = JSON.parse(block?.textContent || '{}') as Record<string, string>;

/** The page's language (BCP 47), for Intl. */
export const lang: string = strings.lang ?? document.documentElement.lang ?? 'en';

/** The string `key`, with its {placeholders} filled in. */
export function t(key: string, values: Record<string, string | number> = {}): string {
  const text = strings[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}
