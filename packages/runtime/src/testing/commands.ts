/**
 * A fast-check command model of the {@link Scheduler.Scheduler}, with the core's deterministic
 * driver as the reference: random sequences of commands — schedule a task (of every kind of
 * schedule, or of your own task templates; with windows, tags and circuit breakers), advance the
 * clock, jump to the next slot, cancel, pause, resume, update a task, move it into or out of a
 * breaker, pause/resume/cancel by filter, change what a task's runs do — are applied to both,
 * and after every command their answers, their run traces (every occurrence, as `Trace.line`s),
 * every task's state and counters, the per-state counts and the circuit breakers (their state
 * and every transition) must be equal, and the model's {@link invariants} must hold (a paused
 * task starts no run; a held one-shot is never lost). A failure shrinks to a short sequence of
 * commands.
 *
 * This module imports `fast-check` (an optional peer dependency of `@tickwork/runtime`): import
 * it from `@tickwork/runtime/testing/commands`, in tests only.
 *
 * **Example** (Your tasks' options against the reference, with your own invariant)
 *
 * ```ts
 * import { Schedule } from "@tickwork/runtime"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const report = await Commands.check({
 *   numRuns: 200,
 *   templates: {
 *     digest: { schedule: Schedule.cron("0 * * * * *"), retry: { maxRetries: 2, base: "5 seconds" }, missedRuns: "skip" },
 *     payment: { schedule: Schedule.once("30 seconds"), retry: { maxRetries: 3, base: "10 seconds", jitter: "full" } },
 *   },
 *   advance: { max: 90_000 },
 *   invariant: (view) => {
 *     // A payment never runs more than 4 times (1 + 3 retries) for its one slot.
 *     for (const t of view.tasks) if (t.id.startsWith("payment") && t.runNumber > 4) throw new Error(`${t.id} ran ${t.runNumber} times`)
 *   },
 * })
 * report.runs // 200
 * ```
 *
 * @since 0.1.0
 */
import {
  type Breaker,
  Clock as CoreClock,
  Driver,
  type Errors,
  type Kernel,
  type MissedRun,
  Random,
  type Retry,
  Schedule,
  type Task,
  type Time,
} from "@tickwork/core"
import { Effect, Exit, ManagedRuntime, Option, type Result, Scope, Stream } from "effect"
import fc from "fast-check"
import * as Ledger from "../Ledger.ts"
import * as Scheduler from "../Scheduler.ts"
import * as TestScheduler from "./TestScheduler.ts"
import * as Trace from "./Trace.ts"

// ------------------------------------------------------------------ random tasks

/**
 * A random task, as {@link taskSpec} generates it: every kind of schedule, priority, retry
 * policy, missed-run policy and failure policy, what its runs do, and two re-entrant behaviours
 * (a job that schedules a child task, a job that cancels its own task).
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskSpec {
  readonly kind: "once" | "at" | "fixed-rate" | "fixed-delay" | "cron" | "custom"
  /** First-slot delay, ms (for `at`: the instant is `now + delay - 30`, sometimes in the past). */
  readonly delay: number
  /** Period, ms (cron: every `period % 5 + 1` seconds). */
  readonly period: number
  readonly priority: Task.Priority
  readonly maxRetries: number
  readonly jitter: Retry.Jitter
  readonly missedRuns: MissedRun.MissedRunPolicy
  readonly pauseAfter: number
  /** The k-th run (from 0) fails when `fails[k % fails.length]`. */
  readonly fails: ReadonlyArray<boolean>
  /** On its first run, the job schedules a one-off child task due this long after. */
  readonly spawn: number | undefined
  /** The job cancels its own task on this run number. */
  readonly cancelSelfOn: number | undefined
  /**
   * The catch-up window, ms (SPEC §3): on `once`, `at`, `fixed-rate` and `cron` tasks only (the
   * others refuse one). For a one-shot it is a deadline: past it the run expires.
   */
  readonly window?: number | undefined
  /** A tag, for the bulk commands' filters. Default: none. */
  readonly tag?: "a" | "b" | undefined
  /**
   * Its circuit breaker (SPEC §7): `"shared"` joins the model's shared breaker (see
   * {@link breakers}), `"own"` gives it its own ({@link ownBreaker}). Default: none.
   */
  readonly breaker?: "shared" | "own" | undefined
}

/**
 * The circuit breakers the model's schedulers are built with: one shared breaker, `shared`,
 * that opens after 2 failed slots of its tasks and lets a probe through 20 ms later, then 40 ms,
 * up to 80 ms.
 *
 * **Example** (The layer options of a scheduler to compare with the model)
 *
 * ```ts
 * import { TestScheduler } from "@tickwork/runtime/testing"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const layer = TestScheduler.layer({ breakers: Commands.breakers })
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export const breakers: Readonly<Record<string, Breaker.BreakerPolicy>> = {
  shared: { failures: 2, coolDown: 20, factor: 2, maxCoolDown: 80 },
}

/**
 * A task's own circuit breaker in the model (`breaker: "own"`): opens after 1 failed slot,
 * probes 15 ms later (then 30 ms).
 *
 * **Example** (Its policy)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * Commands.ownBreaker.failures // 1
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export const ownBreaker: Breaker.BreakerPolicy = {
  failures: 1,
  coolDown: 15,
  factor: 2,
  maxCoolDown: 30,
}

const windowFits = (kind: TaskSpec["kind"]) => kind !== "fixed-delay" && kind !== "custom"

/**
 * The arbitrary of {@link TaskSpec}: small delays and periods (0–60 ms, 1–25 ms) so that random
 * clock moves of a few tens of ms make slots collide, runs late, retries pile up. No window, tag
 * or breaker: see {@link controlledTaskSpec} for those.
 *
 * **Example** (A sample)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * fc.sample(Commands.taskSpec, 1)[0]?.kind // "fixed-rate", "cron", …
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const taskSpec: fc.Arbitrary<TaskSpec> = fc.record({
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

/**
 * The arbitrary of the command model's random tasks: {@link taskSpec}, sometimes with a catch-up
 * window (0–30 ms, on the kinds that take one), a tag, and a circuit breaker (the shared one of
 * {@link breakers}, or its own): a scheduler they are given to needs {@link breakers}.
 *
 * **Example** (A sample)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * fc.sample(Commands.controlledTaskSpec, 1)[0]?.breaker // "shared", "own" or undefined
 * ```
 *
 * @category arbitraries
 * @since 0.2.0
 */
export const controlledTaskSpec: fc.Arbitrary<TaskSpec> = fc
  .tuple(
    taskSpec,
    fc.record({
      window: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined, freq: 3 }),
      tag: fc.constantFrom(undefined, "a", "b"),
      breaker: fc.option(fc.constantFrom("shared", "own"), { nil: undefined, freq: 2 }),
    }),
  )
  .map(([spec, { window, tag, breaker }]) => ({
    ...spec,
    // A window only where the kernel takes one: the model schedules accepted tasks.
    window: window !== undefined && windowFits(spec.kind) ? window : undefined,
    tag,
    breaker,
  }))

/**
 * The schedule of a {@link TaskSpec} scheduled at `now`.
 *
 * **Example** (A fixed-rate spec)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const spec: Commands.TaskSpec = { kind: "fixed-rate", delay: 5, period: 10, priority: "normal", maxRetries: 0,
 *   jitter: "none", missedRuns: "skip", pauseAfter: 0, fails: [false], spawn: undefined, cancelSelfOn: undefined }
 * Commands.scheduleOf(spec, 0) // Schedule.fixedRate(10, { delay: 5 })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const scheduleOf = (
  spec: Pick<TaskSpec, "kind" | "delay" | "period">,
  now: number,
): Schedule.Schedule => {
  switch (spec.kind) {
    case "once":
      return Schedule.once(spec.delay)
    case "at":
      return Schedule.at(now + spec.delay - 30)
    case "fixed-rate":
      return Schedule.fixedRate(spec.period, { delay: spec.delay })
    case "fixed-delay":
      return Schedule.fixedDelay(spec.period, { delay: spec.delay })
    case "cron":
      return Schedule.cron(`*/${(spec.period % 5) + 1} * * * * *`)
    case "custom":
      return Schedule.custom((slot, finishedAt) =>
        slot === undefined
          ? finishedAt + spec.delay
          : slot < 200
            ? Math.max(slot, finishedAt) + spec.period
            : undefined,
      )
  }
}

/**
 * The options of a task (all but its id and job), as {@link Template} gives them.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskOptions {
  readonly schedule: Schedule.Schedule
  readonly priority?: Task.Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  readonly missedRuns?: MissedRun.MissedRunPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly timeout?: Time.DurationInput | undefined
  readonly window?: Time.DurationInput | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly breaker?: Breaker.BreakerPolicy | string | undefined
}

const breakerOf = (choice: string | undefined): Breaker.BreakerPolicy | string | undefined =>
  choice === "own" ? ownBreaker : choice

/**
 * The options of a {@link TaskSpec} scheduled at `now` (retry backoff: 3 ms, doubling, with the
 * spec's jitter; its window, tag and breaker when it has them).
 *
 * **Example** (Scheduling a spec by hand)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Scheduler } from "@tickwork/runtime"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const add = (spec: Commands.TaskSpec) =>
 *   Effect.gen(function* () {
 *     const scheduler = yield* Scheduler.Scheduler
 *     return yield* scheduler.schedule({ ...Commands.taskOptions(spec, 0), job: Effect.void })
 *   })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const taskOptions = (spec: TaskSpec, now: number): TaskOptions => ({
  schedule: scheduleOf(spec, now),
  priority: spec.priority,
  retry: { maxRetries: spec.maxRetries, base: 3, factor: 2, jitter: spec.jitter },
  missedRuns: spec.missedRuns,
  pauseAfterConsecutiveFailures: spec.pauseAfter,
  ...(spec.window === undefined ? {} : { window: spec.window }),
  ...(spec.tag === undefined ? {} : { tags: [spec.tag] }),
  ...(spec.breaker === undefined ? {} : { breaker: breakerOf(spec.breaker) }),
})

// ------------------------------------------------------------------ templates

/**
 * What a run of a template task should do, as the command sequence planned it.
 *
 * @category models
 * @since 0.1.0
 */
export type PlannedOutcome = "succeed" | "fail"

/**
 * One of your tasks, for the command model to schedule any number of times: its options (the
 * schedule may depend on the time it is scheduled at) and, optionally, its real job, told
 * whether the run should succeed or fail (set up your fakes, then run it). The job runs on the
 * scheduler under test only (the reference runs the plan directly) and must finish without
 * virtual time passing.
 *
 * @category models
 * @since 0.1.0
 */
export interface Template {
  readonly schedule: Schedule.Schedule | ((now: number) => Schedule.Schedule)
  readonly priority?: Task.Priority
  readonly retry?: Retry.RetryPolicy
  readonly missedRuns?: MissedRun.MissedRunPolicy
  readonly pauseAfterConsecutiveFailures?: number
  readonly window?: Time.DurationInput
  readonly tags?: ReadonlyArray<string>
  /** Its own breaker policy, or the name of a breaker in {@link Options.breakers}. */
  readonly breaker?: Breaker.BreakerPolicy | string
  readonly job?: (outcome: PlannedOutcome, run: Task.RunInfo) => Effect.Effect<unknown, unknown>
}

/**
 * A task to schedule: made from a {@link TaskSpec} or a {@link Template}, with the outcome
 * pattern of its runs. @internal
 */
interface Blueprint {
  /** The id prefix: the template's name, or `t` for random specs. */
  readonly name: string
  readonly describe: string
  readonly options: (now: number) => TaskOptions
  readonly fails: ReadonlyArray<boolean>
  readonly spawn: Blueprint | undefined
  readonly cancelSelfOn: number | undefined
  readonly job: Template["job"]
}

const fromSpec = (spec: TaskSpec): Blueprint => ({
  name: "t",
  describe: JSON.stringify(spec),
  options: (now) => taskOptions(spec, now),
  fails: spec.fails,
  spawn:
    spec.spawn === undefined
      ? undefined
      : fromSpec({ ...spec, kind: "once", delay: spec.spawn, spawn: undefined }),
  cancelSelfOn: spec.cancelSelfOn,
  job: undefined,
})

const fromTemplate = (name: string, t: Template, fails: ReadonlyArray<boolean>): Blueprint => ({
  name,
  describe: `${name} ${fails.map((f) => (f ? "F" : "S")).join("")}`,
  options: (now) => ({
    schedule: typeof t.schedule === "function" ? t.schedule(now) : t.schedule,
    priority: t.priority,
    retry: t.retry,
    missedRuns: t.missedRuns,
    pauseAfterConsecutiveFailures: t.pauseAfterConsecutiveFailures,
    window: t.window,
    tags: t.tags,
    breaker: t.breaker,
  }),
  fails,
  spawn: undefined,
  cancelSelfOn: undefined,
  job: t.job,
})

/** The outcome pattern of a task's runs from now on: run k (from the change) fails when `fails[k % n]`. */
interface Plan {
  fails: ReadonlyArray<boolean>
  runs: number
}

const nextFails = (plan: Plan): boolean => {
  const fail = plan.fails[plan.runs % plan.fails.length] === true
  plan.runs++
  return fail
}

// ------------------------------------------------------------------ the two systems

/**
 * What both systems are compared on after each command, and what an
 * {@link Options.invariant} sees (from the scheduler under test).
 *
 * @category models
 * @since 0.1.0
 */
export interface View {
  /** Virtual time, epoch ms. */
  readonly now: number
  /** Every occurrence so far, oldest first. */
  readonly occurrences: ReadonlyArray<Ledger.Occurrence>
  /** The same, as `Trace.line`s. */
  readonly lines: ReadonlyArray<string>
  /** Every task scheduled so far (by a command or by a job), in the order they were. */
  readonly tasks: ReadonlyArray<Task.TaskInfo>
  /** What `explain` says of every task that is `paused` now: where it would go on. */
  readonly paused: ReadonlyArray<Kernel.Explanation>
}

/** A task's info without its error values: what both systems must agree on. */
const project = (info: Task.TaskInfo | undefined, id: string): string =>
  info === undefined
    ? `${id} unknown`
    : `${info.id} ${info.state} kind=${info.kind} priority=${info.priority} slot=${info.scheduledFor} ` +
      `attempt=${info.attempt} run=${info.runNumber} failures=${info.consecutiveFailures} ` +
      `lastFailure=${info.lastFailure?.kind ?? "-"} finished=${info.finishedAt ?? "-"} ` +
      `paused=${info.pausedReason ?? "-"} window=${info.window ?? "-"} ` +
      `breaker=${info.breaker ?? "-"} tags=${(info.tags ?? []).join(",")}`

const counts = (s: Kernel.Stats) =>
  `scheduled=${s.scheduled} running=${s.running} paused=${s.paused} done=${s.done} ` +
  `failed=${s.failed} cancelled=${s.cancelled} accepted=${s.accepted} removed=${s.removed}`

/** A circuit breaker as both systems must agree on it. */
const breakerState = (b: Kernel.BreakerInfo): string =>
  `${b.name}${b.shared ? " (shared)" : ""} ${b.state} failures=${b.failures} opens=${b.opens} ` +
  `openedAt=${b.openedAt ?? "-"} halfOpenAt=${b.halfOpenAt ?? "-"} probe=${b.probe ?? "-"} ` +
  `tasks=${b.tasks.join(",")} held=${b.held.join(",")}`

/** A breaker transition from the occurrence stream, as a line. */
const breakerLine = (o: Task.BreakerChanged): string =>
  `${o.at} breaker ${o.breaker} ${o.from} -> ${o.to} cause=${o.cause ?? "-"} ` +
  `probe=${o.probe ?? "-"} coolDown=${o.coolDown ?? "-"} halfOpenAt=${o.halfOpenAt ?? "-"}`

/** An answer of either system as text: a value, or the typed error's tag and message. */
const answer = <A>(r: Result.Result<A, Errors.ScheduleError>): string =>
  r._tag === "Success" ? JSON.stringify(r.success) : `${r.failure._tag}: ${r.failure.message}`

/**
 * The reference: the core's deterministic {@link Driver} on a manual clock, with inline jobs
 * that do what the plan says. It records the occurrences the runtime would publish (its runs'
 * records, the slots they merged or dropped, cancellations, and the kernel's control
 * occurrences: skipped slots, expiries, pauses, resumes) and the circuit breakers' transitions.
 *
 * @category models
 * @since 0.1.0
 */
export class Model {
  readonly clock: CoreClock.ManualClock
  readonly driver: Driver.Driver
  readonly occurrences: Array<Ledger.Occurrence> = []
  /** Circuit-breaker transitions, in order. */
  readonly breakerEvents: Array<Task.BreakerChanged> = []
  readonly ids: Array<string> = []
  private readonly plans = new Map<string, Plan>()

  constructor(options: {
    readonly seed: number
    readonly startAt: number
    readonly breakers?: Readonly<Record<string, Breaker.BreakerPolicy>> | undefined
  }) {
    this.clock = new CoreClock.ManualClock(options.startAt)
    this.driver = Driver.make({
      clock: this.clock,
      random: Random.seeded(options.seed),
      ...(options.breakers === undefined ? {} : { breakers: options.breakers }),
      onRun: (record) => {
        this.occurrences.push(...fromRun(record))
      },
      // Skipped slots, expiries, pauses, resumes: into the trace, as the runtime's ledger has them.
      onOccurrence: (o) => {
        if (o.kind === "breaker") this.breakerEvents.push(o)
        else this.occurrences.push(o)
      },
    })
  }

  /** Schedules a task (then runs whatever is due now). */
  add(blueprint: Blueprint): void {
    const id = `${blueprint.name}${this.ids.length}`
    this.ids.push(id)
    const plan: Plan = { fails: blueprint.fails, runs: 0 }
    this.plans.set(id, plan)
    const accepted = this.driver.schedule({
      id,
      ...blueprint.options(this.clock.now()),
      job: (run) => {
        const p = this.plans.get(id) as Plan
        const fail = nextFails(p)
        if (run.runNumber === 1 && blueprint.spawn !== undefined) this.add(blueprint.spawn)
        if (blueprint.cancelSelfOn === run.runNumber) this.cancel(id)
        if (fail) throw new Error("planned failure")
      },
    })
    if (accepted._tag === "Failure") throw accepted.failure
  }

  /** Cancels a task, recording the occurrence as the runtime does. */
  cancel(id: string): boolean {
    const info = this.driver.info(id)
    const cancelled = this.driver.cancel(id)
    if (cancelled && info !== undefined) {
      this.occurrences.push({
        kind: "cancelled",
        id: info.id,
        generation: info.generation,
        from: info.state as "scheduled" | "running" | "paused",
        scheduledFor: info.scheduledFor,
        interrupted: false,
        at: this.clock.now(),
      })
    }
    return cancelled
  }

  /** Sets the outcome pattern of a task's next runs. */
  setOutcomes(id: string, fails: ReadonlyArray<boolean>): void {
    if (this.plans.has(id)) this.plans.set(id, { fails, runs: 0 })
  }

  /**
   * Pauses, resumes or cancels the tasks matching `filter`; returns the ids changed. Cancels go
   * one by one, each recorded as a single cancel is (as the runtime's `cancelAll` records them).
   */
  bulk(action: BulkAction, filter: Kernel.TaskFilter): ReadonlyArray<string> {
    if (action === "pause") return this.driver.pauseAll(filter)
    if (action === "resume") return this.driver.resumeAll(filter)
    const ids: Array<string> = []
    for (const info of this.driver.tasks(filter)) if (this.cancel(info.id)) ids.push(info.id)
    return ids
  }

  /**
   * Moves the clock `ms` forward, running every slot at its time: stepping the clock to each
   * pending slot and running what is due there (`runDue`), or with `Driver.runUntil`.
   */
  advance(ms: number, how: "step" | "runUntil" = "step"): void {
    const end = this.clock.now() + ms
    if (how === "runUntil") {
      this.driver.runUntil(end)
      return
    }
    for (;;) {
      const next = this.driver.nextSlot()
      if (next === undefined || next > end) break
      if (next > this.clock.now()) this.clock.set(next)
      this.driver.runDue()
    }
    this.clock.set(end)
  }

  /** Runs what is due now; the runtime starts due work without waiting for the clock to move. */
  settle(): void {
    this.driver.runDue()
  }

  /** What is compared after each command. */
  snapshot(): Snapshot {
    return {
      now: this.clock.now(),
      lines: this.occurrences.map((o) => Trace.line(o)),
      tasks: this.ids.map((id) => project(this.driver.info(id), id)),
      counts: counts(this.driver.stats()),
      breakers: this.driver.breakers().map(breakerState),
      breakerEvents: this.breakerEvents.map(breakerLine),
    }
  }
}

/**
 * The records the runtime publishes for one run: `Ledger.fromRun` (on a copy, as it takes over
 * the record it is given).
 */
const fromRun = (record: Task.RunRecord): ReadonlyArray<Ledger.Occurrence> =>
  Ledger.fromRun({ ...record })

/** @internal */
interface Snapshot {
  readonly now: number
  readonly lines: ReadonlyArray<string>
  readonly tasks: ReadonlyArray<string>
  readonly counts: string
  readonly breakers: ReadonlyArray<string>
  readonly breakerEvents: ReadonlyArray<string>
}

/**
 * The system under test: a real {@link Scheduler.Scheduler} on the `TestScheduler` layer (one
 * worker, TestClock), with a `Trace` recorder subscribed before anything is scheduled.
 *
 * @category models
 * @since 0.1.0
 */
export class System {
  readonly ids: Array<string> = []
  /** Runs whose job did something else than planned (a template job that did not fail, …). */
  readonly violations: Array<string> = []
  private readonly plans = new Map<string, Plan>()

  private readonly runtime: ManagedRuntime.ManagedRuntime<Scheduler.Scheduler, unknown>
  private readonly scope: Scope.Closeable
  readonly scheduler: Scheduler.SchedulerShape
  readonly recorder: Trace.Recorder
  /** Circuit-breaker transitions from the occurrence stream, in order. */
  readonly breakerEvents: ReadonlyArray<Task.BreakerChanged>

  private constructor(
    runtime: ManagedRuntime.ManagedRuntime<Scheduler.Scheduler, unknown>,
    scope: Scope.Closeable,
    scheduler: Scheduler.SchedulerShape,
    recorder: Trace.Recorder,
    breakerEvents: ReadonlyArray<Task.BreakerChanged>,
  ) {
    this.runtime = runtime
    this.scope = scope
    this.scheduler = scheduler
    this.recorder = recorder
    this.breakerEvents = breakerEvents
  }

  /** Builds the scheduler and subscribes the recorder (and a listener of breaker transitions). */
  static async make(options: TestScheduler.Options): Promise<System> {
    const runtime = ManagedRuntime.make(TestScheduler.layer(options))
    const scope = Scope.makeUnsafe()
    const events: Array<Task.BreakerChanged> = []
    const [scheduler, recorder] = await runtime.runPromise(
      Effect.gen(function* () {
        const scheduler = yield* Scheduler.Scheduler
        yield* scheduler.occurrences.pipe(
          Stream.runForEach((o) =>
            Effect.sync(() => {
              if (o.kind === "breaker") events.push(o)
            }),
          ),
          Effect.forkScoped({ startImmediately: true }),
        )
        return [scheduler, yield* Trace.record()] as const
      }).pipe(Effect.provideService(Scope.Scope, scope)),
    )
    return new System(runtime, scope, scheduler, recorder, events)
  }

  /** Runs an effect against the scheduler's layer (its TestClock included). */
  run<A, E>(effect: Effect.Effect<A, E, Scheduler.Scheduler>): Promise<A> {
    return this.runtime.runPromise(effect)
  }

  /** Stops the recorder and shuts the scheduler down. */
  async close(): Promise<void> {
    await Effect.runPromise(Scope.close(this.scope, Exit.void))
    await this.runtime.dispose()
  }

  /** Schedules a task (the caller settles). */
  add(blueprint: Blueprint): Effect.Effect<void, unknown> {
    const self = this
    return Effect.gen(function* () {
      const id = `${blueprint.name}${self.ids.length}`
      self.ids.push(id)
      self.plans.set(id, { fails: blueprint.fails, runs: 0 })
      const now = yield* TestScheduler.now
      yield* self.scheduler.schedule({
        id,
        ...blueprint.options(now),
        job: (run: Task.RunInfo) =>
          Effect.gen(function* () {
            const fail = nextFails(self.plans.get(id) as Plan)
            if (run.runNumber === 1 && blueprint.spawn !== undefined)
              yield* self.add(blueprint.spawn)
            if (blueprint.cancelSelfOn === run.runNumber) yield* self.scheduler.cancel(id)
            if (blueprint.job === undefined) {
              if (fail) return yield* Effect.fail("planned failure")
              return
            }
            const exit = yield* Effect.exit(blueprint.job(fail ? "fail" : "succeed", run))
            if (Exit.isSuccess(exit) === fail) {
              self.violations.push(
                `${id} run ${run.runNumber} was planned to ${fail ? "fail" : "succeed"}, but its job ${
                  fail ? "succeeded" : "failed"
                }`,
              )
            }
            if (fail) return yield* Effect.fail("planned failure")
          }),
      })
    })
  }

  /** Sets the outcome pattern of a task's next runs. */
  setOutcomes(id: string, fails: ReadonlyArray<boolean>): void {
    if (this.plans.has(id)) this.plans.set(id, { fails, runs: 0 })
  }

  /** What the invariant sees. */
  view(): Promise<View> {
    const self = this
    return this.run(
      Effect.gen(function* () {
        const tasks: Array<Task.TaskInfo> = []
        const paused: Array<Kernel.Explanation> = []
        for (const id of self.ids) {
          const info = yield* self.scheduler.info(id)
          if (info._tag === "Some") tasks.push(info.value)
          if (info._tag === "Some" && info.value.state === "paused") {
            const explained = yield* self.scheduler.explain(id)
            if (explained._tag === "Some") paused.push(explained.value)
          }
        }
        return {
          now: yield* TestScheduler.now,
          occurrences: self.recorder.occurrences(),
          lines: self.recorder.lines(),
          tasks,
          paused,
        }
      }),
    )
  }

  /** What is compared after each command. */
  snapshot(): Promise<Snapshot> {
    const self = this
    return this.run(
      Effect.gen(function* () {
        const tasks: Array<string> = []
        for (const id of self.ids) {
          tasks.push(project(Option.getOrUndefined(yield* self.scheduler.info(id)), id))
        }
        return {
          now: yield* TestScheduler.now,
          lines: self.recorder.lines(),
          tasks,
          counts: counts(yield* self.scheduler.stats),
          breakers: (yield* self.scheduler.breakers).map(breakerState),
          breakerEvents: self.breakerEvents.map(breakerLine),
        }
      }),
    )
  }
}

// ------------------------------------------------------------------ commands

/**
 * A command of the model: applied to the reference and to the system under test, then both are
 * compared.
 *
 * @category models
 * @since 0.1.0
 */
export type SchedulerCommand = fc.AsyncCommand<Model, System, false>

/**
 * Options of the command model.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /**
   * Your tasks, by name: the model schedules them (ids `<name><n>`) with random outcome
   * patterns. Default: random tasks of every kind ({@link taskSpec}, ids `t<n>`).
   */
  readonly templates?: Readonly<Record<string, Template>>
  /** Largest clock move of an `advance` command, ms. Default 40. */
  readonly advance?: { readonly max: number }
  /** Commands per run at most. Default 25. */
  readonly maxCommands?: number
  /**
   * How the reference moves its clock: `"step"` (default) sets it to each pending slot in turn
   * and runs what is due there (`Driver.runDue`), as the runtime's actor wakes at each slot;
   * `"runUntil"` uses `Driver.runUntil`. They differ in one known case: `runUntil` records a
   * one-shot found past its deadline (a retry due after it) at the clock's time before the step,
   * not at the retry's due time where the runtime records it.
   */
  readonly reference?: "step" | "runUntil"
  /** Seed of the schedulers' retry jitter. Default 1234. */
  readonly seed?: number
  /** Where virtual time starts (both clocks). Default 0. */
  readonly startAt?: number | Date
  /**
   * The circuit breakers shared by name, on both schedulers: random tasks join `shared`, your
   * templates name theirs. Default {@link breakers}.
   */
  readonly breakers?: Readonly<Record<string, Breaker.BreakerPolicy>>
  /**
   * Your own check, run on the system under test after every command (once it has been found
   * equal to the reference): throw to fail the run.
   */
  readonly invariant?: (view: View) => void
}

const startOf = (options: Options) =>
  options.startAt === undefined
    ? 0
    : typeof options.startAt === "number"
      ? options.startAt
      : options.startAt.getTime()

/** Compares both systems, then the violations and the user's invariant. */
const compare = async (
  model: Model,
  system: System,
  command: string,
  invariant: Options["invariant"],
): Promise<void> => {
  model.settle()
  await system.run(TestScheduler.settle())
  const violation = system.violations[0]
  if (violation !== undefined) throw new Error(`after ${command}: ${violation}`)
  const expected = model.snapshot()
  const actual = await system.snapshot()
  if (expected.now !== actual.now) {
    throw new Error(
      `after ${command}: the reference is at t=${expected.now}, the scheduler at t=${actual.now}`,
    )
  }
  const traceDiff = Trace.diff(expected.lines, actual.lines)
  if (traceDiff !== undefined) {
    throw new Error(
      `after ${command}, the run traces differ (expected = the reference):\n${traceDiff}`,
    )
  }
  const taskDiff = Trace.diff(expected.tasks, actual.tasks)
  if (taskDiff !== undefined) throw new Error(`after ${command}, the tasks differ:\n${taskDiff}`)
  if (expected.counts !== actual.counts) {
    throw new Error(
      `after ${command}, the counts differ:\n  expected ${expected.counts}\n  actual   ${actual.counts}`,
    )
  }
  const breakerDiff =
    Trace.diff(expected.breakerEvents, actual.breakerEvents) ??
    Trace.diff(expected.breakers, actual.breakers)
  if (breakerDiff !== undefined) {
    throw new Error(`after ${command}, the circuit breakers differ:\n${breakerDiff}`)
  }
  const view = await system.view()
  try {
    invariants(view)
  } catch (error) {
    throw new Error(`after ${command}: ${(error as Error).message}`)
  }
  if (invariant !== undefined) invariant(view)
}

/**
 * The model's own invariants, checked on the scheduler under test after every command (once it
 * has been found equal to the reference):
 *
 * - a paused task starts no run: no run (nor an expiry) of a task is recorded between its
 *   `paused` record and the `resumed` (or `cancelled`) one after it, and every run a task started
 *   is recorded;
 * - a held one-shot is never lost: a paused one-shot still has its run (a held retry, or the
 *   slot `explain` shows it would take), and a one-shot that is final got there through a
 *   record — its run, its expiry or its cancel.
 *
 * Throws an `Error` naming the task and what broke.
 *
 * **Example** (On a view of your own)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * Commands.invariants({ now: 0, occurrences: [], lines: [], tasks: [], paused: [] }) // holds
 * ```
 *
 * @category assertions
 * @since 0.2.0
 */
export const invariants = (view: View): void => {
  const paused = new Set<string>()
  const runs = new Map<string, number>()
  const last = new Map<string, Ledger.Occurrence>()
  for (const o of view.occurrences) {
    switch (o.kind) {
      case "paused":
        paused.add(o.id)
        break
      case "resumed":
      case "cancelled":
        paused.delete(o.id)
        break
      case "ran":
      case "retried":
      case "expired":
        if (paused.has(o.id)) {
          throw new Error(`${o.id} is paused, yet it has this record: ${Trace.line(o)}`)
        }
        if (o.kind !== "expired") runs.set(o.id, (runs.get(o.id) ?? 0) + 1)
        break
    }
    if (o.kind !== "skipped" && o.kind !== "coalesced") last.set(`${o.id} ${o.kind}`, o)
  }
  const held = new Map(view.paused.map((e) => [e.id as string, e]))
  for (const t of view.tasks) {
    const recorded = runs.get(t.id) ?? 0
    if (t.state !== "running" && recorded !== t.runNumber) {
      throw new Error(`${t.id} started ${t.runNumber} run(s), ${recorded} recorded`)
    }
    if (t.kind !== "once") continue
    if (t.state === "paused") {
      // It holds its run: a retry (attempt > 1, due at its own time), or its slot, which
      // `explain` lists as the slot it would take if resumed now.
      const e = held.get(t.id)
      if (t.attempt === 1 && (e === undefined || e.slots.length === 0)) {
        throw new Error(`${t.id} is a paused one-shot with no run left: its run was lost`)
      }
    } else if (t.state === "done" || t.state === "failed") {
      const ran = last.get(`${t.id} ran`)
      const ended =
        (ran?.kind === "ran" && ran.state === t.state && ran.continuation === "final") ||
        (t.state === "failed" && last.has(`${t.id} expired`))
      if (!ended) throw new Error(`${t.id} is ${t.state} without a final run or an expiry`)
    } else if (t.state === "cancelled" && !last.has(`${t.id} cancelled`)) {
      throw new Error(`${t.id} is cancelled without a cancel record`)
    }
  }
}

/** A command: `act` on both systems, then compare them. */
const command = (
  describe: () => string,
  act: (model: Model, system: System) => Promise<void>,
  invariant: Options["invariant"],
): SchedulerCommand => ({
  check: () => true,
  run: async (model, system) => {
    await act(model, system)
    await compare(model, system, describe(), invariant)
  },
  toString: describe,
})

const scheduleCommand = (blueprint: Blueprint, invariant: Options["invariant"]) =>
  command(
    () => `schedule ${blueprint.describe}`,
    async (model, system) => {
      model.add(blueprint)
      await system.run(system.add(blueprint))
    },
    invariant,
  )

const advanceCommand = (ms: number, options: Options) =>
  command(
    () => `advance ${ms}`,
    async (model, system) => {
      model.advance(ms, options.reference)
      await system.run(TestScheduler.advance(ms))
    },
    options.invariant,
  )

/** Moves the clock to the earliest pending slot (as the reference knows it), plus `extra` ms. */
const nextSlotCommand = (extra: number, options: Options) => {
  let ms: number | undefined
  return command(
    () => `to next slot +${extra}${ms === undefined ? "" : ` (advance ${ms})`}`,
    async (model, system) => {
      const next = model.driver.nextSlot()
      const by = next === undefined ? extra : Math.max(0, next - model.clock.now()) + extra
      ms = by
      model.advance(by, options.reference)
      await system.run(TestScheduler.advance(by))
    },
    options.invariant,
  )
}

/** The id a target index picks among the tasks scheduled so far. */
const pick = (model: Model, target: number): string | undefined =>
  model.ids.length === 0 ? undefined : model.ids[target % model.ids.length]

const cancelCommand = (target: number, invariant: Options["invariant"]) => {
  let id: string | undefined
  return command(
    () => `cancel ${id ?? `#${target}`}`,
    async (model, system) => {
      id = pick(model, target) ?? "none"
      const expected = model.cancel(id)
      const actual = await system.run(system.scheduler.cancel(id))
      if (expected !== actual) {
        throw new Error(`cancel ${id}: the reference answered ${expected}, the scheduler ${actual}`)
      }
    },
    invariant,
  )
}

const outcomesCommand = (
  target: number,
  fails: ReadonlyArray<boolean>,
  invariant: Options["invariant"],
) => {
  let id: string | undefined
  return command(
    () => `outcomes ${id ?? `#${target}`} ${fails.map((f) => (f ? "F" : "S")).join("")}`,
    async (model, system) => {
      id = pick(model, target)
      if (id === undefined) return
      model.setOutcomes(id, fails)
      system.setOutcomes(id, fails)
    },
    invariant,
  )
}

/** Compares the answers of the reference and of the scheduler to the same call. */
const same = (call: string, expected: unknown, actual: unknown): void => {
  const e = JSON.stringify(expected)
  const a = JSON.stringify(actual)
  if (e !== a) throw new Error(`${call}: the reference answered ${e}, the scheduler ${a}`)
}

const pauseCommand = (
  target: number,
  action: "pause" | "resume",
  invariant: Options["invariant"],
) => {
  let id: string | undefined
  return command(
    () => `${action} ${id ?? `#${target}`}`,
    async (model, system) => {
      id = pick(model, target) ?? "none"
      const target_ = id
      const expected =
        action === "pause" ? model.driver.pause(target_) : model.driver.resume(target_)
      const actual = await system.run(
        action === "pause" ? system.scheduler.pause(target_) : system.scheduler.resume(target_),
      )
      same(`${action} ${id}`, expected, actual)
    },
    invariant,
  )
}

/**
 * A change of a task's options, as the `update` command makes it (each field present or not):
 * its priority, retries, failure policy, missed-run policy, window (`null` removes it), a new
 * schedule (of a kind, from now), its breaker (`null` leaves it).
 *
 * @category models
 * @since 0.2.0
 */
export interface UpdateSpec {
  readonly priority?: Task.Priority
  readonly maxRetries?: number
  readonly pauseAfter?: number
  readonly missedRuns?: MissedRun.MissedRunPolicy
  readonly window?: number | null
  readonly schedule?: Pick<TaskSpec, "kind" | "delay" | "period">
  /** `"own"`: the task's own breaker ({@link ownBreaker}); another name: a shared breaker. */
  readonly breaker?: string | null
}

/**
 * The arbitrary of {@link UpdateSpec}: any subset of the changes, with the values
 * {@link taskSpec} draws from. Some are refused (a window on a fixed-delay schedule): both
 * systems must refuse them alike.
 *
 * **Example** (A sample)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * fc.sample(Commands.updateSpec, 1)[0] // e.g. { priority: "low", window: null }
 * ```
 *
 * @category arbitraries
 * @since 0.2.0
 */
export const updateSpec: fc.Arbitrary<UpdateSpec> = fc.record(
  {
    priority: fc.constantFrom("high", "normal", "low"),
    maxRetries: fc.integer({ min: 0, max: 2 }),
    pauseAfter: fc.integer({ min: 0, max: 3 }),
    missedRuns: fc.constantFrom("catch-up", "coalesce", "skip"),
    window: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
    schedule: fc.record({
      kind: fc.constantFrom("once", "at", "fixed-rate", "fixed-delay", "cron", "custom"),
      delay: fc.integer({ min: 0, max: 60 }),
      period: fc.integer({ min: 1, max: 25 }),
    }),
    breaker: fc.constantFrom("shared", "own", null),
  },
  { requiredKeys: [] },
)

/**
 * The changes of an {@link UpdateSpec} made at `now`, as `update(id, changes)` takes them.
 *
 * **Example** (A new schedule and no window)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * Commands.changesOf({ schedule: { kind: "fixed-rate", delay: 0, period: 10 }, window: null }, 0)
 * // { schedule: Schedule.fixedRate(10, { delay: 0 }), window: null }
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const changesOf = (u: UpdateSpec, now: number): Kernel.UpdateOptions<never> => ({
  ...(u.priority === undefined ? {} : { priority: u.priority }),
  ...(u.maxRetries === undefined
    ? {}
    : { retry: { maxRetries: u.maxRetries, base: 3, factor: 2 } }),
  ...(u.pauseAfter === undefined ? {} : { pauseAfterConsecutiveFailures: u.pauseAfter }),
  ...(u.missedRuns === undefined ? {} : { missedRuns: u.missedRuns }),
  ...(u.window === undefined ? {} : { window: u.window }),
  ...(u.schedule === undefined ? {} : { schedule: scheduleOf(u.schedule, now) }),
  ...(u.breaker === undefined ? {} : { breaker: u.breaker === null ? null : breakerOf(u.breaker) }),
})

const updateCommand = (
  target: number,
  changes: UpdateSpec,
  invariant: Options["invariant"],
  label = "update",
) => {
  let id: string | undefined
  return command(
    () => `${label} ${id ?? `#${target}`} ${JSON.stringify(changes)}`,
    async (model, system) => {
      id = pick(model, target) ?? "none"
      const target_ = id
      const now = model.clock.now()
      const expected = answer(model.driver.update(target_, changesOf(changes, now)))
      const actual = answer(
        await system.run(Effect.result(system.scheduler.update(target_, changesOf(changes, now)))),
      )
      same(`update ${id}`, expected, actual)
    },
    invariant,
  )
}

/**
 * What a bulk command does to the tasks its filter matches.
 *
 * @category models
 * @since 0.2.0
 */
export type BulkAction = "pause" | "resume" | "cancel"

const bulkCommand = (
  action: BulkAction,
  filter: Kernel.TaskFilter,
  invariant: Options["invariant"],
) =>
  command(
    () => `${action}All ${JSON.stringify(filter)}`,
    async (model, system) => {
      const expected = model.bulk(action, filter)
      const actual = await system.run(
        action === "pause"
          ? system.scheduler.pauseAll(filter)
          : action === "resume"
            ? system.scheduler.resumeAll(filter)
            : system.scheduler.cancelAll(filter),
      )
      same(`${action}All ${JSON.stringify(filter)}`, expected, actual)
    },
    invariant,
  )

const filterArb: fc.Arbitrary<Kernel.TaskFilter> = fc.oneof(
  fc.constantFrom<Kernel.TaskFilter>({ tag: "a" }, { tag: "b" }),
  fc.constantFrom<Kernel.TaskFilter>({ state: "scheduled" }, { state: "paused" }),
  fc.constantFrom<Kernel.TaskFilter>({ kind: "once" }, { kind: "fixed-rate" }, { kind: "cron" }),
)

const pattern = fc.array(fc.boolean(), { minLength: 1, maxLength: 4 })

/**
 * The arbitrary of command sequences: schedule (a random task, or one of your templates with a
 * random outcome pattern), advance the clock, jump to the next slot (exactly, or a little late),
 * cancel, pause or resume a task (possibly one already final, paused or unknown), update its
 * options, move it into or out of a circuit breaker, pause, resume or cancel the tasks a filter
 * matches (tag, state, kind), change a task's outcome pattern. Tasks of your templates keep
 * their policies: an update changes only their priority, and they move only between the
 * breakers of {@link Options.breakers} (or out of one).
 *
 * **Example** (With your own `fc.assert`)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * await fc.assert(
 *   fc.asyncProperty(Commands.commands(), async (cmds) => {
 *     await Commands.run(cmds)
 *   }),
 *   { numRuns: 50, seed: 42 },
 * )
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const commands = (options: Options = {}): fc.Arbitrary<Iterable<SchedulerCommand>> => {
  const invariant = options.invariant
  const templates = Object.entries(options.templates ?? {})
  const blueprint: fc.Arbitrary<Blueprint> =
    templates.length === 0
      ? controlledTaskSpec.map(fromSpec)
      : fc
          .tuple(fc.constantFrom(...templates), pattern)
          .map(([[name, t], fails]) => fromTemplate(name, t, fails))
  // Your templates keep their own policies: an update changes only their priority, and they
  // move only between the breakers you named (or out of one).
  const update: fc.Arbitrary<UpdateSpec> =
    templates.length === 0
      ? updateSpec
      : fc.record({ priority: updateSpec.map((u) => u.priority ?? "normal") })
  const breakerChoice: fc.Arbitrary<string | null> =
    templates.length === 0
      ? fc.constantFrom("shared", "own", null)
      : fc.constantFrom(null, ...Object.keys(options.breakers ?? {}))
  const max = options.advance?.max ?? 40
  const schedule = blueprint.map((b) => scheduleCommand(b, invariant))
  const advance = fc.integer({ min: 0, max }).map((ms) => advanceCommand(ms, options))
  const nextSlot = fc
    .oneof(fc.constant(0), fc.integer({ min: 0, max }))
    .map((extra) => nextSlotCommand(extra, options))
  return fc.commands(
    [
      // Listed more than once: drawn more often than the controls, so tasks run.
      schedule,
      schedule,
      schedule,
      advance,
      advance,
      nextSlot,
      nextSlot,
      fc.nat(20).map((target) => cancelCommand(target, invariant)),
      fc
        .tuple(fc.nat(20), pattern)
        .map(([target, fails]) => outcomesCommand(target, fails, invariant)),
      fc.nat(20).map((target) => pauseCommand(target, "pause", invariant)),
      fc.nat(20).map((target) => pauseCommand(target, "resume", invariant)),
      fc
        .tuple(fc.nat(20), update)
        .map(([target, changes]) => updateCommand(target, changes, invariant)),
      fc
        .tuple(fc.nat(20), breakerChoice)
        .map(([target, breaker]) => updateCommand(target, { breaker }, invariant, "breaker")),
      fc
        .tuple(fc.constantFrom<BulkAction>("pause", "resume", "cancel"), filterArb)
        .map(([action, filter]) => bulkCommand(action, filter, invariant)),
    ],
    { maxCommands: options.maxCommands ?? 25, size: "max" },
  )
}

/**
 * Runs one command sequence on a fresh reference and a fresh scheduler (closed afterwards), and
 * returns how many occurrences both recorded; rejects with a message naming the command after
 * which they differ.
 *
 * **Example** (One sequence)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const [cmds] = fc.sample(Commands.commands(), { numRuns: 1, seed: 7 })
 * await Commands.run(cmds!)
 * ```
 *
 * @category runners
 * @since 0.1.0
 */
export const run = async (
  cmds: Iterable<SchedulerCommand>,
  options: Options = {},
): Promise<number> => {
  const seed = options.seed ?? 1234
  const startAt = startOf(options)
  const shared = options.breakers ?? breakers
  const system = await System.make({
    seed,
    startAt,
    workers: 1,
    logLevel: "None",
    breakers: shared,
  })
  const model = new Model({ seed, startAt, breakers: shared })
  try {
    await fc.asyncModelRun(() => ({ model, real: system }), cmds)
    return model.occurrences.length
  } finally {
    await system.close()
  }
}

/**
 * What {@link check} did.
 *
 * @category models
 * @since 0.1.0
 */
export interface Report {
  /** Command sequences run (each on a fresh reference and scheduler). */
  readonly runs: number
  /** Commands applied in all. */
  readonly commands: number
  /** Occurrences (runs, retries, missed slots, cancellations) both systems recorded, in all. */
  readonly occurrences: number
  /** Wall-clock time, ms. */
  readonly ms: number
}

/**
 * Runs the command model `numRuns` times (default: the `FC_RUNS_MODEL` environment variable, or
 * 100) with `fc.assert`, and reports what it checked. Rejects with fast-check's report — the
 * seed, the shrunk command sequence and the first difference — when the scheduler and the
 * reference disagree, or your invariant throws.
 *
 * **Example** (Random tasks of every kind)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const report = await Commands.check({ numRuns: 200 })
 * console.log(`${report.runs} runs, ${report.commands} commands, ${report.occurrences} occurrences in ${report.ms} ms`)
 * ```
 *
 * @category runners
 * @since 0.1.0
 */
export const check = async (
  options: Options & {
    readonly numRuns?: number
    /** fast-check's seed, to replay a failure. */
    readonly fcSeed?: number
  } = {},
): Promise<Report> => {
  const numRuns = options.numRuns ?? Number(process.env.FC_RUNS_MODEL ?? 100)
  let runs = 0
  let total = 0
  let occurrences = 0
  const started = Date.now()
  await fc.assert(
    fc.asyncProperty(commands(options), async (cmds) => {
      runs++
      total += [...cmds].length
      occurrences += await run(cmds, options)
    }),
    { numRuns, ...(options.fcSeed === undefined ? {} : { seed: options.fcSeed }) },
  )
  return { runs, commands: total, occurrences, ms: Date.now() - started }
}
