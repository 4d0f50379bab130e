// The rules of a room's settings that the schema does not express: across fields (a schedule in order, an
// inlet's end after its start, automatic admission with both limits, …), checked once the defaults are filled
// in. Each names the first field at fault, as the schema's problems do (setting-problems.ts).

import { presenceRuleProblem } from './presence-settings.ts';
import { isIP } from 'node:net';
import type { InletSettings, PauseCheckSettings, RoomSettings } from './room-settings-model.ts';
import { brandingRuleProblem } from './page-branding.ts';
import type { SettingProblem } from './setting-problems.ts';

/** The first rule across fields the settings (defaults filled in) break, or undefined. */
export function roomRuleProblem(settings: RoomSettings): SettingProblem | undefined {
  return (
    (settings.inlet ? inletRuleProblem(settings.inlet) : undefined) ??
    admissionRuleProblem(settings) ??
    presenceRuleProblem(settings) ??
    scheduleRuleProblem(settings) ??
    gateRuleProblem(settings) ??
    botDefenceRuleProblem(settings) ??
    brandingRuleProblem(settings.branding)
  );
}

/** The rules a schema does not express, across fields of the inlet (defaults filled in). */
function inletRuleProblem(inlet: InletSettings): SettingProblem | undefined {
  if (inlet.strategy !== 'periodic') return undefined;
  if (inlet.end_time !== 0 && inlet.end_time <= inlet.start_time) {
    return { path: ['inlet', 'end_time'], rule: 'must be after start_time (or 0 for no end)' };
  }
  if (!inlet.pause_check) return undefined;
  const at = ['inlet', 'pause_check'];
  const problem = pauseCheckRuleProblem(inlet.pause_check, at);
  if (problem) return problem;
  // A check still waiting when the next tick starts would let two ticks overlap.
  if (inlet.pause_check.timeout >= inlet.interval) {
    return { path: [...at, 'timeout'], rule: `must be shorter than the interval (${inlet.interval} s)` };
  }
  return undefined;
}

/** Automatic admission needs both of its limits: the first one missing is named. */
function admissionRuleProblem(settings: RoomSettings): SettingProblem | undefined {
  if (settings.admission !== 'automatic') return undefined;
  for (const limit of ['new_users_per_minute', 'total_active_users'] as const) {
    if (settings[limit] === undefined) return { path: [limit], rule: 'is required with admission "automatic"' };
  }
  return undefined;
}

/** The gate's bypass IPs are real addresses, and a CIDR's prefix fits its family. */
function gateRuleProblem(settings: RoomSettings): SettingProblem | undefined {
  const ips = settings.gate?.bypass?.ips ?? [];
  for (const [index, entry] of ips.entries()) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 4 ? 32 : 128;
    if (family === 0 || (bits !== undefined && Number(bits) > maxBits)) {
      return { path: ['gate', 'bypass', 'ips', String(index)], rule: 'must be an IP address or CIDR' };
    }
  }
  return undefined;
}

/** The schedule's rules across fields: real times, in order, and a draw needs a start. */
function scheduleRuleProblem(settings: RoomSettings): SettingProblem | undefined {
  const fields = ['prequeue_start_time', 'event_start_time', 'event_end_time'] as const;
  for (const field of fields) {
    const value = settings[field];
    // The pattern admits 2026-02-30: a time is real when it reads back the same.
    if (value !== undefined && new Date(Date.parse(value)).toISOString().slice(0, 19) !== value.slice(0, 19)) {
      return { path: [field], rule: 'must be a real date and time' };
    }
  }
  const [prequeue, start, end] = fields.map((field) => {
    const value = settings[field];
    return value === undefined ? undefined : Date.parse(value);
  });
  if (prequeue !== undefined && start === undefined) return { path: ['event_start_time'], rule: 'is required with prequeue_start_time' };
  if (prequeue !== undefined && start !== undefined && prequeue >= start) {
    return { path: ['prequeue_start_time'], rule: 'must be before event_start_time' };
  }
  if (start !== undefined && end !== undefined && end <= start) return { path: ['event_end_time'], rule: 'must be after event_start_time' };
  if (settings.shuffle_at_event_start === true && start === undefined) {
    return { path: ['event_start_time'], rule: 'is required with shuffle_at_event_start' };
  }
  // The OpenID Connect login page binds the login to a position at the join, which a pre-queue join does not have.
  if (settings.shuffle_at_event_start === true && settings.oidc !== undefined) {
    return { path: ['shuffle_at_event_start'], rule: 'cannot be used with oidc (the login needs a position at the join)' };
  }
  return undefined;
}

/** Bot defence across fields: a ceiling over the base, an enqueue key needs its secret. */
function botDefenceRuleProblem(settings: RoomSettings): SettingProblem | undefined {
  const defence = settings.bot_defence;
  if (!defence) return undefined;
  if (defence.max_difficulty < defence.difficulty) {
    return { path: ['bot_defence', 'max_difficulty'], rule: `must be at least difficulty (${defence.difficulty})` };
  }
  if (defence.require_enqueue_key && defence.enqueue_key_secret === undefined) {
    return { path: ['bot_defence', 'enqueue_key_secret'], rule: 'is required with require_enqueue_key' };
  }
  // A keyed join gets its place in one atomic unit that the pre-queue of a draw does not offer (yet).
  if (defence.enqueue_key_secret !== undefined && settings.shuffle_at_event_start === true) {
    return { path: ['bot_defence', 'enqueue_key_secret'], rule: 'cannot be used with shuffle_at_event_start' };
  }
  return undefined;
}

/** A pause check's rules across its fields; `at`: where it sits in the settings. */
export function pauseCheckRuleProblem(check: PauseCheckSettings, at: string[]): SettingProblem | undefined {
  if ((check.json_path === undefined) !== (check.threshold === undefined)) {
    return { path: at, rule: 'json_path and threshold go together' };
  }
  if (check.json_path !== undefined && !isJsonPath(check.json_path)) {
    return { path: [...at, 'json_path'], rule: 'use a dotted path like $.cpu.load or a JSON Pointer like /cpu/load' };
  }
  return undefined;
}

/**
 * The path syntax of a pause check: a JSON Pointer ("/measurements/0/value", RFC 6901, for keys holding
 * dots) or a dotted path with an optional "$." prefix ("$.cpu.load", "measurements.0.value"); "$" alone is
 * the whole document.
 */
export function isJsonPath(path: string): boolean {
  if (path.startsWith('/')) return true;
  const dotted = path.replace(/^\$\.?/, '');
  return dotted === '' || dotted.split('.').every((segment) => segment !== '');
}
