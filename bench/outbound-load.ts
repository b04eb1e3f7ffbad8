// The load generator of bench:outbound, in a process of its own (bench/signed-load.ts): signed
// `POST /api/v1/rail/outbound` submits (BENCH_PATH overrides the path), each to an account of its
// own. The warm-up makes the figure the API's steady state, not its JIT compiling and its database
// connections opening.
import { outboundSubmitBody } from './request-bodies.ts'
import { runSignedLoad } from './signed-load.ts'

await runSignedLoad(process.env.BENCH_PATH ?? '/api/v1/rail/outbound', outboundSubmitBody)
