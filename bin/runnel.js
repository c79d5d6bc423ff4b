#!/usr/bin/env node
import { main } from '../dist/src/cli.js';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`runnel: ${err && err.message ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
