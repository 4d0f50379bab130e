// `anteroom loadtest`: simulates visitors following VWR's journey against a running waiting room while an
// admission driver moves the serving counter, then judges what it saw (docs/loadtest.md).
// Exit status: 0 when every verdict holds, 1 when one fails, 2 when the run cannot start.

import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, Option } from 'commander';

const HELP_AFTER = `
Journey of each visitor: join (POST /assign_queue_num) → poll /queue_num until placed (202 = not yet) →
poll /serving_num every --poll-interval (and every n-th time /waiting_num) until the counter reaches the
position → POST /generate_token (every n-th visitor twice at once) → re-claim --reclaims times →
confirm the position with /queue_num. Meanwhile the admission driver calls the private
/increment_serving_counter so that the counter advances at --admit-rate, never past the highest position.

A room with "admission": "automatic" (read through GET /private/rooms/<id>) admits by itself: then nothing
moves its counter but the room, each served visitor ends its session after --session-time (update_session),
and the verdicts also check the room's new_users_per_minute and total_active_users. --prequeue n gives the
room a pre-queue for the first n visitors with a draw at the start (verified against GET /draw);
--pause-at/--pause-for pause and resume it (nobody may be admitted in between). Settings the run changes
are put back at the end. --abandon 30% makes that share of visitors close the tab on the way (--come-back: some
return), and the summary shows what that cost the others: the stayers' waits, the share of total_active_users
in session while they waited, the overshoot; --presence-timeout/--arrival-window set the room's presence for
the run, so the same --seed can be run with presence on and off. See docs/loadtest.md.

The run ends when every visitor has finished, or at --duration (default: twice the planned journey + 30 s,
at the room's own rate when it admits by itself).
It then verifies every token against /public_key and prints a summary; with --json, the last line of stdout
is one JSON object. Exit status: 0 = every verdict holds, 1 = a verdict fails, 2 = the run could not start.

Only loopback targets (127.0.0.0/8, ::1, localhost) are allowed without --allow-remote.

With --bots N, the run measures fairness instead (docs/bots.md): --visitors visitors join at --arrival-rate
(solving a proof of work when asked) beside N bots joining back to back (--bot-joins each, solving only with
--bots-solve), each client from its own loopback address (127.1.x.y, 127.2.x.y: the target must listen on the
loopback interface); it prints the share of the first --first places (= admissions) that went to bots. No
private API is used.

Example:
  anteroom loadtest --target http://127.0.0.1:8080 --admin-token $TOKEN \\
    --visitors 5000 --arrival-rate 500/s --admit-rate 250/s --report loadtest.html`;

export function loadtestCommand(): Command {
  return new Command('loadtest')
    .description('Simulate visitors joining, waiting and claiming tokens against a waiting room, and check it stays correct.')
    .addOption(new Option('--target <url>', 'public base URL of the waiting room (required)'))
    .addOption(new Option('--private-target <url>', 'private API base URL (default: <target>/private)'))
    .addOption(new Option('--event-id <id>', 'event (waiting room) to load').default('Sample'))
    .addOption(new Option('--visitors <n>', 'number of visitors to simulate').default('1000'))
    .addOption(new Option('--arrival-rate <rate>', 'visitors joining per second: 300, 300/s or 18000/min').default('100/s'))
    .addOption(new Option('--admit-rate <rate>', 'positions the admission driver lets in per second').default('100/s'))
    .addOption(new Option('--admin-token <token>', 'bearer token of the private API').env('ANTEROOM_ADMIN_TOKEN'))
    .addOption(new Option('--access-key-id <id>', 'SigV4 access key ID of the private API (instead of --admin-token)').env('ANTEROOM_ACCESS_KEY_ID'))
    .addOption(new Option('--secret-access-key <secret>', 'SigV4 secret access key').env('ANTEROOM_SECRET_ACCESS_KEY'))
    .addOption(new Option('--session-token <token>', 'SigV4 session token (temporary AWS credentials)').env('AWS_SESSION_TOKEN'))
    .addOption(new Option('--region <region>', 'SigV4 region').default('us-east-1'))
    .addOption(new Option('--public-api-key <key>', 'x-api-key to send on public requests, if the server requires one').env('ANTEROOM_PUBLIC_API_KEY'))
    .addOption(new Option('--poll-interval <duration>', 'time between two polls of one visitor: 1s, 500ms').default('1s'))
    .addOption(new Option('--duration <duration>', 'stop after this long even if visitors are still waiting: 90s, 5m'))
    .addOption(new Option('--reclaims <n>', 're-claims of the token after the first claim, 0–3 (idempotency)').default('3'))
    .addOption(new Option('--waiting-num-every <n>', 'also poll /waiting_num on a visitor\'s first poll and every n-th after (0 = never)').default('10'))
    .addOption(new Option('--double-claim-every <n>', 'every n-th visitor sends its first claim twice at once (0 = never)').default('10'))
    .addOption(new Option('--connections <n>', 'keep-alive connections for the visitors\' polls, and as many for their joins and claims').default('128'))
    .addOption(
      new Option('--pipelining <n>', 'polls in flight per polling connection (HTTP/1.1 pipelining, 1 = none); 0 = send polls through undici like the other requests').default('8'),
    )
    .addOption(new Option('--reset', 'reset the event (reset_initial_state) first, so positions must be exactly 1..N'))
    .addOption(
      new Option('--session-time <duration>', 'how long a served visitor stays before ending its session with update_session, or "never" (default: 2s in an automatic room, else never)'),
    )
    .addOption(new Option('--prequeue <n>', 'the first n visitors join a pre-queue and are drawn at random at the start (sets the room\'s schedule; needs --reset)').default('0'))
    .addOption(new Option('--pause-at <duration>', 'pause the room (state paused) this long after the start, e.g. 30s (with --pause-for)'))
    .addOption(new Option('--pause-for <duration>', 'then resume it (state open) after this long, e.g. 10s'))
    .addOption(new Option('--abandon <share>', 'this share of visitors close the tab at a random point (while waiting, or let in before claiming): 0.3 or 30%').default('0'))
    .addOption(new Option('--come-back <share>', 'this share of those who close the tab come back later and go on').default('0'))
    .addOption(new Option('--come-back-after <duration>', 'a visitor who comes back stays away 0.5–1.5 × this').default('30s'))
    .addOption(new Option('--seed <n>', 'seed of who closes the tab, when, and who comes back (the same in every run with the same seed)').default('1'))
    .addOption(new Option('--presence-timeout <seconds>', "set the room's presence_timeout for the run (0 = off; put back at the end)"))
    .addOption(new Option('--arrival-window <seconds>', "set the room's arrival_window for the run (0 = off; put back at the end)"))
    .addOption(new Option('--presence-beat <duration>', 'a waiting visitor asks /queue_num with its request ID this often, like the waiting page, or "never" (default: 10s with --abandon or --presence-timeout, else never)'))
    .addOption(new Option('--report <file>', 'write a self-contained HTML report with charts to this file'))
    .addOption(new Option('--json', 'print the result as one JSON object on the last line of stdout'))
    .addOption(new Option('--bots <n>', 'measure fairness: this many bots (one loopback address each) beside the visitors, instead of the journey'))
    .addOption(new Option('--bot-joins <n>', 'with --bots: join attempts of each bot (default: visitors / bots, so bots make half the arrivals)'))
    .addOption(new Option('--bots-solve', 'with --bots: bots solve every proof-of-work challenge at full CPU'))
    .addOption(new Option('--first <n>', 'with --bots: judge the first this many places').default('1000'))
    .addOption(new Option('--allow-remote', 'allow a target that is not a loopback address (never point this at production)'))
    .addHelpText('after', HELP_AFTER)
    // Usage errors exit with 2, like invalid values; 1 is kept for a failed verdict.
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .action(async (raw: Record<string, unknown>, command: Command) => {
      if (raw.bots !== undefined) {
        await runBots(raw);
        return;
      }
      // Loaded on use: `anteroom serve` must not need the load tester's HTTP client.
      const { parseLoadTestOptions } = await import('../loadtest/options.ts');
      const { runLoadTest } = await import('../loadtest/run.ts');
      const { formatSummary } = await import('../loadtest/summary.ts');
      const { redactArgs, renderReport } = await import('../loadtest/report.ts');
      const options = parseLoadTestOptions(preferFlagsOverEnvironment(raw, command));

      const abort = new AbortController();
      const interrupt = () => {
        process.stderr.write('\ninterrupted: stopping the visitors and judging what was recorded (Ctrl-C again to quit)\n');
        abort.abort();
        process.once('SIGINT', () => process.exit(130));
      };
      process.once('SIGINT', interrupt);
      const result = await runLoadTest(options, { progress: process.stderr, signal: abort.signal });
      process.off('SIGINT', interrupt);

      if (options.reportPath) {
        const file = resolve(options.reportPath);
        writeFileSync(file, renderReport(result, { command: ['anteroom', ...redactArgs(process.argv.slice(2))].join(' ') }));
        process.stderr.write(`report written to ${file}\n`);
      }
      process.stdout.write(formatSummary(result.summary));
      if (options.json) process.stdout.write(`\n${JSON.stringify(result.summary)}\n`);
      process.exitCode = result.summary.ok ? 0 : 1;
    });
}

/** `--bots`: the fairness run (src/loadtest/bots.ts); exit 2 on a bad option, else 0. */
async function runBots(raw: Record<string, unknown>): Promise<void> {
  const { parseBotRunOptions } = await import('../loadtest/options.ts');
  const { formatBotRun, runBotFairness } = await import('../loadtest/bots.ts');
  const options = parseBotRunOptions(raw);
  const result = await runBotFairness(options);
  process.stdout.write(formatBotRun(options, result));
  if (raw.json === true) process.stdout.write(`${JSON.stringify(result)}\n`);
}

/**
 * `anteroom serve` reads the same ANTEROOM_* credentials, so an environment may hold both a bearer token and a
 * key pair: a credential given as a flag wins over one from the environment, and between two from the
 * environment the bearer token wins. Two kinds given as flags stay an error.
 */
function preferFlagsOverEnvironment(raw: Record<string, unknown>, command: Command): Record<string, unknown> {
  const fromEnv = (key: string) => command.getOptionValueSource(key) === 'env';
  const bearer = raw.adminToken !== undefined;
  const sigv4 = raw.accessKeyId !== undefined || raw.secretAccessKey !== undefined;
  if (!bearer || !sigv4) return raw;
  const bearerFromEnv = fromEnv('adminToken');
  const sigv4FromEnv = ['accessKeyId', 'secretAccessKey'].every((k) => raw[k] === undefined || fromEnv(k));
  if (bearerFromEnv && !sigv4FromEnv) return { ...raw, adminToken: undefined };
  if (sigv4FromEnv) return { ...raw, accessKeyId: undefined, secretAccessKey: undefined, sessionToken: undefined };
  return raw;
}
