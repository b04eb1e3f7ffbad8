// `rail payments …`: operations on the payment pipeline's instructions (every payment Rail asks a
// bank to make: wallet moves, outbound transfers, refunds). An instruction's id is its owner's id.
import os from 'node:os'
import { type Command, Option } from 'commander'
import { resolveUnknown } from './resolution.ts'
import { getInstruction, type Instruction, type WithPayments } from './service.ts'

export function registerPaymentCommands(program: Command, withPayments: WithPayments): void {
  const payments = program
    .command('payments')
    .description('operate the payment pipeline (wallet moves, outbound transfers, refunds)')
  payments
    .command('show')
    .description('print a payment instruction: its state, attempts, the bank’s last answer, any operator decision')
    .argument('<id>', 'the payment’s id (a wallet move’s or an outbound transfer’s id)')
    .action(async (id: string) => {
      const instruction = await withPayments((deps) => getInstruction(deps.pool, id))
      if (!instruction) throw new Error(`no payment ${id}`)
      console.log(JSON.stringify(toJson(instruction), null, 2))
    })
  payments
    .command('resolve')
    .description(
      'decide an unknown payment with evidence: posts or voids its hold once, records who decided and why, sends its terminal callback',
    )
    .argument('<id>', 'the payment’s id (a wallet move’s or an outbound transfer’s id)')
    .addOption(
      new Option('--outcome <outcome>', 'what the evidence shows')
        .choices(['successful', 'failed'])
        .makeOptionMandatory(),
    )
    .requiredOption('--evidence <text>', 'what shows the outcome: a bank statement line, the bank’s written answer')
    .option('--partner <partnerId>', 'refuse unless the payment is this partner’s')
    .option('--operator <name>', 'who decides (default: this system user)')
    .action(
      async (
        id: string,
        options: { outcome: 'successful' | 'failed'; evidence: string; partner?: string; operator?: string },
      ) => {
        const operator = options.operator ?? os.userInfo().username
        const resolved = await withPayments((deps) =>
          resolveUnknown(deps, {
            id,
            outcome: options.outcome,
            evidence: options.evidence,
            operator,
            partnerId: options.partner,
          }),
        )
        console.log(JSON.stringify(toJson(resolved), null, 2))
      },
    )
}

function toJson(instruction: Instruction) {
  return {
    id: instruction.id,
    partnerId: instruction.partnerId,
    ownerType: instruction.ownerType,
    operation: instruction.operation,
    state: instruction.state,
    amountKobo: instruction.amountKobo,
    sendAttempts: instruction.sendAttempts,
    requeryAttempts: instruction.requeryAttempts,
    deadlineAt: instruction.deadlineAt.toISOString(),
    verifiedAccountName: instruction.verifiedAccountName,
    providerReference: instruction.providerReference,
    responseCode: instruction.responseCode,
    responseMessage: instruction.responseMessage,
    // Whether the bank ever said it had it: decides what "no record" (25) means for an unknown one.
    acceptedAt: instruction.acceptedAt?.toISOString() ?? null,
    failureCode: instruction.failureCode,
    failureMessage: instruction.failureMessage,
    resolution: instruction.resolution,
    createdAt: instruction.createdAt.toISOString(),
    terminalAt: instruction.terminalAt?.toISOString() ?? null,
  }
}
