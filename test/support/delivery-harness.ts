// The set-up the delivery tests share: one app for the file, delivery workers the tests restart
// with the settings they need, and real receivers closed after each test.
import { afterAll, afterEach, beforeAll } from 'vitest'
import type { DeliverySettings } from '../../src/events/delivery.ts'
import type { TestApp } from './app.ts'
import { startRail, type Rail } from './rail.ts'
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
  let app: Rail | undefined
  const receivers: Receiver[] = []
  beforeAll(async () => {
    app = await startRail()
  })
  afterAll(() => app?.close())
  afterEach(async () => {
    for (const receiver of receivers.splice(0)) await receiver.close()
  })
  return {
    get app() {
      return app!
    },
    async startWorkers(settings) {
      await app!.startWorkers({ events: settings })
    },
    stopWorkers: () => app!.stopWorkers(),
    async receiver(port) {
      const started = await startReceiver(port)
      receivers.push(started)
      return started
    },
    partnerWithCallback: (url) => app!.newPartner({ callbackUrl: url }),
  }
}
