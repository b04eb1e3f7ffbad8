// Polls a condition until it holds or the time is up.

/**
 * Limits are written for a quiet machine; CI's is often busy (two cores shared by three test files,
 * Chromium, child processes), where the same steps take several times longer. A limit is never a
 * wait — a passing test returns as soon as its condition holds — so stretching every limit by this
 * factor costs nothing when things work and spares a failure when the machine is merely slow.
 * RAIL_TEST_WAIT_SCALE=1 gives the written limits.
 */
export const WAIT_SCALE = Number(process.env.RAIL_TEST_WAIT_SCALE ?? 3)

export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<void> {
  const limitMs = timeoutMs * WAIT_SCALE
  const deadline = Date.now() + limitMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${limitMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
