// What became of acknowledged joins after a fault: each request ID's place asked of the surviving nodes.
// Lost: an acknowledged request ID that the store no longer has (`202 Request ID not found`). Duplicated: two
// acknowledged request IDs with the same position. Any other answer (a 503 from a node just after a failover, a
// refused connection) says nothing of the place and is asked again, for up to UNANSWERED_AFTER_MS per place; what
// is still unanswered then is counted apart (`unanswered`), never as lost. (The first version counted those
// 503s as lost, under one 30 s deadline for the whole count: on a loaded machine a count of thousands of places
// outlived it and "lost" hundreds.)

import { setTimeout as sleep } from 'node:timers/promises';
import { call } from '../distributed/fleet.ts';

const UNANSWERED_AFTER_MS = 120_000;

export interface PlaceCount {
  acknowledged: number;
  lost: number;
  duplicated: number;
  /** Places no node answered for (neither a position nor "not found") within UNANSWERED_AFTER_MS of asking. */
  unanswered: number;
  /** The last answer for a few of those, to say why. */
  unansweredSamples: string[];
}

export async function countPlaces(urls: readonly string[], ids: readonly string[], eventId = 'Sample'): Promise<PlaceCount> {
  const positions: number[] = [];
  let lost = 0;
  let unanswered = 0;
  const unansweredSamples: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < ids.length) {
        const i = next++;
        // Each place has its own deadline: a count of thousands outlives any one deadline for all of them.
        const deadline = Date.now() + UNANSWERED_AFTER_MS;
        for (let attempt = 0; ; attempt++) {
          const reply = await call(`${urls[(i + attempt) % urls.length]}/queue_num?event_id=${eventId}&request_id=${ids[i]}`);
          if (reply?.status === 200) {
            positions.push((JSON.parse(reply.text) as { queue_number: number }).queue_number);
            break;
          }
          if (reply?.status === 202 && reply.text.includes('Request ID not found')) {
            lost += 1;
            break;
          }
          if (Date.now() >= deadline) {
            unanswered += 1;
            if (unansweredSamples.length < 5) unansweredSamples.push(`${ids[i]}: ${reply ? `${reply.status} ${reply.text.slice(0, 120)}` : 'no connection'}`);
            break;
          }
          await sleep(50);
        }
      }
    }),
  );
  return { acknowledged: ids.length, lost, duplicated: positions.length - new Set(positions).size, unanswered, unansweredSamples };
}
