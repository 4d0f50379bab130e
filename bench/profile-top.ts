// The top frames of a V8 CPU profile (`node --cpu-prof`), by self time and by total time, with the share of the
// samples each holds. `(idle)` and `(program)` are left out of the shares (they are not the process's work on
// the event loop, or not attributable). Run: node bench/profile-top.ts <file.cpuprofile> [rows, default 25]

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

export interface Frame {
  name: string;
  self: number;
  total: number;
}

const label = (n: ProfileNode) => {
  const file = n.callFrame.url ? basename(n.callFrame.url.replace(/^file:\/\//, '')) : '';
  return `${n.callFrame.functionName || '(anonymous)'}${file ? ` ${file}:${n.callFrame.lineNumber + 1}` : ''}`;
};

const SKIPPED = new Set(['(idle)', '(program)', '(root)']);

/** Frames by self and total samples, shares of the samples that are not idle or (program). */
export function topFrames(profile: Profile): { frames: Frame[]; samples: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frames = new Map<string, Frame>();
  let samples = 0;
  for (const id of profile.samples) {
    const node = byId.get(id)!;
    if (SKIPPED.has(node.callFrame.functionName)) continue;
    samples += 1;
    const self = label(node);
    const f = frames.get(self) ?? { name: self, self: 0, total: 0 };
    f.self += 1;
    frames.set(self, f);
    // Total: once per distinct frame on the stack.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at)!;
      if (SKIPPED.has(n.callFrame.functionName)) continue;
      const name = label(n);
      if (seen.has(name)) continue;
      seen.add(name);
      const t = frames.get(name) ?? { name, self: 0, total: 0 };
      t.total += 1;
      frames.set(name, t);
    }
  }
  return { frames: [...frames.values()], samples };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = Number(process.argv[3] ?? 25);
  const { frames, samples } = topFrames(JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as Profile);
  const pct = (n: number) => `${((n / samples) * 100).toFixed(1).padStart(5)} %`;
  console.log(`${samples} samples (idle and (program) left out)\nby self time:`);
  for (const f of [...frames].sort((a, b) => b.self - a.self).slice(0, rows)) console.log(`  ${pct(f.self)}  ${f.name}`);
  console.log('by total time:');
  for (const f of [...frames].sort((a, b) => b.total - a.total).slice(0, rows)) console.log(`  ${pct(f.total)}  ${f.name}`);
}
