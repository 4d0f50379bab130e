// Draws: the pre-queue's draw at the room's start (spec rooms.md §3; ../draw-runner.ts) and its publication
// (../draw-publication.ts) — whether it is done, the draw job's tick, GET /draw and the drawn positions the
// operator checks. Joins of the pre-queue are the queue's (./queue-service.ts). Sealed: the public and private
// routes and the draw job call these methods.

import { drawPage, type DrawPublications } from '../draw-publication.ts';
import type { DrawRunner } from '../draw-runner.ts';
import { Errors, Pending } from '../errors.ts';
import { drawIsDue, roomDraws } from '../prequeue.ts';
import { ok, type Answer, type RoomContext } from './room-context.ts';

export interface DrawServiceDeps {
  context: RoomContext;
  draws: DrawRunner;
  publications: DrawPublications;
}

export class DrawService {
  private readonly context: RoomContext;
  private readonly draws: DrawRunner;
  private readonly publications: DrawPublications;

  constructor(deps: DrawServiceDeps) {
    this.context = deps.context;
    this.draws = deps.draws;
    this.publications = deps.publications;
  }

  /**
   * Whether the room may admit as far as the draw is concerned: true for a room without a draw, and for one
   * whose draw is done. The admission tick waits for it; nobody has a position to admit before anyway.
   */
  drawDone(eventId: string): Promise<boolean> {
    return this.context.drawDone(eventId);
  }

  /**
   * One tick of the draw job: runs the draw of every room whose start has come and whose draw is not done (to
   * its end, which for 100,000 entries takes a few seconds; a tick that finds it running on this process or
   * another node returns at once).
   */
  async runDraws(): Promise<void> {
    const now = this.context.now();
    for (const room of this.context.catalog.all()) {
      if (drawIsDue(room, now) && !this.draws.knownDone(room.event_id)) await this.draws.run(room.event_id);
      // Before the start: the commitment's instant is recorded once the room has one (../draw-times.ts).
      else if (roomDraws(room) && !drawIsDue(room, now)) await this.publications.notePublished(room.event_id);
    }
  }

  /**
   * GET /draw: the room's draw as published, JSON bytes (../draw-publication.ts): the commitment before the draw,
   * the seed and the entries after it — the whole publication, or page `page` (from 1) of its entries
   * (drawPage). Unknown room → 400; a room without a draw → 404.
   */
  async drawPublication(eventId: unknown, page?: number): Promise<Answer<Buffer>> {
    const room = this.context.event(eventId);
    if (!roomDraws(room)) throw Errors.drawNotEnabled();
    const publication = await this.publications.current(room.event_id);
    if (page === undefined) return ok(publication.json);
    const json = drawPage(publication, page);
    if (json === null) throw Errors.drawPageNotFound();
    return ok(json);
  }

  /**
   * The drawn entries and the positions they got, in join order, from `offset`, at most `limit`: what the room
   * drew, for the operator's check of the publication and of every place (`anteroom verify-draw --check-all`).
   * 202 before the draw is done.
   */
  async drawPositions(
    eventId: unknown,
    offset: number,
    limit: number,
  ): Promise<Answer<{ first_position: number; total: number; entries: string[]; positions: number[] }>> {
    const room = this.context.event(eventId);
    if (!roomDraws(room)) throw Errors.drawNotEnabled();
    const { drawn } = await this.publications.current(room.event_id);
    if (!drawn) return Pending.drawNotDone;
    const positions = [...drawn.positions.subarray(offset, offset + limit)];
    return ok({
      first_position: drawn.firstPosition,
      total: drawn.positions.length,
      entries: positions.map((_, i) => drawn.entryHexes.slice((offset + i) * 64, (offset + i + 1) * 64)),
      positions,
    });
  }
}
