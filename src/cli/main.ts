// The `anteroom` command.

import { Command } from 'commander';
import { inletCommand } from './inlet-command.ts';
import { loadtestCommand } from './loadtest-command.ts';
import { serveCommand } from './serve-command.ts';
import { verifyDrawCommand } from './verify-draw-command.ts';

const program = new Command('anteroom')
  .description('Anteroom: an open-source virtual waiting room (API-compatible with Virtual Waiting Room on AWS).')
  .showHelpAfterError()
  .addCommand(serveCommand())
  .addCommand(loadtestCommand())
  .addCommand(inletCommand())
  .addCommand(verifyDrawCommand())
  .addHelpText(
    'after',
    `
Quick start: anteroom serve (then open the printed URL). Rooms are created and changed while the server runs,
through the rooms API (/private/rooms) or the control panel; a sale day step by step — set the room up the day
before, open the pre-queue, start and draw, pause in an emergency, close when sold out — is in docs/rooms.md
("Sale day: a runbook").`,
  );

// A configuration error (src/domain/errors.ts) or any other failure at start: its message, exit status 2.
program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`anteroom: ${(error as Error).message ?? String(error)}\n`);
  process.exit(2);
});
