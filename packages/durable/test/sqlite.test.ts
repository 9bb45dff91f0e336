import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { advance, recording, sqlite, tempDir, withScheduler } from "./helpers.ts"

describe("SQLite store under TestClock", () => {
  it.effect("runs once, fixed-rate, fixed-delay and cron tasks at their slots", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const { seen, handler } = recording()
      yield* withScheduler(sqlite(t.file()), { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          yield* d.schedule({ id: "once", handler, payload: { n: 1 }, schedule: Schedule.once(30) })
          yield* d.schedule({
            id: "rate",
            handler,
            payload: { n: 2 },
            schedule: Schedule.fixedRate(25, { delay: 5 }),
          })
          yield* advance(d, 60)
        }),
      )
      expect(seen.map((s) => `${s.id}@${s.startedAt}`)).toEqual([
        "rate@5",
        "once@30",
        "rate@30",
        "rate@55",
      ])
      t.cleanup()
    }),
  )
})
