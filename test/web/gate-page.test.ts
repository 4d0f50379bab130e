// The gate's waiting page (src/web/gate-page.ts): rendered once per shape and filled in per visitor, it is
// exactly the page the template renders for that visitor, and its gzip (src/web/spliced-gzip.ts) decodes to it;
// the refresh URL is this host's path, percent-encoded and escaped.

import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { before, describe, it } from 'node:test';
import { eventSettings } from '../support/node.ts';
import { gatePageInput, refreshContent, renderGatePage, type WaitingPageVisitor } from '../../src/web/gate-page.ts';
import { renderWaitingPage, type PagePhase } from '../../src/web/page-template.ts';
import { SplicedGzip } from '../../src/web/spliced-gzip.ts';
import { WEB_DIST_DIR } from '../../src/web/static-pages.ts';
import { loadPageAssets, type PageAssets } from '../../src/web/waiting-page.ts';
import { ensurePagesBuilt } from './support.ts';

const nowMs = Date.UTC(2026, 10, 22, 12, 0, 0);

describe('SplicedGzip', () => {
  it('decodes (CRC and length checked) to the pieces with the values between them', () => {
    const big = 'é'.repeat(40_000); // 80,000 bytes: more than one stored block
    const cases: [string[], string[]][] = [
      [['only'], []],
      [['', ''], ['']],
      [['<p>', '</p>'], ['1 342']],
      [['head '.repeat(500), ' middle '.repeat(300), ' tail'.repeat(700)], [big, '42']],
      [['a', 'b', 'c', 'd'], ['', 'x'.repeat(70_000), '']],
    ];
    for (const [pieces, values] of cases) {
      const { body, gzip } = new SplicedGzip(pieces).fill(values);
      const expected = pieces.map((piece, i) => piece + (values[i] ?? '')).join('');
      assert.equal(body.toString(), expected);
      assert.equal(gunzipSync(gzip).toString(), expected);
    }
  });

  it('refuses the wrong number of values', () => {
    assert.throws(() => new SplicedGzip(['a', 'b']).fill([]), /needs 1 values/);
  });
});

describe('the gate page for each visitor', () => {
  let assets: PageAssets;
  before(() => {
    ensurePagesBuilt();
    assets = loadPageAssets(WEB_DIST_DIR)!;
  });

  /** The template rendered for this visitor in full, as the site renders it (the gate's assets path). */
  function direct(room: ReturnType<typeof eventSettings>, visitor: WaitingPageVisitor, phase: PagePhase, lang: string): string {
    const html = renderWaitingPage(gatePageInput(room, visitor, assets, phase, lang, nowMs));
    return html.replaceAll('="../assets/', '="/_anteroom/assets/');
  }
  const withoutGateTags = (html: string) =>
    html.replace(/\n {4}<meta name="anteroom-gate" content="[^"]*" data-event-id="[^"]*">\n {4}<noscript><meta http-equiv="refresh" content="[^"]*"><\/noscript>/, '');

  const visitors: WaitingPageVisitor[] = [
    { mode: 'gate', reason: 'queued', position: 1_342, serving: 1_200, refresh: { seconds: 13, path: '/a?b=1&c=2' } },
    { mode: 'gate', reason: 'queued', position: 7, serving: 7, refresh: { seconds: 5, path: '/' } },
    { mode: 'gate', reason: 'queued', position: 12, serving: 0, refresh: { seconds: 30, path: '/x' }, acceptLanguage: 'ar' },
    { mode: 'gate', reason: 'queued', serving: 0, refresh: { seconds: 30, path: '/x' }, acceptLanguage: 'de' },
    { mode: 'gate', reason: 'origin-down', refresh: { seconds: 5, path: '/down' } },
  ];

  for (const [name, page] of [
    ['the default page', undefined],
    [
      "a room's own template, with sections on the visitor's values",
      '<!doctype html><html><head><title>{{event_id}}</title></head><body>{{#people_ahead}}ahead {{people_ahead}}{{/people_ahead}}{{^people_ahead}}none ahead{{/people_ahead}} {{^position}}no number{{/position}}{{#position}}#{{{position}}}{{/position}} <i data-r="{{refresh_interval_seconds}}">{{gate_noscript}}</i> {{serving_text}}</body></html>',
    ],
  ] as const) {
    it(`${name}: the cached shape filled in is the template rendered for that visitor`, () => {
      const room = eventSettings('Shop', page === undefined ? {} : { page });
      // Every visitor renders after the others: each is filled into a shape another visitor's request made.
      for (const visitor of [...visitors, ...visitors]) renderGatePage(room, visitor, WEB_DIST_DIR, nowMs);
      for (const visitor of visitors) {
        const sent = renderGatePage(room, visitor, WEB_DIST_DIR, nowMs);
        const lang = visitor.acceptLanguage ?? 'en';
        assert.equal(withoutGateTags(sent.body.toString()), direct(room, visitor, 'waiting', lang), `${lang} ${visitor.position}`);
        assert.equal(gunzipSync(sent.gzip).toString(), sent.body.toString());
        assert.equal(sent.br, undefined, 'no brotli: it cannot be spliced');
        assert.ok(sent.body.toString().includes(`<noscript><meta http-equiv="refresh" content="${refreshContent(visitor.refresh)}"></noscript>`));
      }
      if (page !== undefined) {
        const html = (visitor: WaitingPageVisitor) => renderGatePage(room, visitor, WEB_DIST_DIR, nowMs).body.toString();
        assert.match(html(visitors[0]!), /<body>ahead 141 #1342 <i data-r="13">This page updates itself every 13 seconds\.<\/i> 1,200<\/body>/);
        assert.match(html(visitors[1]!), /<body>none ahead #7 <i data-r="5">/);
        assert.match(html(visitors[3]!), /<body>none ahead no number <i data-r="30">Ihr Platz in der Schlange wird gesucht… Diese Seite aktualisiert sich alle 30 Sekunden von selbst\.<\/i> 0<\/body>/);
      }
    });
  }

  it('a template without <head> still gets the refresh, where the parser makes the head', () => {
    const visitor = visitors[0]!;
    const bare = renderGatePage(eventSettings('Bare', { page: '<!doctype html><p>{{position_text}}</p>' }), visitor, WEB_DIST_DIR, nowMs).body.toString();
    assert.equal(
      bare,
      `<!doctype html><meta name="anteroom-gate" content="queued" data-event-id="Bare">\n    <noscript><meta http-equiv="refresh" content="13;url=/a?b=1&amp;c=2"></noscript><p>1,342</p>`,
    );
  });

  it('the refresh names a path of this host, percent-encoded and escaped for the attribute', () => {
    assert.equal(refreshContent({ seconds: 12, path: '/p?a=1&b=2' }), '12;url=/p?a=1&amp;b=2');
    assert.equal(refreshContent({ seconds: 5, path: `/q?x="><'\`\\ é|{}^` }), '5;url=/q?x=%22%3E%3C%27%60%5C%20%C3%A9%7C%7B%7D%5E');
    for (const path of ['//evil.example/x', 'https://evil.example/', 'evil.example', '']) {
      assert.equal(refreshContent({ seconds: 5, path }), '5;url=/', path);
    }
    assert.equal(refreshContent({ seconds: 7.4, path: '/' }), '7;url=/');
  });
});
