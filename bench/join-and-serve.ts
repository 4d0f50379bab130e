// What the claim benches share: `count` visitors joined (500 requests at a time) and the serving counter moved
// past all of them, so each can claim at once.

import type { ChildNode } from '../test/support/child-node.ts';

/** The request IDs of `count` new visitors of `eventId`, every one of them served. */
export async function joinAndServe(node: ChildNode, eventId: string, count: number, adminToken: string): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < count) {
    const n = Math.min(200, count - ids.length);
    const replies = await Promise.all(Array.from({ length: n }, () => joinOnce(node, eventId)));
    ids.push(...replies.map((r) => r.api_request_id));
  }
  const served = await fetch(`${node.url}/private/increment_serving_counter`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event_id: eventId, increment_by: count }),
  });
  if (!served.ok) throw new Error(`increment_serving_counter: ${served.status}`);
  return ids;
}

/** One join; tried again when the connection fails (a kept-alive socket the server closed as it was reused). */
export async function joinOnce(node: { url: string }, eventId: string, tries = 3): Promise<{ api_request_id: string }> {
  try {
    const r = await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: eventId }) });
    return (await r.json()) as { api_request_id: string };
  } catch (error) {
    if (tries <= 1) throw error;
    return joinOnce(node, eventId, tries - 1);
  }
}
