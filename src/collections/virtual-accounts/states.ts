// Statuses of a virtual account (docs/states.md). The repo archives only an active account
// (`WHERE status = ANY(virtualAccountStates.from('archived'))`); the database refuses any other change
// (migration 0036).
import { defineMachine } from '../../platform/state-machine.ts'

export type VirtualAccountStatus = 'active' | 'archived'

export const virtualAccountStates = defineMachine<VirtualAccountStatus>({
  name: 'virtual_account',
  table: 'virtual_accounts',
  column: 'status',
  next: {
    active: ['archived'], // the partner archives it, or its intent expires
    archived: [], // for good: credits to its number go to triage
  },
})
