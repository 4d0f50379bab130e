// The waiting-room login page that /authorize sends visitors to: one self-contained HTML document (inline
// style and script, allowed by hash in its Content-Security-Policy; nothing from any other host).
//
// What it does, in HTTP calls (tests make the same ones):
//   1. POST <base>/join with the authorize parameters of its URL → {request_id, queue_number}. The server
//      checks them again (the URL can be edited) and binds them to the new request ID's position. The answer
//      is kept in sessionStorage, so a reload does not join a second time. Where joins are numbered later
//      (AWS: the SQS intake) the answer has no queue_number: the page asks GET /queue_num of the public API
//      every second until it answers 200 (202 = not numbered yet), as any client of the public API does;
//   2. polls GET /serving_num and /waiting_num of the public API (cacheable, the hot path every waiting
//      visitor uses) every 3 s, showing position, serving counter and people waiting;
//   3. once serving_counter ≥ queue_number, POST <base>/continue {client_id, request_id} → {redirect_to},
//      built by the server from the bound (checked) redirect URI, and goes there: redirect_uri?code=…&state=….
// Retries with capped exponential back-off on 429/5xx/network errors only; the join (not idempotent) only on
// 429/503, which mean it was refused before anything was stored.
// A room that asks a proof of work (docs/bots.md) refuses the join with 403 "Proof of work required": the page
// then imports the waiting-room page's own solver (web/waiting-room-site/solver.ts, built as
// waiting-room-site/solver.js beside the pages), which fetches GET /challenge and solves it in Web Workers, and
// joins again with the solution — invisibly, as the waiting-room page does.

import { createHash } from 'node:crypto';
import { AUTHORIZE_PARAMETERS } from './authorize-checks.ts';

const STYLE = `
:root { color-scheme: light dark; font-family: system-ui, sans-serif; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: Canvas; color: CanvasText; }
main { max-width: 28rem; padding: 2rem; text-align: center; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
dl { display: grid; grid-template-columns: 1fr 1fr; gap: .5rem 1rem; margin: 1.5rem 0; }
dt { text-align: right; opacity: .75; }
dd { margin: 0; text-align: left; font-weight: 600; font-variant-numeric: tabular-nums; }
#error { color: #c62828; }
`;

const SCRIPT = `
(() => {
  'use strict';
  const FIELDS = ${JSON.stringify(AUTHORIZE_PARAMETERS)};
  const POLL_MS = 3000;
  const PLACE_POLL_MS = 1000;
  const MAX_BACKOFF_MS = 30000;
  const api = document.documentElement.dataset.publicApi || '';
  const solver = document.documentElement.dataset.solver || '';
  const query = new URLSearchParams(location.search);
  const request = {};
  for (const name of FIELDS) {
    const value = query.get(name);
    if (value !== null && value !== '') request[name] = value;
  }
  const storageKey = 'anteroom-oidc:' + query.toString();
  const $ = (id) => document.getElementById(id);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const status = (text) => { $('status').textContent = text; };
  const fail = (text) => {
    $('status').hidden = true;
    $('error').hidden = false;
    $('error').textContent = text;
  };

  // Answers {status, body}; retries what is worth retrying, with capped exponential back-off.
  async function call(url, init, retryNetworkErrors) {
    let delay = 1000;
    for (;;) {
      let response;
      try {
        response = await fetch(url, init);
      } catch (error) {
        if (!retryNetworkErrors) throw error;
      }
      const retry = response === undefined || response.status === 429 ||
        (response.status >= 500 && (retryNetworkErrors || response.status === 503));
      if (!retry) {
        let body = {};
        try { body = await response.json(); } catch { /* not JSON */ }
        return { status: response.status, body };
      }
      await sleep(delay);
      delay = Math.min(delay * 2, MAX_BACKOFF_MS);
    }
  }

  const post = (url, body, retryNetworkErrors) => call(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }, retryNetworkErrors);

  async function join() {
    const saved = sessionStorage.getItem(storageKey);
    if (saved) return JSON.parse(saved);
    let answer = await post('join', request, false);
    for (let attempt = 0; attempt < 2 && answer.status === 403 && solver; attempt++) {
      const { PROOF_REFUSALS, solveProofOfWork } = await import(solver);
      if (!PROOF_REFUSALS.includes(answer.body.error)) break;
      status('Checking your browser…');
      const proof = await solveProofOfWork(api.endsWith('/') ? api.slice(0, -1) : api, request.client_id);
      answer = await post('join', Object.assign({}, request, { proof_of_work: proof }), false);
    }
    if (answer.status !== 200) throw new Error(answer.body.error || 'Could not join the waiting room.');
    sessionStorage.setItem(storageKey, JSON.stringify(answer.body));
    return answer.body;
  }

  async function main() {
    if (!request.client_id) return fail('This link is incomplete. Please go back and try again.');
    const eventId = encodeURIComponent(request.client_id);
    let joined;
    try {
      joined = await join();
    } catch (error) {
      return fail(error.message + ' Reload the page to try again.');
    }
    while (typeof joined.queue_number !== 'number') {
      const place = await call(api + 'queue_num?event_id=' + eventId + '&request_id=' + encodeURIComponent(joined.request_id), {}, true);
      if (place.status === 200) {
        joined = { ...joined, queue_number: Number(place.body.queue_number) };
        sessionStorage.setItem(storageKey, JSON.stringify(joined));
      } else if (place.status === 202) {
        await sleep(PLACE_POLL_MS);
      } else {
        return fail((place.body.error || 'Something went wrong.') + ' Reload the page to try again.');
      }
    }
    $('position').textContent = String(joined.queue_number);
    status('You are in the queue. Keep this page open: it moves on by itself.');
    for (;;) {
      const [serving, waiting] = await Promise.all([
        call(api + 'serving_num?event_id=' + eventId, {}, true),
        call(api + 'waiting_num?event_id=' + eventId, {}, true),
      ]);
      const counter = Number(serving.body.serving_counter);
      if (serving.status === 200) $('serving').textContent = String(counter);
      if (waiting.status === 200) $('waiting').textContent = String(waiting.body.waiting_num);
      if (serving.status === 200 && counter >= joined.queue_number) {
        const next = await post('continue', { client_id: request.client_id, request_id: joined.request_id }, true);
        if (next.status === 200) {
          status('It is your turn. Taking you back…');
          location.replace(next.body.redirect_to);
          return;
        }
        if (next.status !== 202) return fail(next.body.error || 'Something went wrong.');
      }
      await sleep(POLL_MS);
    }
  }

  main();
})();
`;

const cspHash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * Headers of the page: only its own inline style and script run, and the solver's modules and workers from
 * `solverOrigin` ('self' for the pages beside it); it talks to its own origin only, and to `publicApiOrigin`
 * when the public API it polls is elsewhere (e.g. behind a CDN, src/aws/oidc.ts).
 */
export function loginPageHeaders(publicApiOrigin?: string, solverOrigin?: string): Readonly<Record<string, string>> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': [
      "default-src 'none'",
      solverOrigin ? `script-src ${cspHash(SCRIPT)} ${solverOrigin}` : `script-src ${cspHash(SCRIPT)}`,
      `style-src ${cspHash(STYLE)}`,
      publicApiOrigin ? `connect-src 'self' ${publicApiOrigin}` : "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    // The page's URL carries state and nonce: do not hand it to the relying party as a Referer.
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/**
 * The page. `publicApi` is where it polls the public API: a path relative to the page (e.g. "../" when the
 * adapter is at /oidc and the public API at the root), so the same page works behind a proxy that adds a path
 * prefix, or an absolute base URL ending in "/". `solver`: the URL of the proof-of-work solver module
 * (waiting-room-site/solver.js), relative to the page or absolute; without it the page solves no challenge.
 */
export function loginPageHtml(publicApi: string, solver?: string): string {
  const solverAttribute = solver ? ` data-solver="${escapeHtml(solver)}"` : '';
  return `<!doctype html>
<html lang="en" data-public-api="${escapeHtml(publicApi)}"${solverAttribute}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Waiting room</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>You are in the waiting room</h1>
<p id="status" role="status">Joining the queue…</p>
<p id="error" role="alert" hidden></p>
<dl>
<dt>Your position</dt><dd id="position">–</dd>
<dt>Now serving</dt><dd id="serving">–</dd>
<dt>Waiting</dt><dd id="waiting">–</dd>
</dl>
<noscript>This waiting room needs JavaScript to keep your place.</noscript>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The page shown instead of a redirect when the request names no client or an unregistered redirect URI. */
export function errorPageHtml(error: string, description: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in error</title>
<style>${STYLE}</style></head>
<body><main><h1>This sign-in link is not valid</h1>
<p id="error">${escapeHtml(description)}</p>
<p><small>${escapeHtml(error)}</small></p></main></body>
</html>
`;
}

export const ERROR_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; style-src ${cspHash(STYLE)}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};
