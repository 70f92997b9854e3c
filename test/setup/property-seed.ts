/**
 * Vitest setup: every fast-check property in the suite uses `FUZZ_SEED` when it is set (`.ci/run`
 * sets it from the committed source and tests, so a CI run replays exactly the cases of the
 * author's run on the same commit); otherwise fast-check picks a new seed each run. A failure
 * prints its seed either way: `FUZZ_SEED=<seed> npx vitest run <file>` replays it.
 */
import fc from 'fast-check'

const seed = process.env.FUZZ_SEED
if (seed !== undefined && seed !== '') {
  const n = Number(seed)
  if (!Number.isSafeInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(seed)}`)
  fc.configureGlobal({ seed: n })
}
