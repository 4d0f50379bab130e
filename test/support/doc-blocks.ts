// The fenced code blocks of the repository's Markdown files, for tests that run the docs' recipes as written
// (the test reads the block from the .md file, so the doc and the test cannot drift apart).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

export interface DocBlock {
  /** The nearest heading above the block, without its #s. */
  heading: string;
  /** The fence's info string (`sh`, `ts`, `json`, …; '' for none). */
  language: string;
  text: string;
}

/** Every fenced block of `path` (relative to the repository root), in order. */
export function docBlocks(path: string): DocBlock[] {
  const markdown = readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
  const blocks: DocBlock[] = [];
  let heading = '';
  let open: { language: string; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    if (open) {
      if (line.startsWith('```')) {
        blocks.push({ heading, language: open.language, text: open.lines.join('\n') + '\n' });
        open = undefined;
      } else open.lines.push(line);
    } else if (line.startsWith('```')) open = { language: line.slice(3).trim(), lines: [] };
    else if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '').trim();
  }
  return blocks;
}

/** The `index`-th block of `language` under the heading that starts with `heading` (fails the test if none). */
export function docBlock(path: string, heading: string, language: string, index = 0): string {
  const found = docBlocks(path).filter((block) => block.heading.startsWith(heading) && block.language === language)[index];
  assert.ok(found, `${path} has a \`\`\`${language} block #${index} under "${heading}"`);
  return found.text;
}
