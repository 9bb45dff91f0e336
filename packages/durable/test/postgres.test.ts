import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect } from "effect"
import { Postgres } from "../src/index.ts"
import { recording, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

let db: { url: string; drop: () => Promise<void> }
beforeEach(async () => {
  db = await freshDatabase()
})
afterEach(async () => {
  await db.drop()
})

describe("PostgreSQL store", () => {
  it.live("runs tasks at their slots, with the same execution path as SQLite", () =>
    Effect.gen(function* () {
      const { seen, handler } = recording()
      const store = Postgres.layer({ url: db.url })
      yield* withScheduler(store, { handlers: [handler], pollInterval: 50 }, (d) =>
        Effect.gen(function* () {
          yield* d.schedule({ id: "a", handler, payload: { n: 1 }, schedule: Schedule.once(50) })
          yield* d.schedule({
            id: "r",
            handler,
            payload: { n: 2 },
            schedule: Schedule.fixedRate(100),
          })
          yield* Effect.sleep(350)
          const ledger = yield* d.ledger("r")
          expect(ledger.filter((o) => o.kind === "ran").length).toBeGreaterThanOrEqual(3)
          expect(yield* d.status("a")).toBe("done")
        }),
      )
      expect(seen.filter((s) => s.id === "a")).toHaveLength(1)
      for (const s of seen) expect(s.startedAt).toBeGreaterThanOrEqual(s.scheduledFor)
    }),
  )
})
