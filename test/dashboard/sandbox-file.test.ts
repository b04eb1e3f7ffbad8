// Under `rail serve`, the sandbox partner's credentials file (what the start banner, `rail listen`
// and the examples read) follows a rotation made in the dashboard, as it follows
// `rail partner rotate-*`: the new key and secret are saved there. Another partner's rotation
// leaves the file alone.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RailClient } from '../../src/client/index.ts'
import { readSandboxPartner, writeSandboxPartner } from '../../src/partners/sandbox-file.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { postForm, signedInSession } from './support.ts'

let app: TestApp
let dataDir: string

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'rail-sandbox-file-'))
  app = await startTestApp({ sandboxPartnerDataDir: dataDir })
})
afterAll(async () => {
  await app?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

function shownSecret(page: string): string {
  return /<code id="new-secret">([^<]+)<\/code>/.exec(page)![1]!
}

describe("the sandbox partner's credentials file", () => {
  it('follows rotations made in the dashboard; another partner rotating changes nothing in it', async () => {
    const { credentials } = await app.newPartner()
    writeSandboxPartner(dataDir, credentials)
    const session = await signedInSession(app.db.pool, app.baseUrl, credentials.partnerId)

    const signing = await postForm(app.baseUrl, session, '/dashboard/settings/rotate', {
      credential: 'request-signing',
      overlapHours: '0',
      reference: randomUUID(),
    })
    expect(signing.status).toBe(200)
    const signingSecret = shownSecret(await signing.text())
    const saved = readSandboxPartner(dataDir)!
    expect(saved.signingSecret).toBe(signingSecret)
    expect(saved.keyId).not.toBe(credentials.keyId)
    // What the file now holds is what works.
    expect((await new RailClient(app.baseUrl, saved).get('/api/v1/rail/settings')).status).toBe(200)

    const callback = await postForm(app.baseUrl, session, '/dashboard/settings/rotate', {
      credential: 'callback-signing',
      overlapHours: '0',
      reference: randomUUID(),
    })
    expect(readSandboxPartner(dataDir)!.callbackSigningSecret).toBe(shownSecret(await callback.text()))
    const escrow = await postForm(app.baseUrl, session, '/dashboard/settings/rotate', {
      credential: 'escrow-api-key',
      overlapHours: '0',
      reference: randomUUID(),
    })
    expect(readSandboxPartner(dataDir)!.escrowApiKey).toBe(shownSecret(await escrow.text()))

    const before = readSandboxPartner(dataDir)
    const other = await app.newPartner()
    const otherSession = await signedInSession(app.db.pool, app.baseUrl, other.credentials.partnerId)
    expect(
      (
        await postForm(app.baseUrl, otherSession, '/dashboard/settings/rotate', {
          credential: 'request-signing',
          overlapHours: '0',
          reference: randomUUID(),
        })
      ).status,
    ).toBe(200)
    expect(readSandboxPartner(dataDir)).toEqual(before)
  })
})
