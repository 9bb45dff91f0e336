/**
 * @internal
 * The two systems the command model compares (public through
 * `@tickwork/runtime/testing/commands`): the reference ({@link Model}, the core's driver on a
 * manual clock) and the system under test ({@link System}, a real scheduler on a TestClock), and
 * the {@link View} an invariant sees.
 */
import {
  type Breaker,
  Clock as CoreClock,
  Driver,
  type Errors,
  type Kernel,
  Random,
  type Rules,
  type Task,
} from "@tickwork/core"
import { Effect, Exit, ManagedRuntime, Option, type Result, Scope, Stream } from "effect"
import * as Ledger from "../../Ledger.ts"
import * as Scheduler from "../../Scheduler.ts"
import * as TestScheduler from "../TestScheduler.ts"
import * as Trace from "../Trace.ts"
import { type Blueprint, nextFails, type Plan } from "./tasks.ts"

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
      `breaker=${info.breaker ?? "-"} tags=${(info.tags ?? []).join(",")} ` +
      `group=${info.group ?? "-"} key=${info.key ?? "-"} waiting=${waitOf(info.waiting)}`

/** A wait on a limit (SPEC §20.4) as both systems must agree on it. */
const waitOf = (w: Task.WaitInfo | undefined): string =>
  w === undefined ? "-" : `${w.cause}@${w.scope}:${w.since}..${w.until ?? ""}`

const counts = (s: Kernel.Stats) =>
  `scheduled=${s.scheduled} running=${s.running} paused=${s.paused} done=${s.done} ` +
  `failed=${s.failed} cancelled=${s.cancelled} accepted=${s.accepted} removed=${s.removed} ` +
  `waiting=${s.waiting.concurrency}/${s.waiting["rate-limited"]}`

/** A circuit breaker as both systems must agree on it. */
export const breakerState = (b: Kernel.BreakerInfo): string =>
  `${b.name}${b.shared ? " (shared)" : ""} ${b.state} failures=${b.failures} opens=${b.opens} ` +
  `openedAt=${b.openedAt ?? "-"} halfOpenAt=${b.halfOpenAt ?? "-"} probe=${b.probe ?? "-"} ` +
  `tasks=${b.tasks.join(",")} held=${b.held.join(",")}`

/** A breaker transition from the occurrence stream, as a line. */
const breakerLine = (o: Task.BreakerChanged): string =>
  `${o.at} breaker ${o.breaker} ${o.from} -> ${o.to} cause=${o.cause ?? "-"} ` +
  `probe=${o.probe ?? "-"} coolDown=${o.coolDown ?? "-"} halfOpenAt=${o.halfOpenAt ?? "-"}`

/** An answer of either system as text: a value, or the typed error's tag and message. */
export const answer = <A>(r: Result.Result<A, Errors.ScheduleError>): string =>
  r._tag === "Success" ? JSON.stringify(r.success) : `${r.failure._tag}: ${r.failure.message}`

/**
 * What a bulk command does to the tasks its filter matches.
 *
 * @category models
 * @since 0.2.0
 */
export type BulkAction = "pause" | "resume" | "cancel"

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
    readonly limits?: Rules.Limits | undefined
  }) {
    this.clock = new CoreClock.ManualClock(options.startAt)
    this.driver = Driver.make({
      clock: this.clock,
      random: Random.seeded(options.seed),
      ...(options.breakers === undefined ? {} : { breakers: options.breakers }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
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

/** What both systems are compared on, as text. */
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
          // `updated` records a call, not a scheduling decision: the reference (the core's
          // driver) keeps no record of calls, and an update's effects are compared through the
          // runs, the tasks and the breakers.
          lines: self.recorder
            .occurrences()
            .filter((o) => o.kind !== "updated")
            .map((o) => Trace.line(o)),
          tasks,
          counts: counts(yield* self.scheduler.stats),
          breakers: (yield* self.scheduler.breakers).map(breakerState),
          breakerEvents: self.breakerEvents.map(breakerLine),
        }
      }),
    )
  }
}
