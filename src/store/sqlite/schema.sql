-- Anteroom embedded store (node:sqlite). One row per event in `events` holds its counters.
CREATE TABLE IF NOT EXISTS events (
  event_id TEXT PRIMARY KEY,
  queue INTEGER NOT NULL DEFAULT 0,
  serving INTEGER NOT NULL DEFAULT 0,
  max_serving INTEGER NOT NULL DEFAULT 0,
  tokens INTEGER NOT NULL DEFAULT 0,
  expired INTEGER NOT NULL DEFAULT 0,
  completed INTEGER NOT NULL DEFAULT 0,
  abandoned INTEGER NOT NULL DEFAULT 0,
  max_expired INTEGER NOT NULL DEFAULT 0,
  expiry_enabled_since INTEGER
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS positions (
  event_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  entry_time INTEGER NOT NULL,
  PRIMARY KEY (event_id, position)
) WITHOUT ROWID;
-- No index on request_id: the IDs are random, so each join would write a random page of it (a page per join
-- at a long queue). The store keeps that index in memory, built from this table at open (request-index.ts).

-- One row each time the serving counter reaches a new highest value: the time a position P became
-- servable is the reached_at of the smallest value >= P.
CREATE TABLE IF NOT EXISTS serving_history (
  event_id TEXT NOT NULL,
  value INTEGER NOT NULL,
  reached_at INTEGER NOT NULL,
  PRIMARY KEY (event_id, value)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS tokens (
  event_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  iat INTEGER NOT NULL,
  nbf INTEGER NOT NULL,
  exp INTEGER NOT NULL,
  iss TEXT NOT NULL,
  kid TEXT NOT NULL,
  status INTEGER NOT NULL DEFAULT 0,
  nonce TEXT,
  -- The gate's shared "last seen" of the session (epoch ms), NULL until a gate node records one.
  last_seen_ms INTEGER,
  PRIMARY KEY (event_id, position)
) WITHOUT ROWID;
-- Keyed by position, like the positions table, not by the random request ID (issue 15): served visitors claim
-- in about the order of their positions, so a batch of first claims fills pages one after another instead of
-- writing a random page each (~20 KB written per new set at 10,000s of sets). A request ID is taken to its
-- position by the store's in-memory index (request-index.ts). A table created before, keyed by request ID, is
-- rebuilt at start (rekeyTokens in sqlite-store.ts).
-- tokens.signatures (the set's three signatures, so a re-claim never signs again) is added at start, see
-- ADDED_COLUMNS in sqlite-store.ts.
CREATE INDEX IF NOT EXISTS tokens_by_exp ON tokens (event_id, exp);

CREATE TABLE IF NOT EXISTS signing_keys (
  event_id TEXT NOT NULL,
  kid TEXT NOT NULL,
  private_jwk TEXT NOT NULL,
  public_jwk TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (event_id, kid)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS locks (
  name TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Values generated once and shared by every process that opens the database (e.g. admin credentials).
CREATE TABLE IF NOT EXISTS secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- OpenID Connect: the authorization request a visitor joined with, bound to their request ID (deleted with
-- the event's positions by a reset).
CREATE TABLE IF NOT EXISTS oidc_authorizations (
  event_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  authorization_request TEXT NOT NULL,
  PRIMARY KEY (event_id, request_id)
) WITHOUT ROWID;

-- ---- Leaving the queue (issue 12) ----
-- One row per position given up with leave_queue (deleted with the event's positions by a reset). The
-- events row counts them in `left_count`, a column the store adds at start (ADDED_COLUMNS in sqlite-store.ts),
-- so that a database created before it gains it too.
CREATE TABLE IF NOT EXISTS left_positions (
  event_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (event_id, position)
) WITHOUT ROWID;

-- Pre-queue and the draw (rooms with shuffle_at_event_start). A pre-queue join is listed here without a
-- position; the draw numbers the entries (positions rows) and keeps the list, which is what /draw publishes.
CREATE TABLE IF NOT EXISTS prequeue (
  event_id TEXT NOT NULL,
  join_order INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  entry_time INTEGER NOT NULL,
  left_queue INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (event_id, join_order)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS prequeue_by_request ON prequeue (event_id, request_id);

-- One row per room that has a draw: its seed, and how far the numbering got (a crash resumes from here).
CREATE TABLE IF NOT EXISTS draws (
  event_id TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  seed TEXT NOT NULL,
  commitment TEXT NOT NULL,
  algorithm TEXT NOT NULL,
  joined INTEGER NOT NULL DEFAULT 0,
  left_count INTEGER NOT NULL DEFAULT 0,
  drawn_through INTEGER NOT NULL DEFAULT 0,
  entry_count INTEGER NOT NULL DEFAULT 0,
  progress INTEGER NOT NULL DEFAULT 0,
  first_position INTEGER NOT NULL DEFAULT 0,
  numbered_through INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- A reset whose old rows are still being deleted, chunk by chunk (resetEvent); finished at open after a crash.
CREATE TABLE IF NOT EXISTS pending_resets (
  event_id TEXT PRIMARY KEY
) WITHOUT ROWID;

-- ---- Rooms at runtime (the rooms API) ----
-- Each room's settings as JSON text (read by the domain only) and the rooms version at which it was created.
-- Every other table with an event_id column holds per-room data: deleteRoom deletes the room's rows from
-- each of them (found from the schema, so a table added later is covered without a change there).
CREATE TABLE IF NOT EXISTS rooms (
  event_id TEXT PRIMARY KEY,
  settings TEXT NOT NULL,
  created_version INTEGER NOT NULL
) WITHOUT ROWID;

-- One row: the rooms version, bumped by every change of a room (each node polls it every second).
CREATE TABLE IF NOT EXISTS rooms_version (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  version INTEGER NOT NULL
);
INSERT OR IGNORE INTO rooms_version (only_row, version) VALUES (1, 0);

-- ---- The audit log (every private-API change) ----
-- No event_id column on purpose: deleting a room (which deletes every row of a table with one) keeps the
-- record of who changed it. Each entry is JSON text; the oldest beyond the kept count are trimmed.
CREATE TABLE IF NOT EXISTS audit_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  entry TEXT NOT NULL
);

-- ---- Per-room history (after-event reports): the counters at each minute, as JSON text ----
CREATE TABLE IF NOT EXISTS room_history (
  event_id TEXT NOT NULL,
  minute INTEGER NOT NULL,
  sample TEXT NOT NULL,
  PRIMARY KEY (event_id, minute)
) WITHOUT ROWID;

-- ---- Per-room wait histograms (after-event reports): per minute, field ("w<bucket>"/"e<bucket>") → count ----
CREATE TABLE IF NOT EXISTS room_waits (
  event_id TEXT NOT NULL,
  minute INTEGER NOT NULL,
  field TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (event_id, minute, field)
) WITHOUT ROWID;
