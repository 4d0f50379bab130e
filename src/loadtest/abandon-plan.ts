// Who closes the tab, when, and who comes back (--abandon, --come-back, --seed; docs/loadtest.md "Visitors who
// leave"). Drawn from the seed and the visitor's index alone, so the same visitors leave at the same points of
// their journey in every run with the same seed — with presence on or off, the runs differ only in the room.
//
//   • --abandon share of the visitors leave. Two thirds of them leave while waiting, at a random point of
//     their way through the line: when what is left of it (position − counter) has fallen to a share u of what
//     it was at their first poll, u uniform in (0, 1). The other third leave once let in, before claiming: their
//     poll shows the counter at their position, and they claim nothing.
//   • --come-back share of those come back after 0.5–1.5 × --come-back-after, uniform: they ask /queue_num
//     (the page loads again) and poll on, claiming when the counter has reached them.
// Leaving means sending nothing at all: no poll, no sign of life.

export type AbandonStage = 'waiting' | 'admitted';

export interface AbandonPlan {
  stage: AbandonStage;
  /** stage waiting: leaves at the first poll where position − counter ≤ this share of its first distance. */
  remainingShare: number;
  /** How long the visitor stays away before coming back; null = never comes back. */
  awayMs: number | null;
}

export interface AbandonSettings {
  abandon: number;
  comeBack: number;
  comeBackAfterMs: number;
  seed: number;
}

/** mulberry32: a small, fast PRNG with 32 bits of state; enough to draw a plan, not for secrets. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The plan of visitor `index` (0-based), or null when it stays. Depends on the settings and the index only. */
export function abandonPlanOf(settings: AbandonSettings, index: number): AbandonPlan | null {
  if (settings.abandon <= 0) return null;
  // One stream per visitor: mixing the index into the seed keeps a visitor's plan independent of the others.
  const random = mulberry32((Math.imul(settings.seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
  if (random() >= settings.abandon) return null;
  const stage: AbandonStage = random() < 2 / 3 ? 'waiting' : 'admitted';
  const remainingShare = random();
  const comesBack = random() < settings.comeBack;
  const awayMs = comesBack ? Math.round(settings.comeBackAfterMs * (0.5 + random())) : null;
  return { stage, remainingShare, awayMs };
}
