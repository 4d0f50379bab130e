#!/usr/bin/env node
// Entry point of the `anteroom` command. From a checkout it runs the TypeScript sources directly (Node 24
// strips types natively); an installed package (inside node_modules, where Node does not strip types)
// runs the compiled dist/ that `npm pack` builds.
const installed = import.meta.url.includes('/node_modules/');
await import(installed ? '../dist/cli/main.js' : '../src/cli/main.ts');
