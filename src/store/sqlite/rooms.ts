// The rooms served by every node (RoomStore, but deleteRoomData: reset.ts): the `rooms` table, each room's
// settings as JSON text exactly as put, and `rooms_version`, one row bumped by every change.

import type { RoomPutOutcome, StoredRoom, StoredRooms } from '../../domain/ports/store.ts';
import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';

const SQL = {
  getRoom: 'SELECT event_id, settings, created_version FROM rooms WHERE event_id = ?',
  listRooms: 'SELECT event_id, settings, created_version FROM rooms ORDER BY created_version',
  insertRoom: 'INSERT INTO rooms (event_id, settings, created_version) VALUES (?, ?, ?)',
  replaceRoom: 'UPDATE rooms SET settings = ? WHERE event_id = ?',
  deleteRoom: 'DELETE FROM rooms WHERE event_id = ?',
  getRoomsVersion: 'SELECT version FROM rooms_version WHERE only_row = 1',
  bumpRoomsVersion: 'UPDATE rooms_version SET version = version + 1 WHERE only_row = 1 RETURNING version',
};

interface RoomRow {
  event_id: string;
  settings: string;
  created_version: number;
}

function toStoredRoom(row: RoomRow): StoredRoom {
  return { eventId: row.event_id, settings: row.settings, createdVersion: row.created_version };
}

export class SqliteRooms {
  private readonly connection: SqliteConnection;
  private readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection) {
    this.connection = connection;
    this.sql = prepareAll(connection.db, SQL);
  }

  async putRoom(eventId: string, settings: string): Promise<RoomPutOutcome> {
    return this.connection.transaction(null, (): RoomPutOutcome => {
      const stored = this.sql.getRoom.get(eventId) as { settings: string } | undefined;
      if (stored?.settings === settings) return 'unchanged';
      const version = this.bumpRoomsVersion();
      if (stored) {
        this.sql.replaceRoom.run(settings, eventId);
        return 'replaced';
      }
      this.sql.insertRoom.run(eventId, settings, version);
      return 'created';
    });
  }

  async getRoom(eventId: string): Promise<StoredRoom | null> {
    const row = this.sql.getRoom.get(eventId) as RoomRow | undefined;
    return row ? toStoredRoom(row) : null;
  }

  async listRooms(): Promise<StoredRooms> {
    // Two synchronous reads with nothing in between (this process is the database's only writer): one instant.
    return {
      version: this.roomsVersionNow(),
      rooms: (this.sql.listRooms.all() as unknown as RoomRow[]).map(toStoredRoom),
    };
  }

  async roomsVersion(): Promise<number> {
    return this.roomsVersionNow();
  }

  async deleteRoomSettings(eventId: string): Promise<boolean> {
    return this.connection.transaction(null, () => {
      const existed = Number(this.sql.deleteRoom.run(eventId).changes) === 1;
      if (existed) this.bumpRoomsVersion();
      return existed;
    });
  }

  private roomsVersionNow(): number {
    return (this.sql.getRoomsVersion.get() as { version: number }).version;
  }

  private bumpRoomsVersion(): number {
    return (this.sql.bumpRoomsVersion.get() as { version: number }).version;
  }
}
