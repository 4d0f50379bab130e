// The public counter stream, GET /stream?event_id=E (src/http/counter-stream.ts): the current counters at once,
// every change after, the contract's errors for a bad query, 503 once the node holds its maximum, and every
// stream ended when the server closes.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestNode, type TestNode } from '../support/node.ts';

/** An open stream: its frames as they arrive (the `data:` of each `counters` event, parsed). */
interface Stream {
  response: IncomingMessage;
  frames: Array<{ serving_counter: number; waiting_num: number; generation?: number }>;
  /** The `data:` of each `messages` event, parsed (the room's branding messages). */
  messages: Array<Record<string, string>>;
  raw: string;
  /** Resolves once a frame satisfies `check`. */
  until(check: (frame: Stream['frames'][number]) => boolean): Promise<void>;
  ended: Promise<void>;
  close(): void;
}

function openStream(url: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = request(url, (response) => {
      const waiters: Array<{ check: (f: Stream['frames'][number]) => boolean; done: () => void }> = [];
      let buffer = '';
      const stream: Stream = {
        response,
        frames: [],
        messages: [],
        raw: '',
        until: (check) =>
          new Promise<void>((done) => {
            if (stream.frames.some(check)) done();
            else waiters.push({ check, done });
          }),
        ended: new Promise<void>((done) => response.once('end', done).once('close', done)),
        close: () => req.destroy(),
      };
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        stream.raw += chunk;
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (/^event: messages$/m.test(block) && data !== undefined) {
            stream.messages.push(JSON.parse(data) as Record<string, string>);
            // Messages wake the waiters too, with the last counters frame.
            const last = stream.frames.at(-1);
            if (last) {
              for (const w of waiters.splice(0)) {
                if (w.check(last)) w.done();
                else waiters.push(w);
              }
            }
            continue;
          }
          if (!/^event: counters$/m.test(block) || data === undefined) continue;
          const frame = JSON.parse(data) as Stream['frames'][number];
          stream.frames.push(frame);
          for (const w of waiters.splice(0)) {
            if (w.check(frame)) w.done();
            else waiters.push(w);
          }
        }
      });
      resolve(stream);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /stream: the counters as they change', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ streamMaxConnections: 3 });
  });
  after(async () => {
    await node?.stop();
  });

  it('answers an event stream that starts with the counters and the reconnection delay', async () => {
    await node.post('/assign_queue_num', { event_id: 'Sample' });
    const stream = await openStream(`${node.url}/stream?event_id=Sample`);
    try {
      assert.equal(stream.response.statusCode, 200);
      assert.match(String(stream.response.headers['content-type']), /^text\/event-stream/);
      assert.equal(stream.response.headers['cache-control'], 'no-store');
      assert.equal(stream.response.headers['access-control-allow-origin'], '*');
      await stream.until(() => true);
      assert.match(stream.raw, /^retry: 3000\n/);
      const first = stream.frames[0]!;
      assert.equal(first.serving_counter, 0);
      assert.ok(first.waiting_num >= 1, `waiting ${first.waiting_num}`);
    } finally {
      stream.close();
    }
  });

  it('sends each change of the serving counter to every listener of the room, once', async () => {
    const [a, b] = await Promise.all([openStream(`${node.url}/stream?event_id=Sample`), openStream(`${node.url}/stream?event_id=Sample`)]);
    try {
      await Promise.all([a.until(() => true), b.until(() => true)]);
      const before = a.frames[0]!.serving_counter;
      const moved = await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 2 });
      assert.equal(moved.status, 200);
      await Promise.all([a.until((f) => f.serving_counter === before + 2), b.until((f) => f.serving_counter === before + 2)]);
      const values = a.frames.map((f) => f.serving_counter);
      assert.deepEqual([...new Set(values)], values.filter((v, i) => i === 0 || v !== values[i - 1]), 'no frame repeats the one before');
    } finally {
      a.close();
      b.close();
    }
  });

  it('carries the room generation, which a reset moves on (a page compares it to say the queue restarted)', async () => {
    const stream = await openStream(`${node.url}/stream?event_id=Sample`);
    try {
      await stream.until(() => true);
      const before = stream.frames[0]!.generation;
      assert.equal(typeof before, 'number');
      assert.equal((await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' })).status, 200);
      await stream.until((f) => f.generation === before! + 1);
    } finally {
      stream.close();
    }
  });

  it('frames are chunks of HTTP/1.1, and plain bytes to an HTTP/1.0 client', async () => {
    const raw = async (version: string) => {
      const socket = connect(Number(new URL(node.url).port), '127.0.0.1');
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.write(`GET /stream?event_id=Sample ${version}\r\nHost: x\r\n\r\n`);
      await once(socket, 'data');
      return { socket, text: () => text };
    };
    const [v11, v10] = await Promise.all([raw('HTTP/1.1'), raw('HTTP/1.0')]);
    try {
      const serving = Number(/"serving_counter":(\d+)/.exec(v11.text())?.[1]);
      await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 });
      const frame = `event: counters\ndata: {"serving_counter":${serving + 1},`;
      for (const c of [v11, v10]) while (!c.text().includes(frame)) await once(c.socket, 'data');
      assert.match(v11.text(), /transfer-encoding: chunked/i);
      assert.match(v11.text(), new RegExp(`\r\n[0-9a-f]+\r\n${frame.replace(/[{}]/g, '\\$&')}`), 'a chunk of its own');
      assert.doesNotMatch(v10.text(), /transfer-encoding/i);
      assert.match(v10.text(), new RegExp(`\n\n${frame.replace(/[{}]/g, '\\$&')}`), 'right after the frame before, no chunk header');
    } finally {
      v11.socket.destroy();
      v10.socket.destroy();
    }
  });

  it('carries the room\'s branding messages: on connect, then each change of one, so an open page shows it without a reload', async () => {
    assert.equal((await node.admin('PUT', '/rooms/Told', { branding: { message: 'One pair per customer.' } })).status, 201);
    const stream = await openStream(`${node.url}/stream?event_id=Told`);
    try {
      await stream.until(() => stream.messages.length >= 1);
      assert.deepEqual(stream.messages, [{ message: 'One pair per customer.' }]);
      const counterFrames = stream.frames.length;
      // Newlines and markup travel as JSON text (one data: line; the page sets it as text).
      const paused = 'Payment provider hiccup.\nBack soon. <b>not markup</b>';
      const changed = await node.admin('PATCH', '/rooms/Told', { branding: { message: 'Two pairs now.', paused_message: paused } });
      assert.equal(changed.status, 200);
      await stream.until(() => stream.messages.length >= 2);
      assert.deepEqual(stream.messages[1], { message: 'Two pairs now.', paused_message: paused });
      assert.equal(stream.frames.length, counterFrames, 'no counters frame for a change of words');
      // Removed: an empty set of messages, once.
      assert.equal((await node.admin('PATCH', '/rooms/Told', { branding: null })).status, 200);
      await stream.until(() => stream.messages.length >= 3);
      assert.deepEqual(stream.messages[2], {});
      // Another listener joining now hears the room's messages as they are.
      const late = await openStream(`${node.url}/stream?event_id=Told`);
      try {
        await late.until(() => late.messages.length >= 1);
        assert.deepEqual(late.messages, [{}]);
      } finally {
        late.close();
      }
      assert.equal(stream.messages.length, 3);
    } finally {
      stream.close();
    }
  });

  it('answers a bad or unknown room as the polls do, and 405 for other methods', async () => {
    for (const query of ['', '?event_id=', '?event_id=a&event_id=b']) {
      const stream = await node.get(`/stream${query}`);
      const poll = await node.get(`/serving_num${query}`);
      assert.equal(stream.status, poll.status, query);
      assert.ok(stream.status >= 400 && stream.status < 500, query);
      assert.deepEqual(await stream.json(), await poll.json(), query);
    }
    const unknown = await node.get('/stream?event_id=NoSuchRoom');
    const poll = await node.get('/serving_num?event_id=NoSuchRoom');
    assert.equal(unknown.status, poll.status);
    assert.deepEqual(await unknown.json(), await poll.json());
    const post = await node.post('/stream?event_id=Sample', {});
    assert.equal(post.status, 405);
    assert.equal((await fetch(`${node.url}/stream?event_id=Sample`, { method: 'HEAD' })).status, 405);
  });

  it('past its maximum a node answers 503 with Retry-After, and takes streams again once one closes', async () => {
    const open = await Promise.all([1, 2, 3].map(() => openStream(`${node.url}/stream?event_id=Sample`)));
    try {
      await Promise.all(open.map((s) => s.until(() => true)));
      const refused = await node.get('/stream?event_id=Sample');
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '30');
      assert.deepEqual(await refused.json(), { error: 'Too many open streams: poll instead' });
      open.pop()!.close();
      let again: Stream | undefined;
      for (let i = 0; i < 200 && again === undefined; i++) {
        const s = await openStream(`${node.url}/stream?event_id=Sample`);
        if (s.response.statusCode === 200) again = s;
        else {
          s.close();
          await new Promise((r) => setImmediate(r));
        }
      }
      assert.ok(again, 'a stream is accepted once one closed');
      again.close();
    } finally {
      for (const s of open) s.close();
    }
  });
});

describe('GET /stream when the server closes', () => {
  it('every stream ends (the page reconnects elsewhere or polls)', async () => {
    const node = await startTestNode();
    const stream = await openStream(`${node.url}/stream?event_id=Sample`);
    await stream.until(() => true);
    await node.stop();
    await stream.ended;
  });

  it('with --stream-max-connections 0 there is no stream: 404, and the page polls', async () => {
    const node = await startTestNode({ streamMaxConnections: 0 });
    try {
      assert.equal((await node.get('/stream?event_id=Sample')).status, 404);
    } finally {
      await node.stop();
    }
  });
});
