/**
 * Issue 23: a durable store keeps a cron expression as written, so every form of the dialect
 * (macros, `L`, `L-n`, `nL`, `n#k`, `?`, `nW`, `LW`) survives a restart and an `update`, and
 * its next slot after the restart is the one core computes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Option } from "effect"
import { recording, sqlite, tempDir, withScheduler } from "./helpers.ts"

const ZONE = "Europe/Berlin"

const FORMS = [
  "@yearly",
  "@annually",
  "@monthly",
  "@weekly",
  "@daily",
  "@midnight",
  "@hourly",
  "0 0 L * *",
  "0 0 L-3 * *",
  "0 9 * * 5L",
  "0 9 * * 5#3",
  "0 9 ? * MON",
  "0 0 15W * *",
  "0 0 LW * *",
  "0,30 2 * * *",
]

/** Core's first slot of `expression` after `now`. */
const firstSlot = (expression: string, now: number): number => {
  const r = Schedule.preview(Schedule.cron(expression, { timeZone: ZONE }), { from: now, count: 1 })
  if (!Array.isArray(r) || r[0] === undefined) throw new Error(`${expression}: no slot`)
  return r[0].slot
}

describe("issue 23: the cron dialect in a durable store", () => {
  it.effect("each form survives a restart and an update, kept as written", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const { handler } = recording()
      const store = sqlite(t.file())
      const options = { handlers: [handler] }
      const check = (expression: string) =>
        withScheduler(store, options, (d) =>
          Effect.gen(function* () {
            const info = Option.getOrThrow(yield* d.info("c"))
            expect(info.schedule, expression).toEqual({
              kind: "cron",
              expression,
              timeZone: ZONE,
            })
            expect(info.scheduledFor, expression).toBe(firstSlot(expression, 0))
          }),
        )
      yield* withScheduler(store, options, (d) =>
        d.schedule({
          id: "c",
          handler,
          payload: { n: 0 },
          schedule: Schedule.cron(FORMS[0] as string, { timeZone: ZONE }),
        }),
      )
      yield* check(FORMS[0] as string)
      for (const expression of FORMS.slice(1)) {
        yield* withScheduler(store, options, (d) =>
          Effect.gen(function* () {
            const updated = yield* d.update("c", {
              schedule: Schedule.cron(expression, { timeZone: ZONE }),
            })
            expect(updated, expression).toBe(true)
          }),
        )
        yield* check(expression)
      }
      t.cleanup()
    }),
  )
})
