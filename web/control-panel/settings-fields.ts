// Every setting of a room (src/domain/room-settings.ts) as a field of the panel's form, and the conversions
// between a room as the rooms API answers it, the form's values and the body of a PUT. Pure (no DOM): tested in
// Node, where a test also checks that every property of the schema has its field here.
//
// The form sends what the operator typed; the server checks it (one schema), and its 400 names the field whose
// message the form shows (fieldFor).

export type FieldKind = 'int' | 'number' | 'bool' | 'text' | 'secret' | 'time' | 'select' | 'webhooks' | 'lines' | 'template';

export interface Field {
  /** The setting's path, dotted: validity_period, inlet.pause_check.timeout. */
  name: string;
  label: string;
  kind: FieldKind;
  help: string;
  group: string;
  options?: readonly string[];
  /** May be left empty (then it is left out of the body). */
  optional?: boolean;
}

const TIME_HELP = 'Picked in your time zone; the UTC time the room keeps is shown below. Empty: not scheduled.';

export const FIELDS: readonly Field[] = [
  { group: 'Room', name: 'event_id', label: 'Room ID (event_id)', kind: 'text', help: "Letters, digits, '.', '_', '~' or '-'; used in URLs." },
  { group: 'Room', name: 'state', label: 'State', kind: 'select', options: ['open', 'paused', 'closed', 'off'], help: 'paused: joins accepted, nobody let in. closed: joins refused. off: no queue, everyone let in.' },
  { group: 'Room', name: 'validity_period', label: 'Token lifetime (validity_period, s)', kind: 'int', help: 'How long an issued token is valid.' },
  { group: 'Room', name: 'signing_algorithm', label: 'Token signature (signing_algorithm)', kind: 'select', options: ['RS256', 'ES256', 'EdDSA'], help: "RS256 (VWR's); ES256 and EdDSA sign several times faster. The room's JWKS lists all three." },
  { group: 'Room', name: 'issuer', label: 'Token issuer (issuer)', kind: 'text', optional: true, help: 'Empty: the public URL.' },
  { group: 'Room', name: 'enable_events_generation', label: 'Emit metrics events (enable_events_generation)', kind: 'bool', help: 'waiting_room_metrics events every metrics interval.' },

  { group: 'Admission', name: 'admission', label: 'Admission', kind: 'select', options: ['manual', 'automatic'], help: 'manual: you (or an inlet) move the serving counter. automatic: the room admits by itself within the two limits.' },
  { group: 'Admission', name: 'new_users_per_minute', label: 'New users per minute (new_users_per_minute)', kind: 'int', optional: true, help: 'Automatic: at most this many let in in any 60 s.' },
  { group: 'Admission', name: 'total_active_users', label: 'Total active users (total_active_users)', kind: 'int', optional: true, help: 'Automatic: at most this many in at once (let in and not arrived, plus active sessions).' },
  { group: 'Admission', name: 'presence_timeout', label: 'Absent after (presence_timeout, s)', kind: 'int', optional: true, help: 'A waiting visitor whose page beats (the default page, the gate) and has not beaten for this long is absent: skipped by admission, keeping their place. A visitor who never beat (VWR clients) is never absent. Empty = 60; 0 = off.' },
  { group: 'Admission', name: 'arrival_window', label: 'Arrival window (arrival_window, s)', kind: 'int', help: 'Someone let in who has not claimed within it stops counting against total active users (they may still claim). 0 = off.' },
  { group: 'Admission', name: 'enable_queue_position_expiry', label: 'Expire unclaimed turns (enable_queue_position_expiry)', kind: 'bool', help: 'Someone let in who does not claim in time loses the turn. Keep it on for automatic rooms.' },
  { group: 'Admission', name: 'queue_position_expiry_period', label: 'Claim window (queue_position_expiry_period, s)', kind: 'int', help: 'How long someone let in has to claim their token.' },
  { group: 'Admission', name: 'incr_serving_on_expiry', label: 'Give expired turns to the next in line (incr_serving_on_expiry)', kind: 'bool', help: 'Manual rooms: the counter moves on by one for each expired turn.' },
  { group: 'Admission', name: 'session_duration', label: 'Gate session length (session_duration, s)', kind: 'int', help: 'A gate session ends after this long without a request.' },
  { group: 'Admission', name: 'session_renewal', label: 'Renew gate sessions on use (session_renewal)', kind: 'bool', help: 'Off: a session ends session_duration after admission, whatever the traffic.' },

  { group: 'Schedule', name: 'prequeue_start_time', label: 'Pre-queue opens (prequeue_start_time)', kind: 'time', optional: true, help: `Joins are refused before it. ${TIME_HELP}` },
  { group: 'Schedule', name: 'event_start_time', label: 'Start (event_start_time)', kind: 'time', optional: true, help: `Nobody is let in before it. ${TIME_HELP}` },
  { group: 'Schedule', name: 'event_end_time', label: 'End (event_end_time)', kind: 'time', optional: true, help: `The room closes then. ${TIME_HELP}` },
  { group: 'Schedule', name: 'shuffle_at_event_start', label: 'Draw places at the start (shuffle_at_event_start)', kind: 'bool', help: 'Everyone who joined before the start gets a random place, with a published commitment.' },

  { group: 'Webhooks', name: 'webhooks', label: 'Webhooks', kind: 'webhooks', optional: true, help: 'One per line: the URL, a space, the secret (16+ characters). A URL already set keeps its secret when you leave it out.' },

  { group: 'Inlet', name: 'inlet.strategy', label: 'Inlet', kind: 'select', options: ['', 'periodic', 'max_size'], optional: true, help: 'Who moves the counter from inside the server: none, every interval (periodic), or up to a number of active tokens (max_size).' },
  { group: 'Inlet', name: 'inlet.interval', label: 'Periodic: interval (s)', kind: 'int', optional: true, help: 'Seconds between increments (default 60).' },
  { group: 'Inlet', name: 'inlet.increment_by', label: 'Periodic: let in per tick (increment_by)', kind: 'int', optional: true, help: 'People let in at each tick.' },
  { group: 'Inlet', name: 'inlet.start_time', label: 'Periodic: start (epoch seconds)', kind: 'int', optional: true, help: 'Ticks let people in after it (0: at once).' },
  { group: 'Inlet', name: 'inlet.end_time', label: 'Periodic: end (epoch seconds)', kind: 'int', optional: true, help: '0 or empty: no end.' },
  { group: 'Inlet', name: 'inlet.pause_check.url', label: 'Periodic: pause check URL', kind: 'text', optional: true, help: 'A health URL: a non-2xx answer, a timeout or no answer pauses the inlet.' },
  { group: 'Inlet', name: 'inlet.pause_check.json_path', label: 'Pause check: JSON path', kind: 'text', optional: true, help: 'A number in the answer, like $.cpu.load (with a threshold).' },
  { group: 'Inlet', name: 'inlet.pause_check.threshold', label: 'Pause check: threshold', kind: 'number', optional: true, help: 'The inlet pauses while the number is over this.' },
  { group: 'Inlet', name: 'inlet.pause_check.timeout', label: 'Pause check: timeout (s)', kind: 'number', optional: true, help: 'Seconds to wait for the answer (default 5).' },
  { group: 'Inlet', name: 'inlet.max_size', label: 'Max size: active tokens (max_size)', kind: 'int', optional: true, help: 'How many may hold an active token at once.' },

  { group: 'Bot defence', name: 'bot_defence.challenge', label: 'Proof of work at join (bot_defence.challenge)', kind: 'select', options: ['', 'off', 'always', 'auto'], optional: true, help: 'Empty: no bot defence at all. auto: a challenge when the room or one client joins too fast.' },
  { group: 'Bot defence', name: 'bot_defence.difficulty', label: 'Difficulty (bot_defence.difficulty)', kind: 'int', optional: true, help: 'Work of a challenge at rest (default 50,000: about a third of a second on a phone).' },
  { group: 'Bot defence', name: 'bot_defence.max_difficulty', label: 'Highest difficulty under a flood (bot_defence.max_difficulty)', kind: 'int', optional: true, help: 'The automatic raise stops here (default 1,000,000).' },
  { group: 'Bot defence', name: 'bot_defence.room_threshold_per_minute', label: 'Room joins a minute before everyone is asked (room_threshold_per_minute)', kind: 'int', optional: true, help: 'auto: joins faster than this (measured over about a second) make every join solve a challenge until the rate has stayed under it for a minute (default 600).' },
  { group: 'Bot defence', name: 'bot_defence.client_threshold_per_minute', label: 'Joins a minute of one client before it is asked (client_threshold_per_minute)', kind: 'int', optional: true, help: 'auto: default 1, so a second join within a minute is challenged.' },
  { group: 'Bot defence', name: 'bot_defence.challenge_ttl', label: 'Challenge validity (bot_defence.challenge_ttl, s)', kind: 'int', optional: true, help: 'Each challenge counts once (default 120).' },
  { group: 'Bot defence', name: 'bot_defence.joins_per_client_per_minute', label: 'Joins a minute per client (joins_per_client_per_minute)', kind: 'int', optional: true, help: 'Then 429 with Retry-After. Empty: no limit.' },
  { group: 'Bot defence', name: 'bot_defence.enqueue_key_secret', label: 'Enqueue key secret (bot_defence.enqueue_key_secret)', kind: 'secret', optional: true, help: 'The key your site signs enqueue keys with (32+ characters). Empty: keep the one set.' },
  { group: 'Bot defence', name: 'bot_defence.require_enqueue_key', label: 'Only joins with an enqueue key (require_enqueue_key)', kind: 'bool', help: 'One place per identity your site vouches for.' },
  { group: 'Bot defence', name: 'bot_defence.infinite_queue', label: 'Park refused bots in a line that never moves (infinite_queue)', kind: 'bool', help: 'A failed proof or a client over its limit gets a place that is never served, instead of an error.' },

  { group: 'Waiting page', name: 'page', label: 'Page template (page)', kind: 'template', optional: true, help: 'HTML with Mustache variables ({{people_ahead_text}}, {{wait_text}}, {{t.reserve}}…; docs/pages.md). Empty: the default page. Preview: GET /private/rooms/{id}/preview?phase=waiting.' },
  { group: 'Waiting page', name: 'branding.title', label: 'Page title (branding.title)', kind: 'text', optional: true, help: 'The heading and the tab title. Empty: "Waiting room" in the visitor\'s language.' },
  { group: 'Waiting page', name: 'branding.site_name', label: 'Site name (branding.site_name)', kind: 'text', optional: true, help: 'Shown in the header.' },
  { group: 'Waiting page', name: 'branding.message', label: 'Message (branding.message)', kind: 'text', optional: true, help: 'Under the heading, in every phase.' },
  { group: 'Waiting page', name: 'branding.paused_message', label: 'Message while paused (branding.paused_message)', kind: 'text', optional: true, help: 'Shown to everyone while the room is paused.' },
  { group: 'Waiting page', name: 'branding.closed_message', label: 'Message once closed (branding.closed_message)', kind: 'text', optional: true, help: 'Shown to everyone once the room is closed or ended ("Sold out").' },
  { group: 'Waiting page', name: 'branding.logo_url', label: 'Logo URL (branding.logo_url)', kind: 'text', optional: true, help: 'An https URL or a path of this host (/logo.png).' },
  { group: 'Waiting page', name: 'branding.logo_alt', label: 'Logo text (branding.logo_alt)', kind: 'text', optional: true, help: 'For screen readers. Empty: the site name.' },
  { group: 'Waiting page', name: 'branding.link_url', label: 'Link back (branding.link_url)', kind: 'text', optional: true, help: 'An https URL or a path of this host: in the header and at the end of a closed sale.' },
  { group: 'Waiting page', name: 'sample_store', label: 'Sample store checkout (sample_store)', kind: 'bool', help: 'The demo only: at their turn visitors buy a widget at /store. Off: "It\'s your turn" and a link on to the site.' },
  { group: 'Waiting page', name: 'branding.link_text', label: 'Link words (branding.link_text)', kind: 'text', optional: true, help: 'Empty: "Back to the site".' },
  { group: 'Waiting page', name: 'branding.colors.background', label: 'Background colour (branding.colors.background)', kind: 'text', optional: true, help: '#rgb or #rrggbb; every pair must keep 4.5:1 contrast.' },
  { group: 'Waiting page', name: 'branding.colors.text', label: 'Text colour (branding.colors.text)', kind: 'text', optional: true, help: '#rgb or #rrggbb.' },
  { group: 'Waiting page', name: 'branding.colors.accent', label: 'Accent colour (branding.colors.accent)', kind: 'text', optional: true, help: 'Buttons and links: #rgb or #rrggbb.' },
  { group: 'Waiting page', name: 'branding.colors.accent_text', label: 'Button text colour (branding.colors.accent_text)', kind: 'text', optional: true, help: '#rgb or #rrggbb.' },
  { group: 'Waiting page', name: 'branding.colors.header_background', label: 'Header colour (branding.colors.header_background)', kind: 'text', optional: true, help: '#rgb or #rrggbb.' },
  { group: 'Waiting page', name: 'branding.colors.header_text', label: 'Header text colour (branding.colors.header_text)', kind: 'text', optional: true, help: '#rgb or #rrggbb.' },
  { group: 'Waiting page', name: 'allowed_api_origins', label: 'Other API origins the page may call (allowed_api_origins)', kind: 'lines', optional: true, help: 'One origin per line (scheme://host[:port]) the waiting page may use as publicApiUrl or commerceApiUrl besides its own. Empty: its own origin only.' },
  { group: 'OpenID Connect', name: 'oidc.redirect_uris', label: 'OIDC redirect URIs', kind: 'lines', optional: true, help: 'One per line; empty: no OpenID Connect client.' },
  { group: 'Gate', name: 'gate.origin', label: 'Protected site (gate.origin)', kind: 'text', optional: true, help: 'http(s)://host[:port] the gate sends admitted visitors to. Empty: this room protects nothing behind the gate.' },
  { group: 'Gate', name: 'gate.routes', label: 'Requests of this room (gate.routes)', kind: 'lines', optional: true, help: 'One per line: a path prefix (/shop), or a host, a space and a path (shop.example.com /). Empty: every request.' },
  { group: 'Gate', name: 'gate.bypass.paths', label: 'Never queued: paths (gate.bypass.paths)', kind: 'lines', optional: true, help: 'One path prefix per line, e.g. /static/ or /healthz.' },
  { group: 'Gate', name: 'gate.bypass.ips', label: 'Never queued: client IPs (gate.bypass.ips)', kind: 'lines', optional: true, help: 'One IP address or CIDR per line (behind a load balancer, see --trust-proxy).' },
  { group: 'Gate', name: 'gate.bypass.headers', label: 'Never queued: headers (gate.bypass.headers)', kind: 'lines', optional: true, help: 'One per line: Name: value (an exact match). Stored values show as [redacted]: leave them so to keep them.' },
  { group: 'Gate', name: 'gate.queueing_status_code', label: 'Waiting page status (gate.queueing_status_code)', kind: 'int', optional: true, help: '200 (default) keeps crawlers and monitors quiet; 503 tells them to come back later.' },
  { group: 'Gate', name: 'gate.forward_token_cookie', label: 'Pass the admission cookie to the site (gate.forward_token_cookie)', kind: 'bool', help: 'Off (default): the site never receives Anteroom\'s cookies. On: anteroom_token is passed on, for a site that checks the token itself (the authorizer).' },
  { group: 'Gate', name: 'gate.edge_renewal_interval', label: 'Edge: renew admission every (gate.edge_renewal_interval, seconds)', kind: 'int', optional: true, help: 'Verify at the edge (docs/edge.md): how often nginx asks Anteroom about an admitted visitor, 5–3600 s. Empty: a tenth of session_duration (at least 5 s).' },
  { group: 'Gate', name: 'allowed_return_origins', label: 'Hand-off: allowed return origins (allowed_return_origins)', kind: 'lines', optional: true, help: 'One origin per line (scheme://host[:port]) the page may send a served visitor back to.' },

  { group: 'OpenID Connect', name: 'oidc.client_secret', label: 'OIDC client secret', kind: 'secret', optional: true, help: 'Empty: keep the one set (or generate one).' },
];

export type FormValues = Record<string, string | boolean>;
type Json = Record<string, unknown>;

const INT = /^-?\d+$/;

function scalar(field: Field, raw: string | boolean): unknown {
  if (field.kind === 'bool') return raw === true;
  // A template goes exactly as written (its spacing is the operator's).
  if (field.kind === 'template') return String(raw);
  const text = String(raw).trim();
  if (field.kind === 'int' && INT.test(text)) return Number(text);
  if (field.kind === 'number' && text !== '' && Number.isFinite(Number(text))) return Number(text);
  // Anything else goes as typed: the server names what is wrong with it.
  return text;
}

function isEmpty(raw: string | boolean | undefined): boolean {
  return raw === undefined || (typeof raw === 'string' && raw.trim() === '');
}

function fieldNamed(name: string): Field {
  const field = FIELDS.find((f) => f.name === name);
  if (!field) throw new Error(`no field ${name}`);
  return field;
}

/** A multi-line field's non-empty lines, trimmed. */
function lines(raw: string | boolean | undefined): string[] {
  return String(raw ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** The body of a PUT from the form: every top-level setting, the empty optional ones left out. */
export function formToBody(values: FormValues): Json {
  const body: Json = {};
  const pick = (name: string): unknown => {
    const raw = values[name];
    const field = fieldNamed(name);
    if (field.kind !== 'bool' && isEmpty(raw)) return undefined;
    return scalar(field, raw ?? '');
  };
  for (const field of FIELDS) {
    if (field.name.includes('.') || field.kind === 'webhooks') continue;
    if (field.kind === 'lines') {
      const list = lines(values[field.name]);
      if (list.length > 0) body[field.name] = list;
      continue;
    }
    const value = pick(field.name);
    if (value !== undefined) body[field.name] = value;
  }
  const origin = pick('gate.origin');
  if (origin !== undefined) {
    const routes = lines(values['gate.routes']).map((line) => {
      const [first, second] = line.split(/\s+/, 2);
      return second === undefined ? { path: first } : { host: first, path: second };
    });
    const bypass: Json = {};
    const paths = lines(values['gate.bypass.paths']);
    const ips = lines(values['gate.bypass.ips']);
    const headers = Object.fromEntries(
      lines(values['gate.bypass.headers']).map((line) => {
        const colon = line.indexOf(':');
        return colon < 0 ? [line, ''] : [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
      }),
    );
    if (paths.length > 0) bypass.paths = paths;
    if (ips.length > 0) bypass.ips = ips;
    if (Object.keys(headers).length > 0) bypass.headers = headers;
    const status = pick('gate.queueing_status_code');
    const renewal = pick('gate.edge_renewal_interval');
    const forwardToken = pick('gate.forward_token_cookie');
    body.gate = {
      origin,
      routes: routes.length > 0 ? routes : [{ path: '/' }],
      ...(Object.keys(bypass).length > 0 ? { bypass } : {}),
      ...(status === undefined ? {} : { queueing_status_code: status }),
      ...(renewal === undefined ? {} : { edge_renewal_interval: renewal }),
      ...(forwardToken === true ? { forward_token_cookie: true } : {}),
    };
  }
  const webhooks = String(values.webhooks ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [url, secret] = line.split(/\s+/, 2);
      return secret === undefined ? { url } : { url, secret };
    });
  body.webhooks = webhooks;
  const strategy = String(values['inlet.strategy'] ?? '').trim();
  if (strategy === 'periodic') {
    const inlet: Json = { strategy };
    for (const key of ['interval', 'increment_by', 'start_time', 'end_time']) {
      const value = pick(`inlet.${key}`);
      if (value !== undefined) inlet[key] = value;
    }
    if (!isEmpty(values['inlet.pause_check.url'])) {
      const check: Json = {};
      for (const key of ['url', 'json_path', 'threshold', 'timeout']) {
        const value = pick(`inlet.pause_check.${key}`);
        if (value !== undefined) check[key] = value;
      }
      inlet.pause_check = check;
    }
    body.inlet = inlet;
  } else if (strategy !== '') {
    const inlet: Json = { strategy };
    const value = pick('inlet.max_size');
    if (value !== undefined) inlet.max_size = value;
    body.inlet = inlet;
  }
  const defence: Json = {};
  for (const field of FIELDS) {
    if (!field.name.startsWith('bot_defence.')) continue;
    const value = field.kind === 'bool' ? (values[field.name] === true ? true : undefined) : pick(field.name);
    if (value !== undefined) defence[field.name.slice('bot_defence.'.length)] = value;
  }
  if (Object.keys(defence).length > 0) body.bot_defence = defence;
  // The waiting page's words and look: the fields filled in (a PUT without them removes them).
  const branding: Json = {};
  const colours: Json = {};
  for (const field of FIELDS) {
    if (!field.name.startsWith('branding.')) continue;
    const value = pick(field.name);
    if (value === undefined) continue;
    if (field.name.startsWith('branding.colors.')) colours[field.name.slice('branding.colors.'.length)] = value;
    else branding[field.name.slice('branding.'.length)] = value;
  }
  if (Object.keys(colours).length > 0) branding.colors = colours;
  if (Object.keys(branding).length > 0) body.branding = branding;
  const uris = lines(values['oidc.redirect_uris']);
  const clientSecret = pick('oidc.client_secret');
  if (uris.length > 0 || clientSecret !== undefined) {
    body.oidc = { redirect_uris: uris, ...(clientSecret === undefined ? {} : { client_secret: clientSecret }) };
  }
  return body;
}

/** The form's values for a room as the rooms API answers it (secrets are never answered: they stay empty). */
export function roomToValues(room: Json): FormValues {
  const values: FormValues = {};
  const at = (path: string): unknown => path.split('.').reduce<unknown>((node, key) => (node as Json | undefined)?.[key], room);
  for (const field of FIELDS) {
    const value = at(field.name);
    if (field.kind === 'bool') values[field.name] = value === true;
    else if (field.kind === 'secret') values[field.name] = '';
    else if (field.kind === 'webhooks') values[field.name] = Array.isArray(value) ? value.map((w) => String((w as Json).url)).join('\n') : '';
    else if (field.name === 'gate.routes') values[field.name] = Array.isArray(value) ? value.map((r) => `${(r as Json).host ? `${String((r as Json).host)} ` : ''}${String((r as Json).path)}`).join('\n') : '';
    else if (field.name === 'gate.bypass.headers') values[field.name] = value && typeof value === 'object' ? Object.entries(value as Json).map(([k, v]) => `${k}: ${String(v)}`).join('\n') : '';
    else if (field.kind === 'lines') values[field.name] = Array.isArray(value) ? value.join('\n') : '';
    else values[field.name] = value === undefined || value === null ? '' : String(value);
  }
  return values;
}

/** A new room's values: the schema's defaults, as a PUT without them would fill in. */
export function newRoomValues(): FormValues {
  return {
    ...roomToValues({}),
    state: 'open',
    admission: 'manual',
    validity_period: '3600',
    signing_algorithm: 'RS256',
    enable_queue_position_expiry: true,
    queue_position_expiry_period: '900',
    session_duration: '300',
    session_renewal: true,
  };
}

/**
 * The field a 400 of the rooms API names, from its message ("Invalid room settings: webhooks[0].secret: is
 * required"): the field of that path, else of the nearest enclosing one, else the first inside it. Undefined
 * when the message names none of the form's fields.
 */
export function fieldFor(message: string): { field: string | undefined; rule: string } {
  const text = message.replace(/^Invalid room settings:\s*/, '');
  const match = /^([A-Za-z0-9_.[\]]+): (.*)$/s.exec(text);
  if (!match) return { field: undefined, rule: text };
  const path = match[1]!.replace(/\[\d+\].*$/, '');
  const rule = match[2]!;
  const names = FIELDS.map((f) => f.name);
  for (let at = path; at !== ''; at = at.includes('.') ? at.slice(0, at.lastIndexOf('.')) : '') {
    if (names.includes(at)) return { field: at, rule };
    const inside = names.find((name) => name.startsWith(`${at}.`));
    if (inside) return { field: inside, rule };
  }
  return { field: undefined, rule: `${match[1]}: ${rule}` };
}
