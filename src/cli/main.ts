// The `anteroom` command.

import { Command } from 'commander';
import { ConfigError } from '../config/config.ts';
import { inletCommand } from './inlet-command.ts';
import { loadtestCommand } from './loadtest-command.ts';
import { serveCommand } from './serve-command.ts';

const program = new Command('anteroom')
  .description('Anteroom: an open-source virtual waiting room (API-compatible with Virtual Waiting Room on AWS).')
  .showHelpAfterError()
  .addCommand(serveCommand())
  .addCommand(loadtestCommand())
  .addCommand(inletCommand());

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`anteroom: ${error.message}\n`);
  } else {
    process.stderr.write(`anteroom: ${(error as Error).message ?? String(error)}\n`);
  }
  process.exit(2);
});
