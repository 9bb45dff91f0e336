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

interface Spec {
  readonly kind: "once" | "at" | "fixed-rate" | "fixed-delay" | "cron" | "custom"
  readonly delay: number
  readonly period: number
  readonly priority: Task.Priority
  readonly maxRetries: number
  readonly jitter: "none" | "full" | "equal"
  readonly missedRuns: "catch-up" | "coalesce" | "skip"
  readonly pauseAfter: number
  /** Run k fails when fails[k % fails.length]. */
  readonly fails: ReadonlyArray<boolean>
  /** On its first run, the job schedules a child task due this long after. */
  readonly spawn: number | undefined
  /** The job cancels itself on this run number. */
  readonly cancelSelfOn: number | undefined
}

type Step =
  | { readonly type: "schedule"; readonly spec: Spec }
  | { readonly type: "advance"; readonly ms: number }
  | { readonly type: "cancel"; readonly target: number }

const spec: fc.Arbitrary<Spec> = fc.record({
  kind: fc.constantFrom("once", "at", "fixed-rate", "fixed-delay", "cron", "custom"),
  delay: fc.integer({ min: 0, max: 60 }),
  period: fc.integer({ min: 1, max: 25 }),
  priority: fc.constantFrom("high", "normal", "low"),
  maxRetries: fc.integer({ min: 0, max: 2 }),
  jitter: fc.constantFrom("none", "full", "equal"),
  missedRuns: fc.constantFrom("catch-up", "coalesce", "skip"),
  pauseAfter: fc.integer({ min: 0, max: 3 }),
  fails: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
  spawn: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  cancelSelfOn: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
})

const steps: fc.Arbitrary<ReadonlyArray<Step>> = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: spec.map((s): Step => ({ type: "schedule", spec: s })) },
    {
      weight: 3,
      arbitrary: fc.integer({ min: 0, max: 40 }).map((ms): Step => ({ type: "advance", ms })),
    },
    { weight: 1, arbitrary: fc.nat(20).map((target): Step => ({ type: "cancel", target })) },
  ),
  { maxLength: 25 },
)

const scheduleOf = (s: Spec, now: number): Schedule.Schedule => {
  switch (s.kind) {
    case "once":
      return Schedule.once(s.delay)
    case "at":
      return Schedule.at(now + s.delay - 30) // sometimes in the past
    case "fixed-rate":
      return Schedule.fixedRate(s.period, { delay: s.delay })
    case "fixed-delay":
      return Schedule.fixedDelay(s.period, { delay: s.delay })
    case "cron":
      return Schedule.cron(`*/${(s.period % 5) + 1} * * * * *`) // every 1–5 seconds
    case "custom":
      return Schedule.custom((slot, finishedAt) =>
        slot === undefined
          ? finishedAt + s.delay
          : slot < 200
            ? Math.max(slot, finishedAt) + s.period
            : undefined,
      )
  }
}

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

const taskOptions = (s: Spec, now: number) => ({
  schedule: scheduleOf(s, now),
  priority: s.priority,
  retry: { maxRetries: s.maxRetries, base: 3, factor: 2, jitter: s.jitter },
  missedRuns: s.missedRuns,
  pauseAfterConsecutiveFailures: s.pauseAfter,
})

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
      ...taskOptions(s, clock.now()),
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
    const s = yield* Scheduler.make({ workers: 1, seed: SEED, spans: false })
    const trace: Array<string> = []
    let n = 0
    const add = (spec: Spec): Effect.Effect<void, unknown> =>
      Effect.gen(function* () {
        const id = `t${n++}`
        const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
        yield* s.schedule({
          id,
          ...taskOptions(spec, now),
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
    const settle = Effect.gen(function* () {
      for (;;) {
        yield* Effect.yieldNow
        const stats = yield* s.stats
        const next = yield* s.nextSlot
        const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
        if (stats.inFlight === 0 && (next._tag === "None" || next.value > now)) return
      }
    })
    for (const step of program) {
      if (step.type === "schedule") yield* add(step.spec)
      else if (step.type === "advance") yield* TestClock.adjust(step.ms)
      else yield* s.cancel(`t${step.target}`)
      yield* settle
    }
    for (let k = 0; k < n; k++) trace.push(`t${k}: ${yield* s.status(`t${k}`)}`)
    return trace
  }).pipe(Effect.scoped, Effect.provide(TestClock.layer()), Effect.provide(Logger.layer([])))

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
