// The sandbox's Paystack dialect: what src/app.ts mounts and runs (its routes, its background work, and
// its announcements of credits to accounts it allocated). docs/sandbox.md, "Sandbox Paystack".
export { registerRoutes as registerSandboxPaystackRoutes } from './routes.ts'
export { creditNotifier as paystackCreditNotifier, transferEventTasks as sandboxPaystackTasks } from './webhooks.ts'
