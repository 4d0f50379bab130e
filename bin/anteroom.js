#!/usr/bin/env node
// Entry point of the `anteroom` command. Runs the TypeScript sources directly (Node ≥ 22.18 / 24 strips
// types natively); a published build points here at dist/ instead.
import '../src/cli/main.ts';
