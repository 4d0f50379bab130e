// The words and look of a room's default waiting page (issue 33): one setting, `branding`, of the one room settings
// model (./room-settings.ts — the events file, the rooms API and the store all go through it). The default page
// renders these for the site (/waiting-room-site/) and the gate alike (src/web/page-template.ts); a room that
// wants more writes its own template (`page`).
//
// Everything is checked strictly, because a link is anyone's to follow and the page is everyone's to read:
// - URLs (the logo, the link back) are https:// URLs or paths of the page's own host ("/…", never "//…"): no
//   javascript:, data: or http: (a logo over http would be mixed content), no quotes, spaces or backslashes;
// - colours are #rgb or #rrggbb only (they go into a <style> block, so nothing else may get there), and their
//   pairs must keep a contrast of at least 4.5:1 (WCAG AA): text on the background and on the cards, the buttons'
//   text on the accent, links (the accent) on the cards, the header's text on its background;
// - texts are plain text, escaped in the page like every other value.

import { Type, type Static } from '@sinclair/typebox';
import type { SettingProblem } from './setting-problems.ts';

const Text = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, description, errorMessage: `must be text of 1 to ${maxLength} characters` });

/** https://… or a path of this host ("/…"). */
const PAGE_URL = '^(https://[^\\s"\'<>\\\\`]+|/(?![/\\\\])[^\\s"\'<>\\\\`]*)$';
const PageUrl = (description: string) =>
  Type.String({
    pattern: PAGE_URL,
    maxLength: 2048,
    description,
    errorMessage: 'must be an https:// URL or a path starting with / (no javascript:, http:, spaces or quotes), of at most 2048 characters',
  });

const COLOUR = '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$';
const Colour = (description: string) => Type.String({ pattern: COLOUR, description, errorMessage: 'must be a colour like #1b1f24 or #fff' });

export const BrandingColoursSchema = Type.Object(
  {
    background: Type.Optional(Colour('the page background (default #f6f7f9)')),
    text: Type.Optional(Colour('the text (default #1b1f24)')),
    accent: Type.Optional(Colour('buttons, links and the progress bar (default #0b5cad)')),
    accent_text: Type.Optional(Colour("the buttons' text (default #ffffff)")),
    header_background: Type.Optional(Colour("the header's background (default #14212f)")),
    header_text: Type.Optional(Colour("the header's text (default #ffffff)")),
  },
  { additionalProperties: false },
);

export const BrandingSchema = Type.Object(
  {
    title: Type.Optional(Text(120, "the page's heading and the tab's title (default: \"Waiting room\", in the visitor's language)")),
    site_name: Type.Optional(Text(80, 'the name of the site, in the header (default: none)')),
    message: Type.Optional(Text(1000, 'a message under the heading, in every phase ("One pair per customer.")')),
    paused_message: Type.Optional(Text(1000, 'shown while the room is paused, after the standard sentence ("Back in 10 minutes.")')),
    closed_message: Type.Optional(Text(1000, 'shown to everyone once the room is closed or ended ("Sold out, thank you!")')),
    logo_url: Type.Optional(PageUrl('a logo shown in the header: an https:// URL or a path of this host')),
    logo_alt: Type.Optional(Text(200, "the logo's text for screen readers (default: the site's name)")),
    link_url: Type.Optional(PageUrl('the link back to the site (header, and the ending of a closed room): an https:// URL or a path of this host')),
    link_text: Type.Optional(Text(80, 'the link\'s words (default: "Back to the site", in the visitor\'s language)')),
    colors: Type.Optional(BrandingColoursSchema),
  },
  { additionalProperties: false, description: "the default page's words and look (docs/pages.md, \"Branding\")" },
);

export type Branding = Static<typeof BrandingSchema>;
export type BrandingColours = Static<typeof BrandingColoursSchema>;

/** The default page's colours (web/shared/base.css), for the contrast checks of a room that changes some. */
export const DEFAULT_COLOURS: Required<BrandingColours> = {
  background: '#f6f7f9',
  text: '#1b1f24',
  accent: '#0b5cad',
  accent_text: '#ffffff',
  header_background: '#14212f',
  header_text: '#ffffff',
};
/** The cards' background, which the text and links are also read on. */
const SURFACE = '#ffffff';
export const MIN_CONTRAST = 4.5;

/** WCAG 2.1 contrast ratio of two #rgb/#rrggbb colours. */
export function contrastRatio(a: string, b: string): number {
  const [la, lb] = [luminance(a), luminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

function luminance(colour: string): number {
  const hex = colour.length === 4 ? [...colour.slice(1)].map((c) => c + c).join('') : colour.slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** The colour pairs that must stay readable: [foreground, background, what it is]. */
const PAIRS: [keyof BrandingColours, keyof BrandingColours | 'surface', string][] = [
  ['text', 'background', 'background'],
  ['text', 'surface', 'cards (#ffffff)'],
  ['accent_text', 'accent', 'accent'],
  ['accent', 'surface', 'cards (#ffffff), where links and the progress bar are drawn'],
  ['header_text', 'header_background', 'header_background'],
];

/** The first colour pair under 4.5:1 (defaults filled in), named on the colour the room set. */
export function brandingRuleProblem(branding: Branding | undefined): SettingProblem | undefined {
  const set = branding?.colors;
  if (!set) return undefined;
  const colours = { ...DEFAULT_COLOURS, ...set };
  for (const [fg, bg, against] of PAIRS) {
    const back = bg === 'surface' ? SURFACE : colours[bg];
    const ratio = contrastRatio(colours[fg], back);
    if (ratio < MIN_CONTRAST) {
      const field = set[fg] !== undefined || bg === 'surface' ? fg : bg;
      return {
        path: ['branding', 'colors', field],
        rule: `must keep a contrast of at least ${MIN_CONTRAST}:1 between ${fg} (${colours[fg]}) and ${against === 'background' || against === 'accent' || against === 'header_background' ? `${against} (${back})` : against} (is ${ratio.toFixed(2)}:1)`,
      };
    }
  }
  return undefined;
}

/**
 * The operator's messages of a room, which an open page follows without a reload (the counter stream's `messages`
 * event, src/http/counter-stream.ts; the gate's JSON answers): only those set.
 */
export interface RoomMessages {
  message?: string;
  paused_message?: string;
  closed_message?: string;
}

export function roomMessages(branding: Branding | undefined): RoomMessages {
  const messages: RoomMessages = {};
  if (branding?.message !== undefined) messages.message = branding.message;
  if (branding?.paused_message !== undefined) messages.paused_message = branding.paused_message;
  if (branding?.closed_message !== undefined) messages.closed_message = branding.closed_message;
  return messages;
}

/** The colours as CSS custom properties for the page's <style> (only what the room set; values checked by the schema). */
export function brandingStyle(branding: Branding | undefined): string {
  const set = branding?.colors;
  if (!set) return '';
  const names: Record<keyof BrandingColours, string> = {
    background: '--bg',
    text: '--text',
    accent: '--accent',
    accent_text: '--accent-text',
    header_background: '--header-bg',
    header_text: '--header-text',
  };
  const rules = (Object.keys(names) as (keyof BrandingColours)[])
    .filter((key) => set[key] !== undefined && new RegExp(COLOUR).test(set[key]!))
    .map((key) => `${names[key]}:${set[key]}`);
  return rules.length === 0 ? '' : `html:root{${rules.join(';')}}`;
}
