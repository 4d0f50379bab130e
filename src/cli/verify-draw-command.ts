// `anteroom verify-draw`: anyone can check a room's draw from what it published (GET /draw, spec rooms.md §3):
// the seed matches the commitment, the commitment was published before the draw (committed_at < drawn_at, as
// the room stored them) and — given --commitment, the one the visitor saw before the start — is that one; the
// algorithm is the documented one, and every place is recomputed from the seed and the entries. Then it checks places against the positions handed out:
// a visitor's own (--request-id, public: /queue_num), or the operator's sample or all of them (private API
// credentials: /private/draw_positions).
// Exit status: 0 when everything checked matches, 1 when something does not (the message says what), 2 when
// the options are wrong.

import { Command, Option } from 'commander';
import { PrivateApiClient, type PrivateApiCredentials } from '../client/private-api-client.ts';
import { checkPublishedDraw, DRAW_ALGORITHM, drawEntry, type PublishedDraw } from '../domain/draw.ts';
import { drawInstantsProblem } from '../domain/draw-times.ts';
import { ConfigError, ConfigErrors } from '../domain/errors.ts';
import { isRequestId, normaliseRequestId } from '../domain/ids.ts';
import { EVENT_ID_PATTERN } from '../domain/room-settings.ts';
import { credentialsFrom } from './inlet-command.ts';
import { integerIn } from './option-parsers.ts';

const HELP_AFTER = `
What is checked:
  1. GET <public-url>/draw?event_id=…: once the draw has taken place it publishes the algorithm, the
     commitment (SHA-256 of the seed), committed_at (when the commitment was first published), drawn_at
     (when the draw fixed its entries), the seed, first_position and the entries (SHA-256 of every pre-queue
     request ID, in join order). The seed must match the commitment, committed_at must come before drawn_at,
     and the algorithm must be ${DRAW_ALGORITHM} (docs/rooms.md, "The draw"). The commitment as published
     now is only as good as the room's word: give --commitment with the one you saw (or the room posted)
     before the start, and it must be the same.
  2. Every place is recomputed from the seed and the number of entries: place p has position
     first_position + p - 1.
  3. With --request-id: your entry is SHA-256 of your request ID; the command prints its place and checks that
     /queue_num gives you that position. Without it, and with the private API credentials, it checks the
     positions of --sample entries taken at random (or of every entry with --check-all) against
     /private/draw_positions. Without credentials positions are not checked, only the publication.

Authentication (only for the positions of other visitors): --admin-token, or --access-key-id with
--secret-access-key (SigV4), as for \`anteroom inlet\`; --private-url defaults to <public-url>/private.

Exit status: 0 = everything checked matches, 1 = something does not (or the draw has not taken place yet),
2 = wrong options.

Without an installed \`anteroom\`, run it from a checkout or the unpacked release: \`node bin/anteroom.js verify-draw …\`.

Examples:
  anteroom verify-draw --public-url https://queue.example.com --event-id drop --request-id 6f1c…
  anteroom verify-draw --public-url http://127.0.0.1:8080 --event-id drop --admin-token $TOKEN --check-all`;

/** Something checked that does not match (or could not be checked): exit status 1 with its message. */
class Mismatch extends Error {}

interface Output {
  line(text: string): void;
  progress(text: string, final: boolean): void;
}

export function verifyDrawCommand(): Command {
  return new Command('verify-draw')
    .description(
      "Check a room's draw from what it published (GET /draw): the seed matches the commitment made before the start, " +
        'every place is recomputed, and places match the positions handed out.',
    )
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .addOption(new Option('--public-url <url>', 'base URL of the public API, e.g. https://queue.example.com').env('ANTEROOM_PUBLIC_URL'))
    .addOption(new Option('--event-id <id>', 'the room whose draw is checked').env('ANTEROOM_EVENT_ID'))
    .addOption(new Option('--request-id <id>', 'your request ID: print your place and check it against /queue_num'))
    .addOption(new Option('--commitment <hex>', 'the commitment you saw before the start: the published one must be the same'))
    .addOption(new Option('--check-all', 'check the position of every entry (needs the private API credentials)'))
    .addOption(
      new Option('--sample <n>', 'with the private API credentials: entries checked at random (without --check-all)')
        .default(100)
        .argParser(integerIn(1, 1_000_000)),
    )
    .addOption(new Option('--public-api-key <key>', 'x-api-key for the public API, if it requires one').env('ANTEROOM_PUBLIC_API_KEY'))
    .addOption(new Option('--private-url <url>', 'base URL of the private API (default: <public-url>/private)').env('ANTEROOM_PRIVATE_URL'))
    .addOption(new Option('--admin-token <token>', 'private API: the admin bearer token').env('ANTEROOM_ADMIN_TOKEN'))
    .addOption(new Option('--access-key-id <id>', 'private API, SigV4: access key ID').env('ANTEROOM_ACCESS_KEY_ID'))
    .addOption(new Option('--secret-access-key <secret>', 'private API, SigV4: secret access key').env('ANTEROOM_SECRET_ACCESS_KEY'))
    .addOption(new Option('--session-token <token>', 'private API, SigV4: session token').env('ANTEROOM_SESSION_TOKEN'))
    .addOption(new Option('--region <region>', 'private API, SigV4: region of the credential scope').env('ANTEROOM_REGION').default('us-east-1'))
    .addOption(
      new Option('--request-timeout <seconds>', 'give up on a request after this long').default(30).argParser(integerIn(1, 600)),
    )
    .addHelpText('after', HELP_AFTER)
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const output = consoleOutput();
      try {
        await verifyDraw(cmd, o, output);
        process.exitCode = 0;
      } catch (error) {
        // Wrong options: exit 2 (main). Anything else — a mismatch, a server that does not answer — is a check
        // that did not pass.
        if (error instanceof ConfigError) throw error;
        process.stderr.write(`anteroom verify-draw: ${(error as Error).message ?? String(error)}\n`);
        process.exitCode = 1;
      }
    });
}

function consoleOutput(): Output {
  const tty = process.stderr.isTTY === true;
  return {
    line: (text) => process.stdout.write(`${text}\n`),
    progress: (text, final) => {
      if (tty) process.stderr.write(`\r${text}${final ? '\n' : ''}`);
      else process.stderr.write(`${text}\n`);
    },
  };
}

function httpUrl(value: unknown, flag: string): string {
  const url = String(value).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(url) || !URL.canParse(url)) throw ConfigErrors.option(`${flag} must be an http(s) URL`);
  return url;
}

const count = (n: number) => n.toLocaleString('en-US');

async function verifyDraw(cmd: Command, o: Record<string, unknown>, out: Output): Promise<void> {
  if (o.publicUrl === undefined) throw ConfigErrors.option('--public-url is required (or ANTEROOM_PUBLIC_URL)');
  if (o.eventId === undefined) throw ConfigErrors.option('--event-id is required (or ANTEROOM_EVENT_ID)');
  const publicUrl = httpUrl(o.publicUrl, '--public-url');
  const eventId = String(o.eventId);
  if (!new RegExp(EVENT_ID_PATTERN).test(eventId)) throw ConfigErrors.option(`--event-id "${eventId}" is not a valid event ID`);
  const requestId = o.requestId === undefined ? undefined : String(o.requestId);
  const noted = o.commitment === undefined ? undefined : String(o.commitment).toLowerCase();
  if (noted !== undefined && !/^[0-9a-f]{64}$/.test(noted)) throw ConfigErrors.option('--commitment must be 64 hex digits (a SHA-256)');
  if (requestId !== undefined && !isRequestId(requestId)) throw ConfigErrors.option('--request-id must be a request ID (a UUID)');
  const timeoutMs = (o.requestTimeout as number) * 1000;
  const credentials = hasCredentials(o) ? credentialsFrom(cmd, o) : undefined;
  if (o.checkAll === true && !credentials) {
    throw ConfigErrors.option('--check-all needs the private API credentials (--admin-token, or --access-key-id with --secret-access-key)');
  }
  const publicHeaders: Record<string, string> = o.publicApiKey === undefined ? {} : { 'x-api-key': String(o.publicApiKey) };
  const getPublic = (path: string) =>
    fetch(`${publicUrl}${path}`, { headers: publicHeaders, signal: AbortSignal.timeout(timeoutMs) });

  const draw = await fetchDraw(getPublic, eventId);
  out.line(`Room ${eventId}: the draw ordered ${count(draw.entries.length)} entries (algorithm ${draw.algorithm}).`);
  const places = await recomputePlaces(draw, out);
  const instants = drawInstantsProblem(draw.committedAt, draw.drawnAt);
  if (instants !== null) throw new Mismatch(`the published draw does not verify: ${instants}`);
  out.line(
    `The seed matches the commitment ${draw.commitment.slice(0, 16)}…, which the room first published at ${draw.committedAt}, ` +
      `before the draw at ${draw.drawnAt}; every place was recomputed.`,
  );
  if (noted !== undefined) {
    if (noted !== draw.commitment) {
      throw new Mismatch(`the published commitment ${draw.commitment} is not the one you saw before the start (${noted}): the commitment changed`);
    }
    out.line('It is the commitment you saw before the start.');
  } else {
    out.line('(Give --commitment with the commitment you saw before the start to check that it never changed.)');
  }
  const positionOf = (index: number) => draw.firstPosition + (places[index] as number) - 1;

  if (requestId !== undefined) {
    await checkVisitor(getPublic, eventId, normaliseRequestId(requestId), draw, positionOf, out);
    return;
  }
  if (!credentials) {
    out.line('Positions not checked: give --request-id, or the private API credentials to check other visitors\' places.');
    return;
  }
  const privateUrl = o.privateUrl === undefined ? `${publicUrl}/private` : httpUrl(o.privateUrl, '--private-url');
  await checkPositions(
    new PrivateApiClient({ baseUrl: privateUrl, credentials: credentials as PrivateApiCredentials, timeoutMs }),
    eventId,
    draw.entries,
    positionOf,
    o.checkAll === true ? null : (o.sample as number),
    out,
  );
}

function hasCredentials(o: Record<string, unknown>): boolean {
  return ['adminToken', 'accessKeyId', 'secretAccessKey'].some((name) => o[name] !== undefined && o[name] !== '');
}

interface FetchedDraw extends PublishedDraw {
  firstPosition: number;
  committedAt: unknown;
  drawnAt: unknown;
}

async function fetchDraw(getPublic: (path: string) => Promise<Response>, eventId: string): Promise<FetchedDraw> {
  let response: Response;
  try {
    response = await getPublic(`/draw?${new URLSearchParams({ event_id: eventId })}`);
  } catch (error) {
    throw new Mismatch(`GET /draw: no answer (${(error as Error).message})`);
  }
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Mismatch(`GET /draw answered ${response.status} with something that is not JSON`);
  }
  if (response.status !== 200) throw new Mismatch(`GET /draw answered ${response.status}: ${String(body.error ?? text.slice(0, 200))}`);
  const { algorithm, commitment, seed, entries, first_position: firstPosition, committed_at: committedAt, drawn_at: drawnAt } = body;
  if (typeof algorithm !== 'string' || typeof commitment !== 'string') {
    throw new Mismatch('GET /draw answered without an algorithm and a commitment');
  }
  if (seed === undefined) {
    throw new Mismatch(
      `the draw has not taken place yet (commitment ${commitment}); check again after the start, with the seed published`,
    );
  }
  if (typeof seed !== 'string' || !Array.isArray(entries) || !entries.every((e) => typeof e === 'string')) {
    throw new Mismatch('GET /draw answered a seed without a list of entries');
  }
  if (!Number.isSafeInteger(firstPosition) || (firstPosition as number) < 1) {
    throw new Mismatch('GET /draw answered without a first_position');
  }
  return { algorithm, commitment, seed, entries: entries as string[], firstPosition: firstPosition as number, committedAt, drawnAt };
}

/** The places, checking the publication first; a progress line for draws large enough to take a while. */
async function recomputePlaces(draw: FetchedDraw, out: Output): Promise<Uint32Array> {
  const swaps = Math.max(0, draw.entries.length - 1);
  const report = swaps >= 20_000;
  let lastShown = -1;
  const progress = report
    ? async (done: number) => {
        const percent = Math.floor((done / swaps) * 100);
        if (percent >= lastShown + 10) {
          lastShown = percent;
          out.progress(`recomputing the places: ${count(done)} of ${count(swaps)} steps (${percent}%)`, false);
        }
      }
    : null;
  const checked = await checkPublishedDraw(draw, progress);
  if (report) out.progress(`recomputing the places: done`, true);
  if (!checked.ok) throw new Mismatch(`the published draw does not verify: ${checked.problem}`);
  return checked.places;
}

async function checkVisitor(
  getPublic: (path: string) => Promise<Response>,
  eventId: string,
  requestId: string,
  draw: FetchedDraw,
  positionOf: (index: number) => number,
  out: Output,
): Promise<void> {
  const index = draw.entries.indexOf(drawEntry(requestId));
  if (index < 0) {
    throw new Mismatch(
      `request ID ${requestId} is not among the draw's entries (a visitor who joined after the draw started queues behind the drawn places)`,
    );
  }
  const expected = positionOf(index);
  out.line(`Your entry is number ${count(index + 1)} in join order; the draw gave it place ${count(expected - draw.firstPosition + 1)}: position ${count(expected)}.`);
  const response = await getPublic(`/queue_num?${new URLSearchParams({ event_id: eventId, request_id: requestId })}`);
  const body = (await response.json().catch(() => ({}))) as { queue_number?: unknown; error?: unknown };
  if (response.status !== 200) {
    throw new Mismatch(`/queue_num answered ${response.status} (${String(body.error ?? '')}) instead of position ${expected}`);
  }
  if (body.queue_number !== expected) {
    throw new Mismatch(`/queue_num gives position ${String(body.queue_number)}, the draw gives position ${expected}`);
  }
  out.line(`/queue_num gives the same position: your place is the draw's.`);
}

/** Checks `sample` entries at random (every entry when null) against the positions handed out. */
async function checkPositions(
  client: PrivateApiClient,
  eventId: string,
  published: readonly string[],
  positionOf: (index: number) => number,
  sample: number | null,
  out: Output,
): Promise<void> {
  const PAGE = 5_000;
  const total = published.length;
  const wrong: string[] = [];
  let checked = 0;
  /** The room's own entry and position at `index` against the publication and the recomputed place. */
  const check = (index: number, entry: string, position: number) => {
    checked += 1;
    if (entry !== published[index]) {
      wrong.push(`entry ${count(index + 1)} is not the one the room drew`);
    } else if (position !== positionOf(index)) {
      wrong.push(`entry ${count(index + 1)} has position ${position}, the draw gives it ${positionOf(index)}`);
    }
  };
  const page = async (offset: number, limit: number) => {
    const answer = await client.drawPositions(eventId, offset, limit);
    if (!answer) throw new Mismatch('/private/draw_positions: the draw has not taken place yet');
    if (answer.total !== total) throw new Mismatch(`the room drew ${answer.total} entries, the publication lists ${total}`);
    answer.positions.forEach((position, i) => check(offset + i, answer.entries[i] as string, position));
  };
  if (sample === null) {
    for (let offset = 0; offset < total; offset += PAGE) {
      await page(offset, PAGE);
      if (total > 4 * PAGE) out.progress(`checking positions: ${count(Math.min(total, offset + PAGE))} of ${count(total)}`, false);
    }
    if (total > 4 * PAGE) out.progress('checking positions: done', true);
  } else {
    for (const index of randomIndexes(total, sample)) await page(index, 1);
  }
  if (wrong.length > 0) {
    throw new Mismatch(`${wrong.length} of ${checked} positions checked do not match the draw: ${wrong.slice(0, 5).join('; ')}`);
  }
  out.line(`${count(checked)} of ${count(total)} positions checked: every one matches the draw.`);
}

/** Up to `n` distinct indexes of 0..total-1, at random. */
function randomIndexes(total: number, n: number): number[] {
  if (n >= total) return Array.from({ length: total }, (_, i) => i);
  const picked = new Set<number>();
  while (picked.size < n) picked.add(Math.floor(Math.random() * total));
  return [...picked].sort((a, b) => a - b);
}
