// States of a bank instruction and the moves between them (docs/states.md). Repos guard each
// change with `WHERE state = ANY(instructionStates.from(next))`, fenced by the worker's lease, so a
// late, duplicate or contradicting answer after a final state changes nothing; the database
// refuses any other change (migration 0036).
import { defineMachine } from '../../platform/state-machine.ts'

export type InstructionState = 'ready' | 'sending' | 'sent' | 'succeeded' | 'failed' | 'unknown'

export const instructionStates = defineMachine<InstructionState>({
  name: 'bank_instruction',
  table: 'bank_instructions',
  column: 'state',
  next: {
    // Nothing sent yet: the name enquiry passed (sending), or refused the payment (failed).
    ready: ['sending', 'failed'],
    // A send is committed and its outcome not known: the bank's answer, or a requery's, decides;
    // sending again (same reference) after the bank said it has no record stays `sending`.
    sending: ['sending', 'sent', 'succeeded', 'failed', 'unknown'],
    // The bank has it in progress: requery until a final code, or the deadline.
    sent: ['succeeded', 'failed', 'unknown'],
    // The schedule ran out: a later requery or an operator's decision with evidence settles it. A
    // requery that finds no record of an instruction the bank never had sends it again (sending).
    unknown: ['sending', 'succeeded', 'failed'],
    succeeded: [],
    failed: [],
  },
})

/** States a worker may take an instruction in; unknown only when someone asks for it. */
export const WORKABLE: readonly InstructionState[] = ['ready', 'sending', 'sent']
