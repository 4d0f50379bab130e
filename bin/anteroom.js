#!/usr/bin/env node
// Entry point of the `anteroom` command. From a checkout it runs the TypeScript sources directly (Node 24
// strips types natively); an installed package (inside node_modules, where Node does not strip types)
// runs the compiled dist/ that `npm pack` builds, on Node 22.13 or newer (an older one is told so in one
// line). A checkout started by an older Node (one that cannot strip types, e.g. a system Node 20) runs itself
// again with the project's Node 24 from node_modules (the `node` devDependency `npm ci` installs), or says in
// one line what to install.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const installed = import.meta.url.includes('/node_modules/');
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (installed && (major < 22 || (major === 22 && minor < 13))) {
  // The compiled package needs node:sqlite and other APIs of Node 22.13; an older Node would fail on an import.
  process.stderr.write(`anteroom: Node ${process.version} is too old: install Node 22.13 or newer (24 LTS recommended)\n`);
  process.exit(1);
} else if (!installed && !process.features.typescript) {
  const projectNode = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(projectNode)) {
    process.stderr.write(`anteroom: Node ${process.version} cannot run this checkout's TypeScript: run \`npm ci\` here (it installs the project's Node 24) or use Node 24\n`);
    process.exit(1);
  }
  const child = spawn(projectNode, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
} else {
  // Modules compiled once are cached (in the OS temp directory, or $NODE_COMPILE_CACHE): a start loads faster.
  module.enableCompileCache?.();
  await import(installed ? '../dist/cli/main.js' : '../src/cli/main.ts');
}
