// What became of acknowledged joins after a fault: each request ID's place asked of the surviving nodes.
// Lost: an acknowledged request ID that no longer has a place (404). Duplicated: two acknowledged request IDs
// with the same position. A 503 (the node just after a failover) is asked again, for up to 30 s in all.

import { setTimeout as sleep } from 'node:timers/promises';
import { call } from '../distributed/fleet.ts';

export interface PlaceCount {
  acknowledged: number;
  lost: number;
  duplicated: number;
}

export async function countPlaces(urls: readonly string[], ids: readonly string[], eventId = 'Sample'): Promise<PlaceCount> {
  const positions: number[] = [];
  let lost = 0;
  let next = 0;
  const deadline = Date.now() + 30_000;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < ids.length) {
        const i = next++;
        for (;;) {
          const reply = await call(`${urls[i % urls.length]}/queue_num?event_id=${eventId}&request_id=${ids[i]}`);
          if (reply?.status === 200) {
            positions.push((JSON.parse(reply.text) as { queue_number: number }).queue_number);
            break;
          }
          if ((reply === null || reply.status === 503) && Date.now() < deadline) {
            await sleep(50);
            continue;
          }
          lost += 1;
          break;
        }
      }
    }),
  );
  return { acknowledged: ids.length, lost, duplicated: positions.length - new Set(positions).size };
}
