// The `anteroom` command.

import { Command } from 'commander';

// Each subcommand's modules are loaded only when it runs (or for the overall help): `verify-draw`, `inlet` and
// `loadtest` start without loading the server (about a third of the CPU of a start).
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve-command.ts')).serveCommand(),
  loadtest: async () => (await import('./loadtest-command.ts')).loadtestCommand(),
  inlet: async () => (await import('./inlet-command.ts')).inletCommand(),
  'verify-draw': async () => (await import('./verify-draw-command.ts')).verifyDrawCommand(),
};
const named = process.argv[2];
const wanted = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
const commands = await Promise.all(wanted.map((name) => (COMMANDS[name] as () => Promise<Command>)()));

const program = new Command('anteroom')
  .description('Anteroom: an open-source virtual waiting room (API-compatible with Virtual Waiting Room on AWS).')
  .showHelpAfterError()
  .addHelpText(
    'after',
    `
Quick start: anteroom serve (then open the printed URL). Rooms are created and changed while the server runs,
through the rooms API (/private/rooms) or the control panel; a sale day step by step — set the room up the day
before, open the pre-queue, start and draw, pause in an emergency, close when sold out — is in docs/rooms.md
("Sale day: a runbook").`,
  );

for (const command of commands) program.addCommand(command);

// A configuration error (src/domain/errors.ts) or any other failure at start: its message, exit status 2.
program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`anteroom: ${(error as Error).message ?? String(error)}\n`);
  process.exit(2);
});
