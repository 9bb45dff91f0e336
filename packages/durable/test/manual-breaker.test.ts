/**
 * SPEC §19.1 on SQLite: a breaker's hold keeps a task's waiting manual run, and the breaker's
 * unhold resumes the run it set aside (`Rules.resumeManual`), not the manual run, which runs as
 * it was when the breaker lets the task go; a pause by hand or a new schedule drops it, held or
 * not. The same scenario as the core's and the runtime's tests, in virtual time.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Option, Schema } from "effect"
import { type DurableScheduler, Handler } from "../src/index.ts"
import { advance, inFile, sqlite, withScheduler } from "./helpers.ts"

/** Every run of `b`: its slot, attempt, start and whether it was manual. */
const tasks = () => {
  const runs: Array<[slot: number, attempt: number, startedAt: number, manual: boolean]> = []
  const b = Handler.make("b", Schema.Struct({}), (_, run) =>
    Effect.sync(() => {
      runs.push([run.slot, run.attempt, run.startedAt, run.manual === true])
    }),
  )
  const a = Handler.make("a", Schema.Struct({}), () => Effect.fail("down"))
  const busy = Handler.make("busy", Schema.Struct({}), () => Effect.sleep(20))
  return { runs, handlers: [a, b, busy] }
}

const options = (handlers: ReturnType<typeof tasks>["handlers"]) => ({
  handlers,
  workers: 1,
  breakers: { db: { failures: 1, coolDown: 1_000 } },
})

/**
 * `b` (every 100) has a trigger's run waiting (due 45) when `a`'s failure at 60 opens breaker
 * db, which holds it: `busy` keeps the only worker from 40 to 60, so `a` (due 42) and the
 * manual run wait, and `a` goes first.
 */
const held = (d: DurableScheduler.DurableSchedulerShape) =>
  Effect.gen(function* () {
    const p = { payload: {}, breaker: "db" }
    yield* d.schedule({ ...p, id: "b", handler: "b", schedule: Schedule.fixedRate(100) })
    yield* d.schedule({ id: "busy", handler: "busy", payload: {}, schedule: Schedule.once(40) })
    yield* d.schedule({ ...p, id: "a", handler: "a", schedule: Schedule.once(42) })
    yield* advance(d, 45)
    yield* d.trigger("b")
    yield* advance(d, 15)
    expect(Option.getOrThrow(yield* d.info("b"))).toMatchObject({
      state: "paused",
      pausedReason: "breaker",
      slot: 45,
      scheduledFor: 45,
    })
  })

const skipped = (d: DurableScheduler.DurableSchedulerShape) =>
  Effect.map(d.ledger("b"), (ledger) =>
    ledger.flatMap((o) =>
      o.kind === "skipped" ? [[o.firstSlot, o.lastSlot, o.count, o.cause]] : [],
    ),
  )

describe("a breaker's hold and a waiting manual run on SQLite (SPEC §19.1)", () => {
  it.effect(
    "the hold keeps it; it runs when the breaker lets the task go, the kept run resumes on its grid",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          const { runs, handlers } = tasks()
          yield* withScheduler(sqlite(file), options(handlers), (d) =>
            Effect.gen(function* () {
              yield* held(d)
              // Half-open at 1060: b is the probe; its manual run goes first, then slot 1100.
              yield* advance(d, 1_040)
              expect(runs).toEqual([
                [0, 1, 0, false],
                [45, 1, 1_060, true],
                [1_100, 1, 1_100, false],
              ])
              expect(yield* skipped(d)).toEqual([[100, 1_000, 10, "breaker"]])
              expect(Option.getOrThrow(yield* d.breaker("db")).state).toBe("closed")
            }),
          )
        }),
      ),
  )

  it.effect("resumed by hand while held, the manual run is due as it was", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, handlers } = tasks()
        yield* withScheduler(sqlite(file), options(handlers), (d) =>
          Effect.gen(function* () {
            yield* held(d)
            yield* advance(d, 290)
            expect(yield* d.resume("b")).toBe(true)
            expect(yield* skipped(d)).toEqual([[100, 300, 3, "paused"]])
            yield* advance(d, 50)
            expect(runs).toEqual([
              [0, 1, 0, false],
              [45, 1, 350, true],
              [400, 1, 400, false],
            ])
          }),
        )
      }),
    ),
  )

  it.effect(
    "a pause by hand drops it while it is held; resumed, the task goes on from its kept run",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          const { runs, handlers } = tasks()
          yield* withScheduler(sqlite(file), options(handlers), (d) =>
            Effect.gen(function* () {
              yield* held(d)
              yield* d.pause("b")
              // The run it set aside is the task's again: slot 100.
              expect(Option.getOrThrow(yield* d.info("b"))).toMatchObject({
                state: "paused",
                pausedReason: "manual",
                slot: 100,
                scheduledFor: 100,
              })
              yield* advance(d, 290)
              expect(yield* d.resume("b")).toBe(true)
              expect(yield* skipped(d)).toEqual([[100, 300, 3, "paused"]])
              yield* advance(d, 50)
              expect(runs).toEqual([
                [0, 1, 0, false],
                [400, 1, 400, false],
              ])
            }),
          )
        }),
      ),
  )

  it.effect("a new schedule drops it while it is held", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, handlers } = tasks()
        yield* withScheduler(sqlite(file), options(handlers), (d) =>
          Effect.gen(function* () {
            yield* held(d)
            expect(yield* d.update("b", { schedule: Schedule.fixedRate(1_000) })).toBe(true)
            yield* advance(d, 290)
            expect(yield* d.resume("b")).toBe(true)
            // No manual run is left waiting: a trigger is taken again, and runs now.
            yield* d.trigger("b")
            yield* advance(d, 0)
            expect(runs).toEqual([
              [0, 1, 0, false],
              [350, 1, 350, true],
            ])
          }),
        )
      }),
    ),
  )
})
