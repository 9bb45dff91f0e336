/**
 * Issue 23: a durable store keeps a cron expression as written, so every form of the dialect
 * (macros, `L`, `L-n`, `nL`, `n#k`, `?`, `nW`, `LW`) survives a restart and an `update`, and
 * its next slot after the restart is the one core computes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Handler } from "../src/index.ts"
import { advance, inFile, recording, sqlite, tempDir, withScheduler } from "./helpers.ts"

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

  it.effect("every matching time of a DST gap runs once, shifted by the gap, from the store", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { handler, seen } = recording()
        yield* TestClock.setTime(Date.parse("2026-03-28T12:00:00Z"))
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "gap",
              handler,
              payload: { n: 0 },
              schedule: Schedule.cron("0,30 2 * * *", { timeZone: ZONE }),
            })
            yield* advance(d, 30 * 3_600_000)
          }),
        )
        // Berlin springs forward at 02:00 on 2026-03-29: 02:00 and 02:30 run at 03:00, 03:30 CEST.
        expect(seen.map((r) => new Date(r.slot).toISOString())).toEqual([
          "2026-03-29T01:00:00.000Z",
          "2026-03-29T01:30:00.000Z",
        ])
      }),
    ),
  )

  it.effect(
    'dayMatch "either" is stored, survives a restart, and an update sets or clears it',
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const { handler } = recording()
        const store = sqlite(t.file())
        const options = { handlers: [handler] }
        const expression = "0 16 */2 * sat"
        const either = Schedule.cron(expression, { timeZone: "UTC", dayMatch: "either" })
        const vixie = Schedule.cron(expression, { timeZone: "UTC" })
        const slotOf = (s: Schedule.Schedule) => {
          const r = Schedule.preview(s, { from: 0, count: 1 })
          if (!Array.isArray(r) || r[0] === undefined) throw new Error("no slot")
          return r[0].slot
        }
        // From 1970-01-01 (a Thursday): either field gives the 1st, the Vixie rule Saturday the 3rd.
        expect(slotOf(either)).toBe(Date.parse("1970-01-01T16:00:00Z"))
        expect(slotOf(vixie)).toBe(Date.parse("1970-01-03T16:00:00Z"))
        const check = (dayMatch: "either" | undefined, slot: number) =>
          withScheduler(store, options, (d) =>
            Effect.gen(function* () {
              const info = Option.getOrThrow(yield* d.info("c"))
              expect(info.schedule).toStrictEqual({
                kind: "cron",
                expression,
                timeZone: "UTC",
                ...(dayMatch === undefined ? {} : { dayMatch }),
              })
              expect(info.scheduledFor).toBe(slot)
            }),
          )
        yield* withScheduler(store, options, (d) =>
          d.schedule({ id: "c", handler, payload: { n: 0 }, schedule: either }),
        )
        yield* check("either", slotOf(either))
        yield* withScheduler(store, options, (d) => d.update("c", { schedule: vixie }))
        yield* check(undefined, slotOf(vixie))
        yield* withScheduler(store, options, (d) => d.update("c", { schedule: either }))
        yield* check("either", slotOf(either))
        t.cleanup()
      }),
  )

  it.effect('an update to dayMatch "either" while a run goes on keeps it when the run ends', () =>
    inFile((file) =>
      Effect.gen(function* () {
        const handler = Handler.make("slow", Schema.Struct({}), () => Effect.sleep(50))
        const options = { handlers: [handler] }
        const either = Schedule.cron("0 16 */2 * sat", { timeZone: "UTC", dayMatch: "either" })
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({ id: "r", handler, payload: {}, schedule: Schedule.fixedRate(100) })
            yield* advance(d, 10)
            expect(yield* d.status("r")).toBe("running")
            expect(yield* d.update("r", { schedule: either })).toBe(true)
            yield* advance(d, 100)
          }),
        )
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            const info = Option.getOrThrow(yield* d.info("r"))
            expect(info.schedule).toStrictEqual({
              kind: "cron",
              expression: "0 16 */2 * sat",
              timeZone: "UTC",
              dayMatch: "either",
            })
            // Read with the Vixie rule it would be Saturday 1970-01-03.
            expect(info.scheduledFor).toBe(Date.parse("1970-01-01T16:00:00Z"))
          }),
        )
      }),
    ),
  )
})
