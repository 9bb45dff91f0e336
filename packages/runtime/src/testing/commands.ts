/**
 * A fast-check command model of the {@link Scheduler.Scheduler}, with the core's deterministic
 * driver as the reference: random sequences of commands — schedule a task (of every kind of
 * schedule, or of your own task templates), advance the clock, jump to the next slot, cancel,
 * change what a task's runs do — are applied to both, and after every command their run traces
 * (every occurrence, as `Trace.line`s), every task's state and counters and the per-state counts
 * must be equal. A failure shrinks to a short sequence of commands.
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
  Clock as CoreClock,
  Driver,
  type MissedRun,
  Random,
  type Retry,
  Schedule,
  type Task,
  type Time,
} from "@tickwork/core"
import { Effect, Exit, ManagedRuntime, Option, Scope } from "effect"
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
}

/**
 * The arbitrary of {@link TaskSpec}: small delays and periods (0–60 ms, 1–25 ms) so that random
 * clock moves of a few tens of ms make slots collide, runs late, retries pile up.
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
export const scheduleOf = (spec: TaskSpec, now: number): Schedule.Schedule => {
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
}

/**
 * The options of a {@link TaskSpec} scheduled at `now` (retry backoff: 3 ms, doubling, with the
 * spec's jitter).
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
}

/** A task's info without its error values: what both systems must agree on. */
const project = (info: Task.TaskInfo | undefined, id: string): string =>
  info === undefined
    ? `${id} unknown`
    : `${info.id} ${info.state} kind=${info.kind} priority=${info.priority} slot=${info.scheduledFor} ` +
      `attempt=${info.attempt} run=${info.runNumber} failures=${info.consecutiveFailures} ` +
      `lastFailure=${info.lastFailure?.kind ?? "-"} finished=${info.finishedAt ?? "-"}`

const counts = (s: {
  readonly scheduled: number
  readonly running: number
  readonly done: number
  readonly failed: number
  readonly cancelled: number
  readonly accepted: number
  readonly removed: number
}) =>
  `scheduled=${s.scheduled} running=${s.running} done=${s.done} failed=${s.failed} ` +
  `cancelled=${s.cancelled} accepted=${s.accepted} removed=${s.removed}`

/**
 * The reference: the core's deterministic {@link Driver} on a manual clock, with inline jobs
 * that do what the plan says. It records the occurrences the runtime would publish (its runs'
 * records, the slots they merged or dropped, and cancellations).
 *
 * @category models
 * @since 0.1.0
 */
export class Model {
  readonly clock: CoreClock.ManualClock
  readonly driver: Driver.Driver
  readonly occurrences: Array<Ledger.Occurrence> = []
  readonly ids: Array<string> = []
  private readonly plans = new Map<string, Plan>()

  constructor(options: { readonly seed: number; readonly startAt: number }) {
    this.clock = new CoreClock.ManualClock(options.startAt)
    this.driver = Driver.make({
      clock: this.clock,
      random: Random.seeded(options.seed),
      onRun: (record) => {
        this.occurrences.push(...fromRun(record))
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
        from: info.state as "scheduled" | "running",
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

  /** Moves the clock `ms` forward, running every slot at its time. */
  advance(ms: number): void {
    this.driver.runUntil(this.clock.now() + ms)
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

  private constructor(
    runtime: ManagedRuntime.ManagedRuntime<Scheduler.Scheduler, unknown>,
    scope: Scope.Closeable,
    scheduler: Scheduler.SchedulerShape,
    recorder: Trace.Recorder,
  ) {
    this.runtime = runtime
    this.scope = scope
    this.scheduler = scheduler
    this.recorder = recorder
  }

  /** Builds the scheduler and subscribes the recorder. */
  static async make(options: TestScheduler.Options): Promise<System> {
    const runtime = ManagedRuntime.make(TestScheduler.layer(options))
    const scope = Scope.makeUnsafe()
    const [scheduler, recorder] = await runtime.runPromise(
      Effect.gen(function* () {
        return [yield* Scheduler.Scheduler, yield* Trace.record()] as const
      }).pipe(Effect.provideService(Scope.Scope, scope)),
    )
    return new System(runtime, scope, scheduler, recorder)
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
        for (const id of self.ids) {
          const info = yield* self.scheduler.info(id)
          if (info._tag === "Some") tasks.push(info.value)
        }
        return {
          now: yield* TestScheduler.now,
          occurrences: self.recorder.occurrences(),
          lines: self.recorder.lines(),
          tasks,
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
  /** Seed of the schedulers' retry jitter. Default 1234. */
  readonly seed?: number
  /** Where virtual time starts (both clocks). Default 0. */
  readonly startAt?: number | Date
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
  if (invariant !== undefined) invariant(await system.view())
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

const advanceCommand = (ms: number, invariant: Options["invariant"]) =>
  command(
    () => `advance ${ms}`,
    async (model, system) => {
      model.advance(ms)
      await system.run(TestScheduler.advance(ms))
    },
    invariant,
  )

/** Moves the clock to the earliest pending slot (as the reference knows it), plus `extra` ms. */
const nextSlotCommand = (extra: number, invariant: Options["invariant"]) => {
  let ms: number | undefined
  return command(
    () => `to next slot +${extra}${ms === undefined ? "" : ` (advance ${ms})`}`,
    async (model, system) => {
      const next = model.driver.nextSlot()
      const by = next === undefined ? extra : Math.max(0, next - model.clock.now()) + extra
      ms = by
      model.advance(by)
      await system.run(TestScheduler.advance(by))
    },
    invariant,
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

const pattern = fc.array(fc.boolean(), { minLength: 1, maxLength: 4 })

/**
 * The arbitrary of command sequences: schedule (a random task, or one of your templates with a
 * random outcome pattern), advance the clock, jump to the next slot (exactly, or a little late),
 * cancel a task (possibly one already final or unknown), change a task's outcome pattern.
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
      ? taskSpec.map(fromSpec)
      : fc
          .tuple(fc.constantFrom(...templates), pattern)
          .map(([[name, t], fails]) => fromTemplate(name, t, fails))
  const max = options.advance?.max ?? 40
  return fc.commands(
    [
      blueprint.map((b) => scheduleCommand(b, invariant)),
      fc.integer({ min: 0, max }).map((ms) => advanceCommand(ms, invariant)),
      fc
        .oneof(fc.constant(0), fc.integer({ min: 0, max }))
        .map((extra) => nextSlotCommand(extra, invariant)),
      fc.nat(20).map((target) => cancelCommand(target, invariant)),
      fc
        .tuple(fc.nat(20), pattern)
        .map(([target, fails]) => outcomesCommand(target, fails, invariant)),
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
  const system = await System.make({ seed, startAt, workers: 1, logLevel: "None" })
  const model = new Model({ seed, startAt })
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
