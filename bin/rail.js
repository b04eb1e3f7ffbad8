#!/usr/bin/env node
// The `rail` command. Node 24 runs the TypeScript sources directly (type stripping), so there is
// no build step; src/main.ts is the entry point.
await import('../src/main.ts')
