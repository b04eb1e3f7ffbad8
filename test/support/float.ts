// Funds a sandbox partner's float over the API, as many tests begin. The reference is required
// (one reference funds once); a fresh one per call, unless the test names one.
import { randomUUID } from 'node:crypto'
import type { RailClient, RailResponse } from '../../src/client/index.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

export type FundingJson = Schemas['FloatFunding']

export function fundFloat(
  client: RailClient,
  amountKobo: number,
  reference = `fund-${randomUUID()}`,
): Promise<RailResponse<FundingJson>> {
  return client.post<FundingJson>('/api/v1/rail/sandbox/fund-float', { amountKobo, reference })
}
