#!/usr/bin/env node
// The `rail` command. Node 24 runs the TypeScript sources directly (type stripping), so there is
// no build step; src/main.ts is the entry point. A Node that cannot (`node bin/rail.js` with an
// older system Node) hands the command to the pinned Node 24 in node_modules. Node's compile cache
// (NODE_COMPILE_CACHE, else a folder in the system's temporary directory) keeps the stripped and
// compiled sources between runs: a cold `rail --help` spends most of its time stripping types.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import module from 'node:module'
import { fileURLToPath } from 'node:url'

if (process.features.typescript) {
  module.enableCompileCache?.()
  await import('../src/main.ts')
} else {
  runOnPinnedNode()
}

function runOnPinnedNode() {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url))
  if (!existsSync(pinned)) {
    console.error(
      `rail: Node ${process.versions.node} cannot run TypeScript; run \`npm install\` (it installs the pinned Node 24) or use Node 24`,
    )
    process.exit(1)
  }
  const child = spawn(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' })
  // A terminal's Ctrl-C reaches the whole process group, the child included: only the signals sent
  // to this process alone are passed on.
  process.on('SIGINT', () => {})
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}
