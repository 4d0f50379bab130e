// A room's bot defence for tests: no challenge, no enqueue key required, every threshold at its usual test value,
// and `more` on top.

import type { BotDefenceSettings } from '../../src/domain/room-settings.ts';

export const botDefence = (more: Partial<BotDefenceSettings> = {}): BotDefenceSettings => ({
  challenge: 'off',
  difficulty: 1000,
  max_difficulty: 100_000,
  room_threshold_per_minute: 600,
  client_threshold_per_minute: 10,
  challenge_ttl: 300,
  require_enqueue_key: false,
  infinite_queue: false,
  ...more,
});
