// States of a bank instruction and the moves between them. Checked in SQL on every change
// (`UPDATE … WHERE state = ANY(allowed)`, fenced by the worker's lease), so a late, duplicate or
// contradicting answer after a final state changes nothing.
export type InstructionState = 'ready' | 'sending' | 'sent' | 'succeeded' | 'failed' | 'unknown'

export const NEXT: Record<InstructionState, readonly InstructionState[]> = {
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
}

/** The states from which an instruction may reach `next` (itself included where the table allows). */
export function allowedFrom(next: InstructionState): InstructionState[] {
  return (Object.keys(NEXT) as InstructionState[]).filter((from) => NEXT[from].includes(next))
}

export function isFinal(state: InstructionState): boolean {
  return NEXT[state].length === 0
}

/** States a worker may take an instruction in; unknown only when someone asks for it. */
export const WORKABLE: readonly InstructionState[] = ['ready', 'sending', 'sent']
