/**
 * SPEC §11: with a virtual clock and a pool of one worker, the runtime's run trace equals the
 * deterministic driver's for the same inputs (tasks, clock moves, cancels, seed).
 */
import { Clock, Driver, Random } from "@tickwork/core"
import { Effect, Logger } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Schedule, Scheduler, type Task } from "../src/index.ts"
import * as Commands from "../src/testing/commands.ts"
import { TestScheduler } from "../src/testing/index.ts"

// The random tasks (every kind of schedule, retry, missed-run and failure policy, re-entrant
// jobs) and the scheduler's test layer are those of `@tickwork/runtime/testing`; this property
// compares whole runs, as the jobs see them, where the command model compares after every step.
type Spec = Commands.TaskSpec

type Step =
  | { readonly type: "schedule"; readonly spec: Spec }
  | { readonly type: "advance"; readonly ms: number }
  | { readonly type: "cancel"; readonly target: number }

const steps: fc.Arbitrary<ReadonlyArray<Step>> = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: Commands.taskSpec.map((s): Step => ({ type: "schedule", spec: s })) },
    {
      weight: 3,
      arbitrary: fc.integer({ min: 0, max: 40 }).map((ms): Step => ({ type: "advance", ms })),
    },
    { weight: 1, arbitrary: fc.nat(20).map((target): Step => ({ type: "cancel", target })) },
  ),
  { maxLength: 25 },
)

/** What a task's job does on a run, in terms of the side effects both drivers can perform. */
interface Effects {
  readonly fail: boolean
  readonly spawn: Spec | undefined
  readonly cancelSelf: boolean
}

const effectsOf = (s: Spec, runNumber: number): Effects => ({
  fail: s.fails[runNumber % s.fails.length] as boolean,
  spawn:
    runNumber === 1 && s.spawn !== undefined
      ? { ...s, kind: "once", delay: s.spawn, spawn: undefined }
      : undefined,
  cancelSelf: s.cancelSelfOn === runNumber,
})

const line = (id: string, r: Task.RunInfo) =>
  `${id} slot=${r.scheduledFor} start=${r.startedAt} attempt=${r.attempt} run=${r.runNumber}`

const SEED = 1234

const viaDriver = (program: ReadonlyArray<Step>): Array<string> => {
  const clock = new Clock.ManualClock(0)
  const driver = Driver.make({ clock, random: Random.seeded(SEED) })
  const trace: Array<string> = []
  let n = 0
  const add = (s: Spec) => {
    const id = `t${n++}`
    driver.scheduleUnsafe({
      id,
      ...Commands.taskOptions(s, clock.now()),
      job: (run) => {
        trace.push(line(id, run))
        const e = effectsOf(s, run.runNumber)
        if (e.spawn !== undefined) add(e.spawn)
        if (e.cancelSelf) driver.cancel(id)
        if (e.fail) throw new Error("planned failure")
      },
    })
  }
  for (const step of program) {
    if (step.type === "schedule") add(step.spec)
    else if (step.type === "advance") driver.runUntil(clock.now() + step.ms)
    else driver.cancel(`t${step.target}`)
    // The runtime starts whatever is due without waiting for the clock to move.
    driver.runDue()
  }
  for (let k = 0; k < n; k++) trace.push(`t${k}: ${driver.status(`t${k}`)}`)
  return trace
}

const viaRuntime = (program: ReadonlyArray<Step>) =>
  Effect.gen(function* () {
    const s = yield* Scheduler.Scheduler
    const trace: Array<string> = []
    let n = 0
    const add = (spec: Spec): Effect.Effect<void, unknown> =>
      Effect.gen(function* () {
        const id = `t${n++}`
        const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
        yield* s.schedule({
          id,
          ...Commands.taskOptions(spec, now),
          job: (run) =>
            Effect.gen(function* () {
              trace.push(line(id, run))
              const e = effectsOf(spec, run.runNumber)
              if (e.spawn !== undefined) yield* add(e.spawn)
              if (e.cancelSelf) yield* s.cancel(id)
              if (e.fail) return yield* Effect.fail("planned failure")
            }),
        })
      })
    // Lets the actor start whatever is due now (jobs here finish at once, so this ends).
    const settle = TestScheduler.settle()
    for (const step of program) {
      if (step.type === "schedule") yield* add(step.spec)
      else if (step.type === "advance") yield* TestClock.adjust(step.ms)
      else yield* s.cancel(`t${step.target}`)
      yield* settle
    }
    for (let k = 0; k < n; k++) trace.push(`t${k}: ${yield* s.status(`t${k}`)}`)
    return trace
  }).pipe(Effect.scoped, Effect.provide(TestScheduler.layer({ seed: SEED, logLevel: "None" })))

describe("equivalence with the deterministic driver (SPEC §11)", () => {
  it("a retry due at once goes before a lower-priority run due at the same slot", async () => {
    // A fails synchronously and its retry (backoff 0) is due at once: the actor must apply that
    // outcome before it takes the next run, or B (normal) would start before A's retry (high).
    const tasks = (job: (id: string, attempt: number) => boolean) =>
      [
        { id: "A", priority: "high" as const, retry: { maxRetries: 1, base: 0 } },
        { id: "B", priority: "normal" as const },
      ].map((t) => ({ ...t, schedule: Schedule.once(10), fails: (a: number) => job(t.id, a) }))
    const driverOrder: Array<string> = []
    const driver = Driver.make({ clock: new Clock.ManualClock(0) })
    for (const { fails, ...t } of tasks((id, a) => id === "A" && a === 1)) {
      driver.scheduleUnsafe({
        ...t,
        job: (run) => {
          driverOrder.push(`${t.id}${run.attempt}@${run.startedAt}`)
          if (fails(run.attempt)) throw new Error("planned failure")
        },
      })
    }
    driver.runUntil(20)
    const runtimeOrder = await Effect.runPromise(
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ workers: 1, spans: false })
        const order: Array<string> = []
        for (const { fails, ...t } of tasks((id, a) => id === "A" && a === 1)) {
          yield* s.schedule({
            ...t,
            job: (run) =>
              Effect.suspend(() => {
                order.push(`${t.id}${run.attempt}@${run.startedAt}`)
                return fails(run.attempt) ? Effect.fail("planned failure") : Effect.void
              }),
          })
        }
        yield* TestClock.adjust(20)
        return order
      }).pipe(Effect.scoped, Effect.provide(TestClock.layer()), Effect.provide(Logger.layer([]))),
    )
    expect(driverOrder).toEqual(["A1@10", "A2@10", "B1@10"])
    expect(runtimeOrder).toEqual(driverOrder)
  })

  it("one worker on a virtual clock gives the driver's run trace", async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (program) => {
        const expected = viaDriver(program)
        const actual = await Effect.runPromise(viaRuntime(program))
        expect(actual).toEqual(expected)
      }),
      { numRuns: Number(process.env.FC_RUNS_RUNTIME ?? 500) },
    )
  }, 120_000)
})
