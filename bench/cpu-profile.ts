// BENCH_CPU_PROFILE=file.cpuprofile: a V8 CPU profile of this process over the measured window
// alone (not the set-up), for Chrome DevTools or `node bench/profile-top.ts file` to read.
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'

export interface CpuProfiler {
  stop(): Promise<void>
}

/** Starts profiling when BENCH_CPU_PROFILE names a file; stop() writes it. */
export async function startCpuProfile(): Promise<CpuProfiler> {
  const file = process.env.BENCH_CPU_PROFILE
  if (!file) return { stop: async () => {} }
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 500 })
  await session.post('Profiler.start')
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop')
      writeFileSync(file, JSON.stringify(profile))
      session.disconnect()
      console.log(`CPU profile of the measured window: ${file}`)
    },
  }
}
