/**
 * SPEC §6.9 in `tickwork status`: a one-shot whose retry succeeded shows the attempt that ran
 * last, and its last failure labelled as such, with its time and that a run succeeded since.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler } from "@tickwork/durable"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { sqlite, T0, tempStore } from "./store.ts"
import { lines, tickwork } from "./support.ts"

let runs = 0
const flaky = Handler.make("flaky", Schema.Struct({}), () =>
  Effect.suspend(() => {
    runs += 1
    return runs === 1 ? Effect.fail("upstream answered 503") : Effect.void
  }),
)

const seeded = (file: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const { durable: d } = yield* DurableScheduler.make({ handlers: [flaky], owner: "w" })
      const settle = Effect.gen(function* () {
        for (let k = 0; k < 10_000 && !(yield* d.idle); k++) yield* Effect.yieldNow
      })
      yield* d.schedule({
        id: "o",
        handler: flaky,
        payload: {},
        schedule: Schedule.once(1_000),
        retry: { maxRetries: 2, base: 1_000 },
      })
      yield* settle
      yield* TestClock.adjust(1_000)
      yield* settle
      yield* TestClock.adjust(1_000)
      yield* settle
    }),
  ).pipe(Effect.provide(sqlite(file)))

describe("status after a retry succeeded (SPEC §6.9)", () => {
  it.effect("shows attempt 2 and the last failure with its time", () =>
    Effect.gen(function* () {
      const t = tempStore()
      yield* seeded(t.file)
      const out = lines(yield* tickwork("status", "o", "--store", t.file))
      expect(out.find((l) => l.startsWith("state"))).toBe("state              done")
      expect(out.find((l) => l.startsWith("attempt"))).toBe("attempt            2")
      expect(out.find((l) => l.startsWith("last"))).toBe(
        'last failure       2026-12-01T09:00:01Z: "upstream answered 503" (a run succeeded since)',
      )
      t.cleanup()
    }),
  )
})
