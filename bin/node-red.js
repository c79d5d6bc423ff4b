#!/usr/bin/env node
import { nodeRedMain } from '../dist/src/cli/node-red.js';

nodeRedMain(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`node-red: ${err && err.message ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
