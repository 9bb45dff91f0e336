/**
 * SPEC §18 through the runtime Scheduler on TestClock: declared tasks created, updated in place,
 * left untouched, a named set's undeclared tasks cancelled, a final id's next generation, and a
 * bad batch that changes nothing. The decisions are core's (`Declared.decide`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { Schedule, Scheduler } from "../src/index.ts"

const job = Effect.void
const report = { created: [], updated: [], unchanged: [], cancelled: [] }

describe("ensure (SPEC §18)", () => {
  it.effect("SPEC §18.1: creates the absent, leaves the same, updates the changed in place", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const report1 = { id: "report", schedule: Schedule.cron("0 * * * *"), job }
      const sweep1 = { id: "sweep", schedule: Schedule.fixedRate(60_000), job, tags: ["ops"] }
      const v1 = [report1, sweep1]
      expect(yield* s.ensure(v1)).toEqual({ ...report, created: ["report", "sweep"] })
      yield* TestClock.adjust(3_600_000) // report ran once, sweep 61 times
      const before = Option.getOrThrow(yield* s.info("sweep"))
      const ledgerBefore = yield* s.ledger("sweep")
      // The same declaration again (a later boot of the same code): nothing changes.
      expect(yield* s.ensure(v1)).toEqual({ ...report, unchanged: ["report", "sweep"] })
      expect(Option.getOrThrow(yield* s.info("sweep"))).toEqual(before)
      // A changed period and priority: updated in place, its ledger kept.
      const sweep2 = { ...sweep1, schedule: Schedule.fixedRate(30_000), priority: "high" as const }
      const v2 = [report1, sweep2]
      expect(yield* s.ensure(v2)).toEqual({
        ...report,
        updated: [{ id: "sweep", fields: ["schedule", "priority"] }],
        unchanged: ["report"],
      })
      const after = Option.getOrThrow(yield* s.info("sweep"))
      expect(after.generation).toBe(before.generation)
      // The new schedule starts as if scheduled now (SPEC §15): its first run may be due at once.
      expect(after.runNumber).toBeGreaterThanOrEqual(before.runNumber)
      expect(after.priority).toBe("high")
      const ledgerAfter = yield* s.ledger("sweep")
      expect(ledgerAfter).toContainEqual(ledgerBefore.at(-1)) // kept, not started afresh
      // An option left out of the declaration is removed: the tag goes.
      expect(yield* s.ensure([report1, { ...sweep2, tags: undefined }])).toMatchObject({
        updated: [{ id: "sweep", fields: ["tags"] }],
      })
      expect(Option.getOrThrow(yield* s.info("sweep")).tags).toEqual([])
    }),
  )

  it.effect("SPEC §18.1: an update is recorded in the ledger, by ensure and by update", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const sweep = { id: "sweep", schedule: Schedule.fixedRate(60_000, { delay: 3_600_000 }), job }
      yield* s.ensure([sweep])
      yield* s.ensure([sweep]) // unchanged: nothing recorded
      expect(yield* s.ledger("sweep")).toEqual([])
      yield* s.ensure([
        { ...sweep, schedule: Schedule.fixedRate(30_000), priority: "high" as const },
      ])
      yield* s.update("sweep", { priority: "low" })
      const updates = (yield* s.ledger("sweep")).filter((o) => o.kind === "updated")
      expect(updates).toMatchObject([
        {
          kind: "updated",
          id: "sweep",
          generation: 1,
          fields: ["schedule", "priority"],
          cause: "ensure",
        },
        { kind: "updated", id: "sweep", generation: 1, fields: ["priority"], cause: "update" },
      ])
      // A task that is not live is not updated, and nothing is recorded.
      yield* s.cancel("sweep")
      expect(yield* s.update("sweep", { priority: "high" })).toBe(false)
      expect((yield* s.ledger("sweep")).filter((o) => o.kind === "updated")).toHaveLength(2)
    }),
  )

  it.effect("SPEC §18.2: a bad declaration fails naming the field and changes nothing", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.ensure([{ id: "a", schedule: Schedule.fixedRate(1000), job }])
      const bad = yield* Effect.flip(
        s.ensure([
          { id: "a", schedule: Schedule.fixedRate(2000), job },
          { id: "b", schedule: Schedule.fixedRate(1000), job, priority: "urgent" as never },
        ]),
      )
      expect(bad).toMatchObject({ _tag: "InvalidPriority", field: "priority", value: "urgent" })
      expect(yield* s.status("b")).toBe("unknown")
      const again = yield* s.ensure([{ id: "a", schedule: Schedule.fixedRate(1000), job }])
      expect(again.unchanged).toEqual(["a"]) // "a" kept its period
      const twice = yield* Effect.flip(
        s.ensure([
          { id: "c", schedule: Schedule.fixedRate(1000), job },
          { id: "c", schedule: Schedule.fixedRate(1000), job },
        ]),
      )
      expect(twice).toMatchObject({ _tag: "InvalidOption", field: "tasks[1].id", value: "c" })
      expect(yield* s.status("c")).toBe("unknown")
    }),
  )

  it.effect("SPEC §18.3: a set's tasks no longer declared are cancelled; others are not", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "by-hand", schedule: Schedule.fixedRate(1000), job })
      const first = yield* s.ensure(
        [
          { id: "a", schedule: Schedule.fixedRate(1000), job },
          { id: "b", schedule: Schedule.fixedRate(1000), job },
        ],
        { set: "app" },
      )
      expect(first.created).toEqual(["a", "b"])
      expect(Option.getOrThrow(yield* s.info("a")).tags).toEqual(["app"])
      const second = yield* s.ensure([{ id: "a", schedule: Schedule.fixedRate(1000), job }], {
        set: "app",
      })
      expect(second).toEqual({ ...report, unchanged: ["a"], cancelled: ["b"] })
      expect(yield* s.status("b")).toBe("cancelled")
      expect(yield* s.status("by-hand")).toBe("scheduled")
    }),
  )

  it.effect(
    "SPEC §18.4: a declared id whose task is final is scheduled again as its next generation",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        const decl = [{ id: "nightly", schedule: Schedule.fixedRate(1000), job }]
        yield* s.ensure(decl)
        yield* s.cancel("nightly")
        const again = yield* s.ensure(decl)
        expect(again.created).toEqual(["nightly"])
        const info = Option.getOrThrow(yield* s.info("nightly"))
        expect(info.state).toBe("scheduled")
        expect(info.generation).toBe(2)
      }),
  )
})
