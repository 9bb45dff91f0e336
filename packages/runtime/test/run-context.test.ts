/**
 * SPEC §16: what a run's fiber sees and what it may touch, with the pool's context of two
 * overlays (Scope, CurrentRun) over the job's services and one annotations object per job
 * context whose task, slot and attempt are read from the logging fiber's `CurrentRun`.
 */
import { inspect } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Logger, References } from "effect"
import { TestClock } from "effect/testing"
import { Run, Schedule, Scheduler } from "../src/index.ts"

/** A logger keeping each message with the annotations its fiber sees, read as loggers read them. */
const recording = () => {
  const logs: Array<{ message: string; annotations: Record<string, unknown>; shown: string }> = []
  const logger = Logger.make((o) => {
    const annotations = o.fiber.getRef(References.CurrentLogAnnotations)
    logs.push({
      message: String(o.message),
      annotations: Object.fromEntries(Object.entries(annotations)),
      shown: inspect(annotations),
    })
  })
  return { logs, layer: Logger.layer([logger]) }
}

describe("a run's context", () => {
  it.effect("CurrentRun and the run's annotations are seen in child fibers", () => {
    const { logs, layer } = recording()
    return Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const seen: Array<string> = []
      yield* s.schedule({
        id: "parent",
        schedule: Schedule.once(5),
        job: Effect.gen(function* () {
          const child = yield* Effect.forkChild(
            Effect.gen(function* () {
              seen.push((yield* Run.CurrentRun).id)
              yield* Effect.log("from the child")
            }),
          )
          yield* Fiber.join(child)
        }),
      })
      yield* TestClock.adjust(5)
      expect(seen).toEqual(["parent"])
      expect(logs.find((l) => l.message === "from the child")?.annotations).toEqual({
        "tickwork.task": "parent",
        "tickwork.slot": 5,
        "tickwork.attempt": 1,
      })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a detached fiber outliving its run still names its own run, not the next one", () => {
    const { logs, layer } = recording()
    return Effect.gen(function* () {
      // One worker: the later run of another task takes the same worker slot.
      const s = yield* Scheduler.make({ workers: 1 })
      const release = yield* Deferred.make<void>()
      const detached: Array<string> = []
      yield* s.schedule({
        id: "first",
        schedule: Schedule.once(1),
        job: Effect.asVoid(
          Effect.forkDetach(
            Effect.gen(function* () {
              yield* Deferred.await(release)
              detached.push((yield* Run.CurrentRun).id)
              yield* Effect.log("detached, late")
            }),
          ),
        ),
      })
      yield* s.schedule({
        id: "second",
        schedule: Schedule.once(2),
        job: Effect.gen(function* () {
          yield* Deferred.succeed(release, undefined)
          yield* Effect.yieldNow
          yield* Effect.log("second")
        }),
      })
      yield* TestClock.adjust(2)
      yield* Effect.yieldNow
      expect(detached).toEqual(["first"])
      const late = logs.find((l) => l.message === "detached, late")
      expect(late?.annotations["tickwork.task"]).toBe("first")
      expect(late?.annotations["tickwork.slot"]).toBe(1)
      expect(logs.find((l) => l.message === "second")?.annotations["tickwork.task"]).toBe("second")
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "annotations print with their values (console.log / util.inspect), not as getters",
    () => {
      const { logs, layer } = recording()
      return Effect.gen(function* () {
        const s = yield* Scheduler.make()
        yield* s.schedule({ id: "shown", schedule: Schedule.once(3), job: Effect.log("hi") })
        yield* TestClock.adjust(3)
        const shown = logs.find((l) => l.message === "hi")?.shown ?? ""
        expect(shown).not.toContain("Getter")
        expect(shown).toContain("'tickwork.task': 'shown'")
        expect(shown).toContain("'tickwork.slot': 3")
      }).pipe(Effect.provide(layer))
    },
  )

  it.effect("annotations a job adds are its own and sit beside the run's", () => {
    const { logs, layer } = recording()
    return Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({
        id: "annotated",
        schedule: Schedule.once(1),
        job: Effect.log("inner").pipe(Effect.annotateLogs({ step: "load" })),
      })
      yield* TestClock.adjust(1)
      expect(logs.find((l) => l.message === "inner")?.annotations).toEqual({
        step: "load",
        "tickwork.task": "annotated",
        "tickwork.slot": 1,
        "tickwork.attempt": 1,
      })
    }).pipe(Effect.provide(layer))
  })
})

describe("runs end independently", () => {
  it.effect("outcomes are applied in the order the runs ended, not the order they started", () =>
    Effect.gen(function* () {
      const ended: Array<string> = []
      const s = yield* Scheduler.make({
        workers: 2,
        listener: { completed: (r) => ended.push(r.id) },
      })
      yield* s.schedule({ id: "slow", schedule: Schedule.once(0), job: Effect.sleep(20) })
      yield* s.schedule({ id: "fast", schedule: Schedule.once(0), job: Effect.sleep(10) })
      yield* TestClock.adjust(30)
      expect(ended).toEqual(["fast", "slow"])
    }),
  )

  it.effect("cancelling one running task interrupts its run alone", () =>
    Effect.gen(function* () {
      const outcomes: Array<[string, string]> = []
      const s = yield* Scheduler.make({
        workers: 2,
        listener: { completed: (r) => outcomes.push([r.id, r.outcome.kind]) },
      })
      const gate = yield* Deferred.make<void>()
      yield* s.schedule({ id: "a", schedule: Schedule.once(0), job: Deferred.await(gate) })
      yield* s.schedule({ id: "b", schedule: Schedule.once(0), job: Deferred.await(gate) })
      yield* TestClock.adjust(1)
      expect(yield* s.cancel("a", { interrupt: true })).toBe(true)
      yield* Deferred.succeed(gate, undefined)
      yield* TestClock.adjust(1)
      expect(outcomes).toEqual([
        ["a", "interrupted"],
        ["b", "succeeded"],
      ])
    }),
  )

  it.effect("a fiber handle kept from an ended run cannot interrupt a later run", () =>
    Effect.gen(function* () {
      const runs: Array<[number, string]> = []
      const s = yield* Scheduler.make({
        workers: 1,
        listener: { completed: (r) => runs.push([r.runNumber, r.outcome.kind]) },
      })
      const kept: Array<Fiber.Fiber<unknown, unknown>> = []
      const gate = yield* Deferred.make<void>()
      yield* s.schedule({
        id: "r",
        schedule: Schedule.fixedRate(10),
        job: (run) =>
          Effect.gen(function* () {
            kept.push(Fiber.getCurrent() as Fiber.Fiber<unknown, unknown>)
            if (run.runNumber === 2) yield* Deferred.await(gate)
          }),
      })
      yield* TestClock.adjust(10) // run 1 ended; run 2 is waiting on the gate, same worker
      expect(kept).toHaveLength(2)
      yield* Fiber.interrupt(kept[0] as Fiber.Fiber<unknown, unknown>)
      yield* Deferred.succeed(gate, undefined)
      yield* TestClock.adjust(1)
      expect(runs).toEqual([
        [1, "succeeded"],
        [2, "succeeded"],
      ])
    }),
  )
})
