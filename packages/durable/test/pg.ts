/** PostgreSQL for tests: a fresh database per test on the run's throwaway server. */
import { freshDatabase } from "@tickwork/testkit/Postgres"
import { afterEach, beforeEach } from "vitest"

export { freshDatabase }

/**
 * A fresh database for each test of the enclosing `describe` (or file), dropped after it: its
 * `url` is read inside a test, once `beforeEach` has set it.
 */
export const databasePerTest = (): { readonly url: string } => {
  const current = { url: "", drop: async () => {} }
  beforeEach(async () => {
    Object.assign(current, await freshDatabase())
  })
  afterEach(async () => {
    await current.drop()
  })
  return current
}
