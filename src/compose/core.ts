// The one composition root of the core: store → room registry → event bus → keys → signer → the waiting room's
// capabilities (src/domain/services/waiting-room.ts: queue, claims, sessions, admission, rooms, draws, reports),
// started with the rooms of the store (the configured rooms are written there first), and closed in the reverse
// order. Every runtime builds its core here — the node server
// (src/app.ts), the Lambda runtime (src/aws/runtime.ts) and, through startNode, the tests — and adds its own
// adapters around it (HTTP and jobs; Lambda handlers).

import { createHmac, randomBytes } from 'node:crypto';
import { epochSeconds, systemClock, type Clock } from '../domain/clock.ts';
import type { Store } from '../domain/ports/store.ts';
import { RoomRegistry } from '../domain/room-registry.ts';
import type { RoomSettings } from '../domain/room-settings.ts';
import { buildWaitingRoom, type WaitingRoom, type WaitingRoomDeps } from '../domain/services/waiting-room.ts';
import { EventBus } from '../events/bus.ts';
import { AltchaProofOfWork } from '../pow/altcha.ts';
import { KeyRing } from '../tokens/keys.ts';
import { TokenSigner } from '../tokens/signer.ts';

export interface CoreParts {
  store: Store;
  /**
   * The configured rooms (events file, --event-id, the AWS environment): written to the store as puts at start
   * — the configuration wins for the rooms it lists — then every room of the store is served.
   */
  rooms: readonly RoomSettings[];
  /** Defaults of the settings a room put through the rooms API leaves out (the serve flags). */
  roomDefaults?: WaitingRoomDeps['roomDefaults'];
  /** Told of a stored room the schema refuses (it is skipped, never fatal). */
  onRoomRefused?: WaitingRoomDeps['onRoomRefused'];
  clock?: Clock | undefined;
  /** Issuer of a room that has none configured. */
  defaultIssuer: () => string;
  joinBatch?: WaitingRoomDeps['joinBatch'];
  intake?: WaitingRoomDeps['intake'];
  afterReset?: WaitingRoomDeps['afterReset'];
  onJoinBatch?: WaitingRoomDeps['onJoinBatch'];
  drawChunkSize?: WaitingRoomDeps['drawChunkSize'];
  onBotDefence?: WaitingRoomDeps['onBotDefence'];
  recordWaits?: WaitingRoomDeps['recordWaits'];
}

/** Name in the store of the secret every node signs and checks proof-of-work challenges with. */
const PROOF_OF_WORK_SECRET = 'proof-of-work';

export interface Core {
  /** The waiting room's capabilities: each driver takes the one it needs. */
  room: WaitingRoom;
  store: Store;
  rooms: RoomRegistry;
  bus: EventBus;
  clock: Clock;
  /** Stops following room changes, answers the joins still waiting to be committed, closes the event sinks, then the store. */
  close(): Promise<void>;
}

/** Builds and starts the core; a failed start closes what it opened (a retried cold start would leak it). */
export async function composeCore(parts: CoreParts): Promise<Core> {
  const clock = parts.clock ?? systemClock;
  const store = parts.store;
  const rooms = new RoomRegistry();
  const bus = new EventBus(clock);
  const keys = new KeyRing(store, () => epochSeconds(clock));
  let proofOfWorkSecret: string;
  try {
    // One secret for every node: the first node to start stores it, the others read it.
    proofOfWorkSecret = await store.claimSecret(PROOF_OF_WORK_SECRET, randomBytes(32).toString('base64url'));
  } catch (error) {
    await store.close();
    throw error;
  }
  const room = buildWaitingRoom({
    store,
    rooms,
    keys,
    signer: new TokenSigner(keys),
    events: bus,
    clock,
    defaultIssuer: parts.defaultIssuer,
    ...(parts.joinBatch ? { joinBatch: parts.joinBatch } : {}),
    ...(parts.intake ? { intake: parts.intake } : {}),
    ...(parts.afterReset ? { afterReset: parts.afterReset } : {}),
    ...(parts.onJoinBatch ? { onJoinBatch: parts.onJoinBatch } : {}),
    ...(parts.drawChunkSize ? { drawChunkSize: parts.drawChunkSize } : {}),
    ...(parts.roomDefaults ? { roomDefaults: parts.roomDefaults } : {}),
    ...(parts.onRoomRefused ? { onRoomRefused: parts.onRoomRefused } : {}),
    ...(parts.onBotDefence ? { onBotDefence: parts.onBotDefence } : {}),
    ...(parts.recordWaits === false ? { recordWaits: false } : {}),
    proofOfWork: new AltchaProofOfWork(proofOfWorkSecret),
    parkingSecret: createHmac('sha256', proofOfWorkSecret).update('anteroom infinite queue').digest('hex'),
  });
  try {
    await room.start();
    await room.rooms.openRooms(parts.rooms);
  } catch (error) {
    await Promise.allSettled([bus.close(), store.close()]);
    throw error;
  }
  return {
    room,
    store,
    rooms,
    bus,
    clock,
    close: async () => {
      await room.close();
      await bus.close();
      await store.close();
    },
  };
}
