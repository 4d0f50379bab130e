// The gate's pure steps: which room a request belongs to (host, longest path by segment) and the bypass rules.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BypassRules } from '../../src/gate/bypass.ts';
import { PlaceCookies } from '../../src/gate/cookies.ts';
import { matchRoom, pathMatches } from '../../src/gate/route-match.ts';
import { eventSettings } from '../support/node.ts';

const room = (id: string, routes: { host?: string; path: string }[]) =>
  eventSettings(id, { gate: { origin: 'http://127.0.0.1:3000', routes, queueing_status_code: 200 } });

describe('matchRoom', () => {
  const rooms = [
    room('All', [{ path: '/' }]),
    room('Shop', [{ host: 'shop.example.com', path: '/' }]),
    room('Drop', [{ host: 'shop.example.com', path: '/drop' }]),
    room('Tickets', [{ path: '/tickets/' }]),
    eventSettings('NoGate'),
  ];
  const id = (host: string | undefined, path: string) => matchRoom(rooms, host, path)?.room.event_id;

  it('the longest matching path for the host wins; a route naming the host beats a catch-all of equal length', () => {
    assert.equal(id('shop.example.com', '/drop/42'), 'Drop');
    assert.equal(id('shop.example.com', '/drop'), 'Drop');
    assert.equal(id('shop.example.com', '/dropping'), 'Shop', 'paths match by segment');
    assert.equal(id('shop.example.com', '/cart'), 'Shop');
    assert.equal(id('SHOP.example.com:8081', '/cart'), 'Shop', 'hosts without case and port');
    assert.equal(id('other.example.com', '/drop'), 'All');
    assert.equal(id('other.example.com', '/tickets/1'), 'Tickets');
    assert.equal(id(undefined, '/x'), 'All');
  });

  it('no room when no route matches', () => {
    assert.equal(matchRoom([room('Drop', [{ path: '/drop' }])], 'a', '/'), undefined);
    assert.equal(pathMatches('/a/', '/a'), false);
    assert.equal(pathMatches('/a/', '/a/b'), true);
  });
});

describe('BypassRules', () => {
  const rules = new BypassRules({ paths: ['/static/'], ips: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7'], headers: { 'X-Monitor': 'secret-value' } });
  const request = (over: Partial<{ path: string; ip: string; headers: Record<string, string> }>) => ({ path: '/', ip: '198.51.100.1', headers: {}, ...over });

  it('paths, IPs and CIDRs (v4, v6, v4-mapped) and exact header values', () => {
    assert.equal(rules.matches(request({ path: '/static/app.js' })), true);
    assert.equal(rules.matches(request({ path: '/staticky' })), false);
    assert.equal(rules.matches(request({ ip: '10.20.30.40' })), true);
    assert.equal(rules.matches(request({ ip: '::ffff:10.1.1.1' })), true);
    assert.equal(rules.matches(request({ ip: '2001:db8::1' })), true);
    assert.equal(rules.matches(request({ ip: '192.0.2.7' })), true);
    assert.equal(rules.matches(request({ ip: '192.0.2.8' })), false);
    assert.equal(rules.matches(request({ headers: { 'x-monitor': 'secret-value' } })), true);
    assert.equal(rules.matches(request({ headers: { 'x-monitor': 'secret-valuE' } })), false);
    assert.equal(rules.matches(request({ headers: { 'x-monitor': 'secret' } })), false);
    assert.equal(rules.matches(request({})), false);
  });
});

describe('place cookies', () => {
  it('a place cookie reads back only with the key that signed it', () => {
    const cookies = new PlaceCookies(Buffer.alloc(32, 1));
    const value = cookies.encode({ eventId: 'E', requestId: 'r', position: 3, returnTo: '/a?b=1' });
    assert.deepEqual(cookies.decode(value), { eventId: 'E', requestId: 'r', position: 3, returnTo: '/a?b=1' });
    assert.equal(new PlaceCookies(Buffer.alloc(32, 2)).decode(value), undefined);
    assert.equal(cookies.decode(`${value.split('.')[0]}x.${value.split('.')[1]}`), undefined);
  });
});

describe('the gate setting', () => {
  it('is checked by the room-settings schema: unknown keys, origins with a path, bad bypass IPs are refused', async () => {
    const { parseRoomSettings } = await import('../../src/domain/room-settings.ts');
    const gate = { origin: 'http://127.0.0.1:3000', routes: [{ path: '/' }] };
    const ok = parseRoomSettings({ event_id: 'E', gate, allowed_return_origins: ['https://shop.example.com'] });
    assert.ok(ok.ok);
    assert.equal(ok.ok && ok.settings.gate?.queueing_status_code, 200);
    const problem = (input: unknown) => {
      const parsed = parseRoomSettings({ event_id: 'E', ...(input as object) });
      return parsed.ok ? undefined : `${parsed.problem.path.join('/')}: ${parsed.problem.rule}`;
    };
    assert.match(problem({ gate: { ...gate, origni: 'x' } }) ?? '', /gate\/origni: unknown setting/);
    assert.match(problem({ gate: { ...gate, origin: 'http://127.0.0.1:3000/shop' } }) ?? '', /gate\/origin/);
    assert.match(problem({ gate: { ...gate, bypass: { ips: ['999.1.1.1'] } } }) ?? '', /gate\/bypass\/ips\/0: must be an IP address or CIDR/);
    assert.match(problem({ gate: { ...gate, bypass: { ips: ['10.0.0.0/33'] } } }) ?? '', /gate\/bypass\/ips\/0/);
    assert.match(problem({ allowed_return_origins: ['https://shop.example.com/path'] }) ?? '', /allowed_return_origins\/0/);
  });
});
