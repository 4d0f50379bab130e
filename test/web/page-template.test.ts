// The waiting-room page as a template (docs/pages.md "Templates", "Languages"): every language has every string,
// the language is chosen from ?lang= and Accept-Language, variables are escaped, people ahead is position −
// serving clamped at 0, and a room's own template is served at /waiting-room-site/ and previewed per phase.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Languages, PAGE_PHASES, formatWait, pageVariables, peopleAhead, renderWaitingPage } from '../../src/web/page-template.ts';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { ensurePagesBuilt, startWebNode, type WebNode } from './support.ts';

const I18N = fileURLToPath(new URL('../../web/waiting-room-site/i18n/', import.meta.url));
const languages = Languages.fromDir(I18N);
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('translations', () => {
  const english = JSON.parse(readFileSync(`${I18N}en.json`, 'utf8')) as Record<string, string>;

  it('at least 12 languages, one of them right-to-left', () => {
    assert.ok(languages.tags().length >= 12, languages.tags().join(' '));
    assert.ok(languages.tags().some((tag) => languages.strings(tag).dir === 'rtl'));
  });

  for (const file of readdirSync(I18N).filter((n) => n.endsWith('.json'))) {
    it(`${file} has every string of en.json, with the same placeholders, and nothing else`, () => {
      const strings = JSON.parse(readFileSync(`${I18N}${file}`, 'utf8')) as Record<string, string>;
      assert.deepEqual(Object.keys(strings).sort(), Object.keys(english).sort());
      for (const [key, text] of Object.entries(english)) {
        assert.ok(strings[key]!.trim() !== '', `${file}: ${key} is empty`);
        assert.deepEqual(placeholders(strings[key]!), placeholders(text), `${file}: ${key}`);
      }
    });
  }

  it('?lang= wins, then Accept-Language by q (a region falls back to its language), then English', () => {
    assert.equal(languages.choose('de', 'fr'), 'de');
    assert.equal(languages.choose('xx', 'fr;q=0.5, ar;q=0.9'), 'ar');
    assert.equal(languages.choose(undefined, 'pt-BR,pt;q=0.9'), 'pt');
    assert.equal(languages.choose(undefined, 'xx, *'), 'en');
    assert.equal(languages.choose(undefined, undefined), 'en');
  });
});

describe('template variables', () => {
  const base = { languages, defaultTemplate: '', nowMs: Date.parse('2026-11-24T17:00:00Z') };

  it('people ahead: those between the serving counter and the place (0 for the next in line), never below 0', () => {
    assert.equal(peopleAhead(1_342, 1_200), 141);
    assert.equal(peopleAhead(1_201, 1_200), 0, 'the next in line');
    assert.equal(peopleAhead(5, 9), 0);
    const vars = pageVariables({ ...base, room: { event_id: 'E' }, phase: 'waiting', lang: 'de', serving: 1_200, visitor: { position: 2_342 } });
    assert.equal(vars.people_ahead, 1_141);
    assert.equal(vars.people_ahead_text, '1.141', 'formatted for the language');
  });

  it('the wait is a range in the language, formatted by Intl', () => {
    const en = languages.strings('en');
    assert.equal(formatWait(240, 420, 'en', en), '4–7 minutes');
    assert.equal(formatWait(10, 50, 'en', en), 'less than 1 minute');
    assert.equal(formatWait(7_200, 7_200, 'en', en), 'about 2 hours');
    assert.match(formatWait(240, 420, 'fr', languages.strings('fr')), /4.7 minutes/);
  });

  it('the pre-queue has a countdown to the start and a notice naming it', () => {
    const vars = pageVariables({ ...base, room: { event_id: 'E', event_start_time: '2026-11-24T18:00:00Z' }, phase: 'prequeue', lang: 'en' });
    assert.equal(vars.countdown_seconds, 3_600);
    assert.equal(vars.phase_prequeue, true);
    assert.match(String(vars.phase_notice), /Nov 24, 2026.*6:00 PM UTC/);
  });

  it("the room's allowed_api_origins are the page's api_origins (none: the page calls only its own origin)", () => {
    const vars = pageVariables({ ...base, room: { event_id: 'E', allowed_api_origins: ['https://api.example', 'http://127.0.0.1:8080'] }, phase: 'waiting', lang: 'en' });
    assert.equal(vars.api_origins, 'https://api.example http://127.0.0.1:8080');
    assert.equal(pageVariables({ ...base, room: { event_id: 'E' }, phase: 'waiting', lang: 'en' }).api_origins, '');
  });

  it('variables are escaped: a room name cannot inject markup; the strings block cannot be closed', () => {
    const html = renderWaitingPage({
      ...base,
      room: { event_id: 'E', page: '<h1>{{event_id}}</h1><p>{{t.leave}}</p><script type="application/json">{{{strings_json}}}</script>' },
      phase: 'waiting',
      lang: 'en',
      languages: new Languages(new Map([['en', { ...languages.strings('en'), leave: '<b>x</b></script>' }]])),
    });
    assert.match(html, /<p>&lt;b&gt;x&lt;&#x2F;b&gt;&lt;&#x2F;script&gt;<\/p>/);
    assert.doesNotMatch(html.slice(html.indexOf('application/json')), /<\/script>.*<\/script>/s);
  });

  it('a template that does not parse gives the default page (never an error to a visitor)', () => {
    const html = renderWaitingPage({ ...base, room: { event_id: 'E', page: '{{#open}}never closed' }, phase: 'waiting', lang: 'en', defaultTemplate: 'default {{event_id}}' });
    assert.equal(html, 'default E');
  });
});

describe('served pages', () => {
  let node: WebNode;
  const privateCall = (method: string, path: string, body?: unknown) =>
    fetch(`${node.url}/private${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  before(async () => {
    ensurePagesBuilt();
    node = await startWebNode();
  });
  after(() => node.stop());

  it('the default page comes in the language asked for, right-to-left for Arabic, and says so in Vary', async () => {
    const ar = await fetch(`${node.url}/waiting-room-site/`, { headers: { 'accept-language': 'ar,en;q=0.5' } });
    const html = await ar.text();
    assert.match(html, /<html lang="ar" dir="rtl">/);
    assert.match(ar.headers.get('vary') ?? '', /accept-language/);
    const de = await (await fetch(`${node.url}/waiting-room-site/?lang=de`, { headers: { 'accept-language': 'ar' } })).text();
    assert.match(de, /<html lang="de" dir="ltr">/);
  });

  it("a room's own template (the page setting, through the rooms API) is what its visitors get", async () => {
    const page = '<!doctype html><html lang="{{lang}}"><title>{{event_id}}</title><p id="phase">{{phase}}</p>{{#phase_paused}}<p>Back soon</p>{{/phase_paused}}';
    assert.equal((await privateCall('PUT', '/rooms/Branded', { page, state: 'paused' })).status, 201);
    const branded = await fetch(`${node.url}/waiting-room-site/?eventId=Branded`);
    assert.match(await branded.text(), /<p id="phase">paused<\/p><p>Back soon<\/p>/);
    // Its own styles inline, its logo from its CDN; scripts still only from here.
    assert.match(branded.headers.get('content-security-policy') ?? '', /style-src 'self' 'unsafe-inline'.*script-src 'self';/);
    const largest = await privateCall('PATCH', '/rooms/Branded', { page: `<p>{{phase}}</p>${'é'.repeat(1_048_576 - 16)}` });
    assert.equal(largest.status, 200, 'a template of 1 Mi characters (2 bytes each in UTF-8 here) is taken');
    const tooBig = await privateCall('PATCH', '/rooms/Branded', { page: 'x'.repeat(1_048_577) });
    assert.equal(tooBig.status, 400);
    assert.match(((await tooBig.json()) as { error: string }).error, /page/);
  });

  it('GET /private/rooms/{id}/preview?phase=… renders every phase; an unknown phase or room is a client error', async () => {
    assert.equal((await privateCall('PUT', '/rooms/Plain', {})).status, 201);
    for (const phase of PAGE_PHASES) {
      const response = await privateCall('GET', `/rooms/Plain/preview?phase=${phase}&lang=fr`);
      assert.equal(response.status, 200, phase);
      const html = await response.text();
      assert.match(html, /<html lang="fr"/);
      assert.doesNotMatch(html, /<script type="module"/, 'a still picture');
      if (phase === 'waiting') assert.match(html, /<dd id="ahead">141<\/dd>/);
    }
    assert.equal((await privateCall('GET', '/rooms/Plain/preview?phase=dancing')).status, 400);
    assert.equal((await privateCall('GET', '/rooms/Nope/preview')).status, 404);
    assert.equal((await fetch(`${node.url}/private/rooms/Plain/preview`)).status, 401);
  });
});
