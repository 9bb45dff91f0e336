/**
 * The recorder marks a task final in the ledger when it is cancelled or expires, not only when
 * its last run ends: an earlier generation's records are kept while its task is among the
 * `maxFinished` retained final tasks (SPEC §27.4), so a task made final either way must count.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { type Ledger, Schedule, Scheduler } from "../src/index.ts"

const kinds = (ledger: ReadonlyArray<Ledger.Occurrence>) => ledger.map((o) => o.kind)

describe("an earlier generation's records leave with the maxFinished bound (SPEC §27.4)", () => {
  it.effect("a cancelled generation counts among the retained final tasks", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ retention: { maxFinished: 1 } })
      yield* s.schedule({ id: "a", schedule: Schedule.once(1_000), job: Effect.void })
      expect(yield* s.cancel("a")).toBe(true)
      // Generation 2 of the id: generation 1's records stay readable by generation.
      yield* s.schedule({ id: "a", schedule: Schedule.once(1_000), job: Effect.void })
      expect(kinds(yield* s.ledger("a", { generation: 1 }))).toEqual(["cancelled"])
      // A second final task passes maxFinished: the first (a's generation 1) is dropped.
      yield* s.schedule({ id: "b", schedule: Schedule.once(1_000), job: Effect.void })
      expect(yield* s.cancel("b")).toBe(true)
      expect(yield* s.ledger("a", { generation: 1 })).toEqual([])
      expect(kinds(yield* s.ledger("b"))).toEqual(["cancelled"])
    }),
  )

  it.effect("an expired one-shot's generation counts among the retained final tasks", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1, retention: { maxFinished: 1 } })
      // The hog holds the only worker past late's window; it repeats, so it never turns final.
      yield* s.schedule({ id: "hog", schedule: Schedule.fixedRate(1_000), job: Effect.sleep(50) })
      yield* s.schedule({ id: "late", schedule: Schedule.once(10), window: 20, job: Effect.void })
      yield* TestClock.adjust(60)
      expect(yield* s.status("late")).toBe("failed")
      yield* s.schedule({ id: "late", schedule: Schedule.once(10_000), job: Effect.void })
      expect(kinds(yield* s.ledger("late", { generation: 1 }))).toEqual(["expired"])
      yield* s.schedule({ id: "b", schedule: Schedule.once(10_000), job: Effect.void })
      expect(yield* s.cancel("b")).toBe(true)
      expect(yield* s.ledger("late", { generation: 1 })).toEqual([])
      expect(yield* s.status("hog")).toBe("scheduled")
    }),
  )
})
