// What became of acknowledged joins after a fault: each request ID's place asked of the surviving nodes.
// Lost: an acknowledged request ID that the store no longer has (`202 Request ID not found`). Duplicated: two
// acknowledged request IDs with the same position. Any other answer (a 503 from a node just after a failover, a
// refused connection) says nothing of the place and is asked again, for up to UNANSWERED_AFTER_MS in all; what
// is still unanswered then is counted apart (`unanswered`), never as lost. (The first version counted those
// 503s as lost: on a loaded machine, a count of thousands of places outlived its 30 s and "lost" hundreds.)

import { setTimeout as sleep } from 'node:timers/promises';
import { call } from '../distributed/fleet.ts';

const UNANSWERED_AFTER_MS = 120_000;

export interface PlaceCount {
  acknowledged: number;
  lost: number;
  duplicated: number;
  /** Places no node answered for (neither a position nor "not found") within UNANSWERED_AFTER_MS. */
  unanswered: number;
}

export async function countPlaces(urls: readonly string[], ids: readonly string[], eventId = 'Sample'): Promise<PlaceCount> {
  const positions: number[] = [];
  let lost = 0;
  let unanswered = 0;
  let next = 0;
  const deadline = Date.now() + UNANSWERED_AFTER_MS;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < ids.length) {
        const i = next++;
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
            break;
          }
          await sleep(50);
        }
      }
    }),
  );
  return { acknowledged: ids.length, lost, duplicated: positions.length - new Set(positions).size, unanswered };
}
