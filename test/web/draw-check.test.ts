// The draw-check page's arithmetic (web/draw-check/verify.ts, WebCrypto) against the server's own
// (src/domain/draw.ts): the same order for the same seed, and every tampering a visitor must notice fails.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drawCommitment, drawEntry, drawOrder, newDrawSeed, placesOf } from '../../src/domain/draw.ts';
import { checkDraw, entryOf, fetchPublication, webDrawOrder, type Publication } from '../../web/draw-check/verify.ts';

const requestIdOf = (i: number) => `6f1c2a3e-5b7d-4c1e-9a2b-${String(i).padStart(12, '0')}`;

function published(count: number, seed = newDrawSeed()) {
  const ids = Array.from({ length: count }, (_, i) => requestIdOf(i));
  const publication: Publication = {
    algorithm: 'fisher-yates/hmac-sha256-48/v1',
    commitment: drawCommitment(seed),
    committed_at: '2026-11-25T09:30:02.000Z',
    drawn_at: '2026-11-25T10:00:01.000Z',
    seed,
    first_position: 11,
  };
  return { ids, seed, publication, entries: ids.map(drawEntry) };
}

describe('the draw, checked with WebCrypto', () => {
  it('gives the order the server computes, for every size', async () => {
    for (const count of [0, 1, 2, 3, 17, 1000, 5003]) {
      const seed = newDrawSeed();
      assert.deepEqual([...(await webDrawOrder(seed, count))], [...(await drawOrder(seed, count, null))], `${count} entries`);
    }
  });

  it('an entry is SHA-256 of the request ID as the API gave it (lowercase)', async () => {
    assert.equal(await entryOf(requestIdOf(7).toUpperCase()), drawEntry(requestIdOf(7)));
  });

  it('finds the visitor\'s place and position; says when they are not in the draw', async () => {
    const { ids, seed, publication, entries } = published(300);
    const places = placesOf(await drawOrder(seed, 300, null));
    const check = await checkDraw(publication, entries, { requestId: ids[42] });
    assert.equal(check.kind, 'verified');
    assert.ok(check.kind === 'verified');
    assert.equal(check.place, places[42]);
    assert.equal(check.position, 11 + (places[42] as number) - 1);
    assert.equal(check.committedAt, '2026-11-25T09:30:02.000Z');
    const stranger = await checkDraw(publication, entries, { requestId: requestIdOf(999) });
    assert.ok(stranger.kind === 'verified' && stranger.notInDraw && stranger.place === null);
  });

  it('before the draw: the commitment and when it was published', async () => {
    const { publication } = published(3);
    const check = await checkDraw({ algorithm: publication.algorithm, commitment: publication.commitment, committed_at: publication.committed_at }, []);
    assert.deepEqual(check, { kind: 'pending', commitment: publication.commitment, committedAt: '2026-11-25T09:30:02.000Z' });
  });

  it('fails on a tampered seed, commitment, instants, entries, or a commitment other than the one seen before', async () => {
    const { ids, publication, entries } = published(50);
    const other = newDrawSeed();
    const cases: [string, Publication, string[], string | undefined, RegExp][] = [
      ['another seed', { ...publication, seed: other }, entries, undefined, /does not match the commitment/],
      ['another commitment', { ...publication, commitment: drawCommitment(other) }, entries, undefined, /does not match the commitment/],
      ['seed and commitment swapped, seen before', { ...publication, seed: other, commitment: drawCommitment(other) }, entries, publication.commitment as string, /The commitment changed/],
      ['committed after the draw', { ...publication, committed_at: '2026-11-25T10:00:05.000Z' }, entries, undefined, /not before the draw/],
      ['committed at the draw', { ...publication, committed_at: publication.drawn_at }, entries, undefined, /not before the draw/],
      ['no committed_at', { ...publication, committed_at: undefined }, entries, undefined, /does not say when the commitment/],
      ['no drawn_at', { ...publication, drawn_at: 'soon' }, entries, undefined, /does not say when the draw/],
      ['an entry twice', publication, [...entries.slice(0, 49), entries[0] as string], undefined, /appears twice/],
      ['a malformed entry', publication, [...entries.slice(0, 49), 'xyz'], undefined, /not a SHA-256/],
      ['another algorithm', { ...publication, algorithm: 'coin-flip' }, entries, undefined, /algorithm/],
    ];
    for (const [name, tampered, list, seen, problem] of cases) {
      const check = await checkDraw(tampered, list, { requestId: ids[3], seenCommitment: seen });
      assert.equal(check.kind, 'failed', name);
      assert.ok(check.kind === 'failed');
      assert.match(check.problem, problem, name);
    }
    // The untampered draw with the commitment seen before passes.
    assert.equal((await checkDraw(publication, entries, { seenCommitment: (publication.commitment as string).toUpperCase() })).kind, 'verified');
  });

  it('a reordered entry list moves places: the visitor sees a place other than the one they were given', async () => {
    const { ids, publication, entries } = published(40);
    const honest = await checkDraw(publication, entries, { requestId: ids[5] });
    const swapped = [...entries];
    [swapped[5], swapped[6]] = [swapped[6] as string, swapped[5] as string];
    const tampered = await checkDraw(publication, swapped, { requestId: ids[5] });
    assert.ok(honest.kind === 'verified' && tampered.kind === 'verified');
    assert.notEqual(tampered.place, honest.place);
  });

  it('reads every page of a large publication, and refuses one whose pages do not add up', async () => {
    const pages: Record<string, Publication> = {
      '/draw?event_id=d&page=1': { algorithm: 'a', total_entries: 3, pages: 2, entries: ['e1', 'e2'] },
      '/draw?event_id=d&page=2': { algorithm: 'a', total_entries: 3, pages: 2, entries: ['e3'] },
    };
    const { entries } = await fetchPublication('/draw?event_id=d', async (url) => pages[url] as Publication);
    assert.deepEqual(entries, ['e1', 'e2', 'e3']);
    pages['/draw?event_id=d&page=2'] = { entries: [] };
    await assert.rejects(fetchPublication('/draw?event_id=d', async (url) => pages[url] as Publication), /lists 2 entries, it says 3/);
  });
});
