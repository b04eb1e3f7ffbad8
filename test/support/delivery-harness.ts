// The set-up the delivery tests share: one app for the file, delivery workers the tests restart
// with the settings they need, and real receivers closed after each test.
import type { Runner } from 'graphile-worker'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { startBackgroundWorkers } from '../../src/app.ts'
import type { DeliverySettings } from '../../src/events/delivery.ts'
import { startTestApp, type TestApp } from './app.ts'
import { startReceiver, type Receiver } from './receiver.ts'

export interface DeliveryHarness {
  /** The file's app (started in beforeAll). */
  readonly app: TestApp
  /** Starts delivery workers with these settings, stopping any running first. */
  startWorkers(settings: DeliverySettings): Promise<void>
  stopWorkers(): Promise<void>
  /** A receiver (on `port` when given), closed after the test. */
  receiver(port?: number): Promise<Receiver>
  partnerWithCallback(url: string): ReturnType<TestApp['newPartner']>
}

/** Registers the file's hooks (call it at the top of the file) and answers the harness. */
export function deliveryHarness(): DeliveryHarness {
  let app: TestApp | undefined
  let runner: Runner | undefined
  const receivers: Receiver[] = []
  beforeAll(async () => {
    app = await startTestApp()
  })
  afterAll(async () => {
    await runner?.stop()
    await app?.close()
  })
  afterEach(async () => {
    for (const receiver of receivers.splice(0)) await receiver.close()
  })
  return {
    get app() {
      return app!
    },
    async startWorkers(settings) {
      await runner?.stop()
      runner = await startBackgroundWorkers({ pool: app!.db.pool, masterKey: app!.masterKey, concurrency: 4, events: settings })
    },
    async stopWorkers() {
      await runner?.stop()
      runner = undefined
    },
    async receiver(port) {
      const started = await startReceiver(port)
      receivers.push(started)
      return started
    },
    partnerWithCallback: (url) => app!.newPartner({ callbackUrl: url }),
  }
}
