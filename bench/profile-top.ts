// node bench/profile-top.ts file.cpuprofile [N]: where a V8 CPU profile's time went — the top N
// functions by self time and by total time (inclusive of what they call), as shares of all samples.
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

const [file, topArg] = process.argv.slice(2)
if (!file) throw new Error('usage: node bench/profile-top.ts file.cpuprofile [N]')
const top = Number(topArg ?? 30)
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] }
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
const label = (node: ProfileNode) => {
  const url = node.callFrame.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/')
  return `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`
}
const self = new Map<string, number>()
const total = new Map<string, number>()
const packages = new Map<string, number>()
for (const id of profile.samples) {
  const node = byId.get(id)!
  self.set(label(node), (self.get(label(node)) ?? 0) + 1)
  const seen = new Set<string>()
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const name = label(byId.get(at)!)
    if (!seen.has(name)) total.set(name, (total.get(name) ?? 0) + 1)
    seen.add(name)
  }
  const url = node.callFrame.url
  const where = url.includes('/node_modules/')
    ? url.replace(/^.*\/node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')
    : url.startsWith('node:')
      ? 'node:*'
      : url === ''
        ? node.callFrame.functionName
        : url.replace(/^.*\/(src|bench)\/([^/]+).*$/, '$1/$2')
  packages.set(where, (packages.get(where) ?? 0) + 1)
}
const count = profile.samples.length
const print = (title: string, table: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [name, samples] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((samples / count) * 100).toFixed(1).padStart(5)} %  ${name}`)
}
print('self time by package or folder', packages)
print('self time', self)
print('total time', total)
