// Every relative link of the README and docs/ leads to a file of the repository (and, for a link into a
// Markdown page, to one of its headings); no page sends the reader to a `spec/…` file, which is not shipped.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  ...readdirSync(join(REPO, 'packages')).map((p) => `packages/${p}/README.md`).filter((f) => existsSync(join(REPO, f))),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]!)));
}

function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

describe('documentation links', () => {
  for (const page of PAGES) {
    it(`${page}: every relative link resolves`, () => {
      const text = readFileSync(join(REPO, page), 'utf8');
      const broken: string[] = [];
      for (const link of linksOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http:, https:, mailto:
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? join(REPO, page) : join(dirname(join(REPO, page)), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${link} (no file ${relative(REPO, target)})`);
          continue;
        }
        if (anchor && target.endsWith('.md') && !anchorsOf(target).has(anchor.toLowerCase())) broken.push(`${link} (no heading #${anchor})`);
      }
      assert.deepEqual(broken, []);
    });
  }

  it('no page points to a spec/ file, which is not in the repository', () => {
    const mentions = PAGES.flatMap((page) =>
      [...readFileSync(join(REPO, page), 'utf8').matchAll(/\bspec\/[\w-]+\.md/g)].map((m) => `${page}: ${m[0]}`),
    );
    assert.deepEqual(mentions, []);
  });
});
