/**
 * The durable scheduler decides nothing by itself: for random tasks and random stretches of
 * running and of being down, its run trace on SQLite with one worker under TestClock equals the
 * core kernel's, stepped the same way (a restart is the kernel's clock jumping).
 *
 * - The first property: fixed rate, fixed delay, one-shot; every missed-run policy; failures,
 *   retries, pausing; priorities. Runs: `FC_RUNS_DURABLE` (default 25).
 * - The second: circuit breakers (their own and a shared one: failures that open them, the
 *   cool-down, the half-open probe, a probe paused, cancelled or updated and replaced), catch-up
 *   windows (missed slots after a stretch down or a pause; skip, coalesce, catch-up; a one-shot's
 *   deadline), cron schedules in a time zone, and controls — pause, resume, cancel, and `update`
 *   of the schedule, priority, breaker, window and missed-run policy — made between runs (while
 *   scheduled or paused) and by a task's own job (while running). Answers to the controls, every
 *   task's state and counters and every breaker's state are compared too. Runs:
 *   `FC_RUNS_CONTROLLED` (default 20; about 10 s on a busy 2-core machine).
 *
 * The differences the second property found have their minimal cases as tests of their own.
 * PostgreSQL runs the same store operations; this file covers SQLite only.
 */
import { describe, expect, it } from "@effect/vitest"
import { Kernel, type MissedRun, Schedule, Task } from "@tickwork/core"
import { Effect, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { type DurableScheduler, Handler } from "../src/index.ts"
import { advance, settle, sqlite, tempDir, withScheduler } from "./helpers.ts"

const RUNS = Number(process.env.FC_RUNS_DURABLE ?? 25)
/** Runs of the property with breakers, windows, updates and cron: `FC_RUNS_CONTROLLED`. */
const CONTROLLED_RUNS = Number(process.env.FC_RUNS_CONTROLLED ?? 20)

interface Spec {
  readonly kind: "fixed-rate" | "fixed-delay" | "once"
  readonly period: number
  readonly delay: number
  readonly policy: MissedRun.MissedRunPolicy
  readonly priority: Task.Priority
  /** Attempts up to this fail. */
  readonly failUntil: number
  readonly maxRetries: number
  readonly base: number
  readonly pauseAfter: number
}

const spec: fc.Arbitrary<Spec> = fc.record({
  kind: fc.constantFrom("fixed-rate", "fixed-delay", "once"),
  period: fc.integer({ min: 40, max: 400 }),
  delay: fc.integer({ min: 0, max: 500 }),
  policy: fc.constantFrom("catch-up", "coalesce", "skip"),
  priority: fc.constantFrom("high", "normal", "low"),
  failUntil: fc.integer({ min: 0, max: 2 }),
  maxRetries: fc.integer({ min: 0, max: 2 }),
  base: fc.integer({ min: 5, max: 80 }),
  pauseAfter: fc.integer({ min: 0, max: 3 }),
})

const segment = fc.record({
  runFor: fc.integer({ min: 0, max: 1_500 }),
  downFor: fc.integer({ min: 0, max: 2_500 }),
})

const schedule = (s: Spec) =>
  s.kind === "fixed-rate"
    ? Schedule.fixedRate(s.period, { delay: s.delay })
    : s.kind === "fixed-delay"
      ? Schedule.fixedDelay(s.period, { delay: s.delay })
      : Schedule.once(s.delay)

const options = (s: Spec, k: number) => ({
  id: `t${k}`,
  schedule: schedule(s),
  priority: s.priority,
  missedRuns: s.policy,
  retry: { maxRetries: s.maxRetries, base: s.base },
  pauseAfterConsecutiveFailures: s.pauseAfter,
})

/** The kernel stepped like the core's driver: each run at its slot, a stretch down as one jump. */
const kernelTrace = (
  specs: ReadonlyArray<Spec>,
  segments: ReadonlyArray<{ runFor: number; downFor: number }>,
) => {
  const k = new Kernel.Kernel<number>()
  for (const [i, s] of specs.entries()) k.schedule({ ...options(s, i), job: s.failUntil }, 0)
  const trace: Array<string> = []
  let now = 0
  for (const { runFor, downFor } of segments) {
    const end = now + runFor
    for (let run = k.takeDue(now, end); run !== undefined; run = k.takeDue(now, end)) {
      now = run.startedAt
      trace.push(`${run.id}:${run.scheduledFor}#${run.attempt}@${run.startedAt}`)
      k.complete(run, run.attempt <= run.job ? Task.failed("boom") : Task.succeeded, now, false)
    }
    now = end + downFor
  }
  return { trace, states: specs.map((_, i) => k.status(`t${i}`)) }
}

// ------------------------------------------------------------------ breakers, windows, updates, cron

const BREAKERS = { shared: { failures: 2, coolDown: 100, factor: 2, maxCoolDown: 400 } }
/** A task's own breaker: opens on its first failed slot, probes 80 ms later (then 160 ms). */
const OWN = { failures: 1, coolDown: 80, factor: 2, maxCoolDown: 160 }

type Kind = "fixed-rate" | "fixed-delay" | "once" | "cron"

/** A new schedule, as a spec or an `update` gives it. */
interface Timing {
  readonly kind: Kind
  readonly period: number
  readonly delay: number
}

/** A change `update` makes: each field present or not; `null` removes a window or a breaker. */
interface Change {
  readonly priority?: Task.Priority
  readonly schedule?: Timing
  readonly breaker?: "own" | "shared" | null
  readonly window?: number | null
  readonly missedRuns?: MissedRun.MissedRunPolicy
}

/** What a control does to a task: from the test (between runs) or from its own job (running). */
type Act = "pause" | "resume" | "cancel" | { readonly update: Change }

interface Controlled extends Timing {
  readonly policy: MissedRun.MissedRunPolicy
  readonly priority: Task.Priority
  /** The catch-up window, ms: kept only on the kinds that take one (not fixed-delay). */
  readonly window: number | undefined
  readonly breaker: "own" | "shared" | undefined
  /** The k-th run of the task (from 0, whatever its attempt) fails when `fails[k % n]`. */
  readonly fails: ReadonlyArray<boolean>
  readonly maxRetries: number
  readonly pauseAfter: number
  /** Its job does this to its own task on this run number (while the task is running). */
  readonly onRun: { readonly run: number; readonly act: Act } | undefined
}

const timing = fc.record({
  kind: fc.constantFrom<Kind>("fixed-rate", "fixed-delay", "once", "cron"),
  period: fc.integer({ min: 40, max: 400 }),
  delay: fc.integer({ min: 0, max: 500 }),
})

const change: fc.Arbitrary<Change> = fc.record(
  {
    priority: fc.constantFrom<Task.Priority>("high", "normal", "low"),
    schedule: timing,
    breaker: fc.constantFrom("own" as const, "shared" as const, null),
    window: fc.option(fc.integer({ min: 0, max: 300 }), { nil: null }),
    missedRuns: fc.constantFrom<MissedRun.MissedRunPolicy>("catch-up", "coalesce", "skip"),
  },
  { requiredKeys: [] },
)

const act: fc.Arbitrary<Act> = fc.oneof(
  fc.constantFrom<Act>("pause", "resume", "cancel"),
  change.map((update) => ({ update })),
)

const controlled: fc.Arbitrary<Controlled> = fc
  .record({
    timing,
    policy: fc.constantFrom<MissedRun.MissedRunPolicy>("catch-up", "coalesce", "skip"),
    priority: fc.constantFrom<Task.Priority>("high", "normal", "low"),
    window: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }),
    breaker: fc.constantFrom(undefined, "own" as const, "shared" as const),
    fails: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
    maxRetries: fc.integer({ min: 0, max: 1 }),
    pauseAfter: fc.integer({ min: 0, max: 3 }),
    onRun: fc.option(fc.record({ run: fc.integer({ min: 1, max: 3 }), act }), {
      nil: undefined,
      freq: 2,
    }),
  })
  .map(({ timing, window, ...rest }) => ({
    ...timing,
    ...rest,
    window: timing.kind === "fixed-delay" ? undefined : window,
  }))

/** A stretch of running, then a control on one task (by index), then a stretch down. */
const stretch = fc.record({
  runFor: fc.integer({ min: 0, max: 1_500 }),
  control: fc.option(fc.record({ target: fc.nat(9), act }), { nil: undefined }),
  downFor: fc.integer({ min: 0, max: 2_500 }),
})

/**
 * Cron schedules in a time zone where virtual time 0 (1970-01-01T00:00Z) falls in the hour the
 * expression names: 05:30 in Kolkata (hour 5), 19:00 the day before in New York (hour 19). In
 * UTC neither would fire for hours, so a zone the store loses shows as a missing run.
 */
const scheduleOfTiming = (t: Timing): Schedule.Schedule => {
  switch (t.kind) {
    case "fixed-rate":
      return Schedule.fixedRate(t.period, { delay: t.delay })
    case "fixed-delay":
      return Schedule.fixedDelay(t.period, { delay: t.delay })
    case "once":
      return Schedule.once(t.delay)
    case "cron":
      return t.period % 2 === 0
        ? Schedule.cron(`*/${(t.period % 3) + 1} * 5 * * *`, { timeZone: "Asia/Kolkata" })
        : Schedule.cron(`*/${(t.period % 3) + 1} * 19 * * *`, { timeZone: "America/New_York" })
  }
}

const breakerOf = (b: "own" | "shared") => (b === "own" ? OWN : b)

const changesOf = (c: Change) => ({
  ...(c.priority === undefined ? {} : { priority: c.priority }),
  ...(c.schedule === undefined ? {} : { schedule: scheduleOfTiming(c.schedule) }),
  ...(c.breaker === undefined ? {} : { breaker: c.breaker === null ? null : breakerOf(c.breaker) }),
  ...(c.window === undefined ? {} : { window: c.window }),
  ...(c.missedRuns === undefined ? {} : { missedRuns: c.missedRuns }),
})

const controlledOptions = (s: Controlled, k: number) => ({
  id: `t${k}`,
  schedule: scheduleOfTiming(s),
  priority: s.priority,
  missedRuns: s.policy,
  retry: { maxRetries: s.maxRetries, base: 30 },
  pauseAfterConsecutiveFailures: s.pauseAfter,
  ...(s.window === undefined ? {} : { window: s.window }),
  ...(s.breaker === undefined ? {} : { breaker: breakerOf(s.breaker) }),
})

/** An answer as text: `true`/`false`, or the typed error's tag. */
const answerOf = (a: unknown): string =>
  typeof a === "boolean" ? String(a) : ((a as { _tag?: string })._tag ?? String(a))

/** What is compared of a task: its state and the fields the rules decide. */
const taskLine = (
  id: string,
  i:
    | {
        readonly state: string
        readonly priority: string
        readonly scheduledFor: number
        readonly attempt: number
        readonly runNumber: number
        readonly consecutiveFailures: number
        readonly pausedReason?: string | null | undefined
      }
    | undefined,
) =>
  i === undefined
    ? `${id} unknown`
    : `${id} ${i.state}${i.pausedReason ? `(${i.pausedReason})` : ""} ${i.priority} ` +
      `due=${i.state === "scheduled" || i.state === "paused" ? i.scheduledFor : "-"} ` +
      `attempt=${i.attempt} runs=${i.runNumber} failures=${i.consecutiveFailures}`

const breakerLine = (b: Kernel.BreakerInfo) =>
  `${b.name} ${b.state} failures=${b.failures} opens=${b.opens} openedAt=${b.openedAt} ` +
  `halfOpenAt=${b.halfOpenAt} probe=${b.probe} tasks=${[...b.tasks].sort()} held=${[...b.held].sort()}`

interface Observed {
  /** Runs (`id:slot#attempt@start`) and answers to controls, in order. */
  readonly trace: ReadonlyArray<string>
  readonly tasks: ReadonlyArray<string>
  readonly breakers: ReadonlyArray<string>
}

/**
 * Counts a task's runs (from 1, whatever their attempt) the same way in both systems: whether
 * this run fails (`fails[(n - 1) % length]`) and the control its job makes on it, if any.
 */
const outcomes = (specs: ReadonlyArray<Controlled>) => {
  const runs = new Map<string, number>()
  return (id: string): { readonly fail: boolean; readonly act: Act | undefined } => {
    const n = (runs.get(id) ?? 0) + 1
    runs.set(id, n)
    const s = specs[Number(id.slice(1))] as Controlled
    return {
      fail: s.fails[(n - 1) % s.fails.length] === true,
      act: s.onRun?.run === n ? s.onRun.act : undefined,
    }
  }
}

/** The kernel stepped like the core's driver, controls applied at the same instants. */
const controlledKernelTrace = (
  specs: ReadonlyArray<Controlled>,
  stretches: ReadonlyArray<typeof stretch extends fc.Arbitrary<infer S> ? S : never>,
): Observed => {
  const k = new Kernel.Kernel<number>({ breakers: BREAKERS })
  for (const [i, s] of specs.entries()) {
    const r = k.schedule({ ...controlledOptions(s, i), job: i }, 0)
    if (typeof r !== "string") throw r
  }
  const fails = outcomes(specs)
  const trace: Array<string> = []
  const control = (id: string, a: Act, now: number) =>
    a === "pause"
      ? k.pause(id, now)
      : a === "resume"
        ? k.resume(id, now)
        : a === "cancel"
          ? k.cancel(id, now)
          : k.update(id, changesOf(a.update), now)
  let now = 0
  const runUntil = (end: number) => {
    for (let run = k.takeDue(now, end); run !== undefined; run = k.takeDue(now, end)) {
      now = run.startedAt
      const id = `t${run.job}`
      trace.push(`${id}:${run.scheduledFor}#${run.attempt}@${run.startedAt}`)
      const { fail, act } = fails(id)
      if (act !== undefined) {
        trace.push(`${id} running ${JSON.stringify(act)}: ${answerOf(control(id, act, now))}`)
      }
      k.complete(run, fail ? Task.failed("boom") : Task.succeeded, now, false)
    }
  }
  for (const { runFor, control: c, downFor } of stretches) {
    const end = now + runFor
    runUntil(end)
    now = end
    if (c !== undefined) {
      const id = `t${c.target % specs.length}`
      trace.push(`${id} ${JSON.stringify(c.act)}: ${answerOf(control(id, c.act, now))}`)
      // What the control made due now runs now, as the durable dispatcher claims it at once.
      runUntil(now)
    }
    now = end + downFor
  }
  return {
    trace,
    tasks: specs.map((_, i) => taskLine(`t${i}`, k.info(`t${i}`))),
    breakers: k.breakers().map(breakerLine).sort(),
  }
}

/** The same on a durable scheduler on SQLite (one worker, TestClock), restarted between stretches. */
const controlledDurableTrace = (
  specs: ReadonlyArray<Controlled>,
  stretches: ReadonlyArray<typeof stretch extends fc.Arbitrary<infer S> ? S : never>,
) =>
  Effect.gen(function* () {
    const t = tempDir()
    const trace: Array<string> = []
    const fails = outcomes(specs)
    let current: DurableScheduler.DurableSchedulerShape | undefined
    const control = (d: DurableScheduler.DurableSchedulerShape, id: string, a: Act) =>
      Effect.map(
        Effect.result(
          a === "pause"
            ? d.pause(id)
            : a === "resume"
              ? d.resume(id)
              : a === "cancel"
                ? d.cancel(id, { interrupt: false })
                : d.update(id, changesOf(a.update)),
        ),
        (r) => answerOf(r._tag === "Success" ? r.success : r.failure),
      )
    const handler = Handler.make("h", Schema.Struct({}), (_, run) =>
      Effect.gen(function* () {
        trace.push(`${run.id}:${run.scheduledFor}#${run.attempt}@${run.startedAt}`)
        const { fail, act } = fails(run.id)
        if (act !== undefined && current !== undefined) {
          // The line goes where the control was made: runs it lets start come after it.
          const at = trace.push("") - 1
          trace[at] =
            `${run.id} running ${JSON.stringify(act)}: ${yield* control(current, run.id, act)}`
        }
        if (fail) return yield* Effect.fail("boom")
      }),
    )
    const store = sqlite(t.file())
    let observed: Observed = { trace, tasks: [], breakers: [] }
    for (const [n, { runFor, control: c, downFor }] of stretches.entries()) {
      yield* withScheduler(store, { handlers: [handler], workers: 1, breakers: BREAKERS }, (d) =>
        Effect.gen(function* () {
          current = d
          if (n === 0) {
            for (const [i, s] of specs.entries()) {
              yield* d.schedule({ ...controlledOptions(s, i), handler, payload: {} })
            }
          }
          yield* advance(d, runFor)
          if (c !== undefined) {
            const id = `t${c.target % specs.length}`
            // The line goes where the control was made: the dispatcher may start a run it
            // makes due before the control's answer is back.
            const at = trace.push("") - 1
            trace[at] = `${id} ${JSON.stringify(c.act)}: ${yield* control(d, id, c.act)}`
            yield* settle(d)
          }
          if (n === stretches.length - 1) {
            const tasks: Array<string> = []
            for (let i = 0; i < specs.length; i++) {
              tasks.push(taskLine(`t${i}`, Option.getOrUndefined(yield* d.info(`t${i}`))))
            }
            observed = { trace, tasks, breakers: (yield* d.breakers).map(breakerLine).sort() }
          }
          current = undefined
        }),
      )
      yield* TestClock.adjust(downFor)
    }
    t.cleanup()
    return observed
  })

describe("equivalence with the core kernel", () => {
  it.effect(
    "random tasks and restarts: the durable trace is the kernel's",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(spec, { minLength: 1, maxLength: 5 }),
            fc.array(segment, { minLength: 1, maxLength: 3 }),
            (specs, segments) =>
              Effect.runPromise(
                Effect.gen(function* () {
                  const t = tempDir()
                  const trace: Array<string> = []
                  const handler = Handler.make(
                    "h",
                    Schema.Struct({ failUntil: Schema.Number }),
                    (p, run) =>
                      Effect.suspend(() => {
                        trace.push(`${run.id}:${run.scheduledFor}#${run.attempt}@${run.startedAt}`)
                        return run.attempt <= p.failUntil ? Effect.fail("boom") : Effect.void
                      }),
                  )
                  const store = sqlite(t.file())
                  const states: Array<string> = []
                  for (const [n, { runFor, downFor }] of segments.entries()) {
                    yield* withScheduler(store, { handlers: [handler], workers: 1 }, (d) =>
                      Effect.gen(function* () {
                        if (n === 0) {
                          for (const [i, s] of specs.entries()) {
                            yield* d.schedule({
                              ...options(s, i),
                              handler,
                              payload: { failUntil: s.failUntil },
                            })
                          }
                        }
                        yield* advance(d, runFor)
                        if (n === segments.length - 1) {
                          for (let i = 0; i < specs.length; i++)
                            states.push(yield* d.status(`t${i}`))
                        }
                      }),
                    )
                    yield* TestClock.adjust(downFor)
                  }
                  t.cleanup()
                  const expected = kernelTrace(specs, segments)
                  expect(trace).toEqual(expected.trace)
                  expect(states).toEqual(expected.states)
                }).pipe(Effect.provide(TestClock.layer())) as Effect.Effect<void, unknown>,
              ),
          ),
          { numRuns: RUNS },
        ),
      ),
    60_000 + RUNS * 1_000,
  )

  // Found by the property below: the run a job cancels its own task in was counted by the kernel
  // (runs started) but not in the durable row, whose commit skipped the cancelled row.
  it.effect("a task its own running job cancels counts that run, as the kernel does", () =>
    Effect.gen(function* () {
      const specs: ReadonlyArray<Controlled> = [
        {
          kind: "fixed-rate",
          period: 40,
          delay: 0,
          policy: "catch-up",
          priority: "high",
          window: undefined,
          breaker: undefined,
          fails: [false],
          maxRetries: 0,
          pauseAfter: 0,
          onRun: { run: 1, act: "cancel" },
        },
      ]
      const stretches = [{ runFor: 0, control: undefined, downFor: 0 }]
      const actual = yield* controlledDurableTrace(specs, stretches)
      const expected = controlledKernelTrace(specs, stretches)
      expect(actual.tasks).toEqual(["t0 cancelled high due=- attempt=1 runs=1 failures=0"])
      expect(actual).toEqual(expected)
    }).pipe(Effect.provide(TestClock.layer())),
  )

  // Found by the property below: a one-shot's retry due after the one-shot's deadline expires at
  // its due time in the kernel; the durable dispatcher ran it, as it asked `Rules.take` only about
  // rows claimed late.
  it.effect("a one-shot's retry due past its deadline expires, as in the kernel", () =>
    Effect.gen(function* () {
      const specs: ReadonlyArray<Controlled> = [
        {
          kind: "once",
          period: 40,
          delay: 0,
          policy: "catch-up",
          priority: "high",
          window: 0,
          breaker: undefined,
          fails: [true],
          maxRetries: 1,
          pauseAfter: 0,
          onRun: undefined,
        },
      ]
      const stretches = [{ runFor: 30, control: undefined, downFor: 0 }]
      const actual = yield* controlledDurableTrace(specs, stretches)
      const expected = controlledKernelTrace(specs, stretches)
      expect(actual.trace).toEqual(["t0:0#1@0"])
      expect(actual).toEqual(expected)
    }).pipe(Effect.provide(TestClock.layer())),
  )

  // Found by the property below: a schedule change made while a slot ran waits for the slot to
  // end (here after a retry). The durable commit of that retry, a plain one, kept the waiting
  // change: it took effect again when the next slot ended, restarting the grid at 60.
  it.effect("a schedule change that waited for its slot takes effect once, as in the kernel", () =>
    Effect.gen(function* () {
      const specs: ReadonlyArray<Controlled> = [
        {
          kind: "fixed-rate",
          period: 40,
          delay: 0,
          policy: "catch-up",
          priority: "high",
          window: undefined,
          breaker: undefined,
          fails: [true, false],
          maxRetries: 1,
          pauseAfter: 0,
          onRun: {
            run: 1,
            act: { update: { schedule: { kind: "fixed-rate", period: 40, delay: 0 } } },
          },
        },
      ]
      const stretches = [{ runFor: 60, control: undefined, downFor: 0 }]
      const actual = yield* controlledDurableTrace(specs, stretches)
      const expected = controlledKernelTrace(specs, stretches)
      // Slot 0 fails and retries at 30; the new grid starts then (30, 70, …): slot 30 fails too.
      expect(actual.trace.filter((l) => !l.includes("running"))).toEqual([
        "t0:0#1@0",
        "t0:30#2@30",
        "t0:30#1@30",
        "t0:60#2@60",
      ])
      expect(actual).toEqual(expected)
    }).pipe(Effect.provide(TestClock.layer())),
  )

  // The probe of a half-open breaker is its member due first (ties: priority, then id); paused
  // before its slot, it is replaced by the next one, which closes the breaker (SPEC §7).
  it.effect("a paused probe is replaced by the next member, as in the kernel", () =>
    Effect.gen(function* () {
      const member = (priority: Task.Priority): Controlled => ({
        kind: "fixed-rate",
        period: 400,
        delay: 0,
        policy: "skip",
        priority,
        window: undefined,
        breaker: "shared",
        fails: [true, false],
        maxRetries: 0,
        pauseAfter: 0,
        onRun: undefined,
      })
      const specs = [member("normal"), member("high")]
      // Both fail at 0: the breaker opens; at 100 it probes with t1 (high), due at 400; t1 is
      // paused at 200, and t0 probes at 400.
      const stretches = [
        { runFor: 200, control: { target: 1, act: "pause" as const }, downFor: 0 },
        { runFor: 300, control: undefined, downFor: 0 },
      ]
      // At 200, before the pause: half-open, probing with t1 (let go) while t0 is held.
      const before = [{ runFor: 200, control: undefined, downFor: 0 }]
      const halfOpen = yield* controlledDurableTrace(specs, before).pipe(
        Effect.provide(TestClock.layer()),
      )
      expect(halfOpen.breakers[0]).toMatch(/^shared half-open .* probe=t1 tasks=t0,t1 held=t0$/)
      expect(halfOpen).toEqual(controlledKernelTrace(specs, before))
      const actual = yield* controlledDurableTrace(specs, stretches)
      expect(actual.trace).toEqual(["t1:0#1@0", "t0:0#1@0", 't1 "pause": true', "t0:400#1@400"])
      expect(actual.breakers[0]).toMatch(/^shared closed /)
      expect(actual).toEqual(controlledKernelTrace(specs, stretches))
    }).pipe(Effect.provide(TestClock.layer())),
  )

  it.effect(
    "breakers, catch-up windows, updates and cron: the durable trace is the kernel's",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(controlled, { minLength: 1, maxLength: 5 }),
            fc.array(stretch, { minLength: 1, maxLength: 4 }),
            (specs, stretches) =>
              Effect.runPromise(
                Effect.gen(function* () {
                  const actual = yield* controlledDurableTrace(specs, stretches)
                  const expected = controlledKernelTrace(specs, stretches)
                  expect(actual.trace).toEqual(expected.trace)
                  expect(actual.tasks).toEqual(expected.tasks)
                  expect(actual.breakers).toEqual(expected.breakers)
                }).pipe(Effect.provide(TestClock.layer())) as Effect.Effect<void, unknown>,
              ),
          ),
          { numRuns: CONTROLLED_RUNS },
        ),
      ),
    60_000 + CONTROLLED_RUNS * 2_000,
  )
})
