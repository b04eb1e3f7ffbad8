// The sandbox's Paystack dialect: what src/app.ts mounts and runs (its routes, its background work, and
// its announcements of credits to accounts it allocated). docs/sandbox.md, "Sandbox Paystack".
import type { Task } from 'graphile-worker'
import type { SandboxDialectDeps, SandboxDialectJobDeps } from '../dialects.ts'
import type { CreditNotifier } from '../jobs.ts'
import { registerRoutes } from './routes.ts'
import { creditNotifier, transferEventTasks } from './webhooks.ts'

export function registerSandboxPaystackRoutes(deps: SandboxDialectDeps): void {
  registerRoutes(deps)
}

export function sandboxPaystackTasks(deps: SandboxDialectJobDeps): Record<string, Task> {
  return transferEventTasks(deps)
}

export function paystackCreditNotifier(deps: SandboxDialectJobDeps): CreditNotifier {
  return creditNotifier(deps)
}
