/**
 * The deterministic driver (SPEC §11): a {@link Kernel} whose jobs are plain synchronous
 * functions run inline, on a clock you control. No threads, no timers, no sleeping — the same
 * inputs and clock moves give the same run trace every time (SPEC §14.6).
 *
 * - {@link Driver.runDue}: the clock does not move; every run due now runs, follow-ups and
 *   catch-up runs included, each starting at the current time. Returns the count.
 * - {@link Driver.runUntil}: steps a {@link ManualClock} to each due slot in order and runs it
 *   there (lateness 0, a failure reported at its slot), then moves the clock to `end`.
 * - {@link Driver.tick}: the same, returning every run's {@link RunRecord} in run order.
 *
 * The controls of SPEC §15 — `pause`, `resume`, `update`, the `*All` variants by filter, circuit
 * breakers, `explain` and {@link simulate} — act on the kernel at the clock's time. What the
 * kernel decides besides runs (skipped slots, expired one-shots, pauses, resumes, breaker
 * transitions) are {@link Task.Occurrence}s: passed to `onOccurrence` as they happen, or kept
 * until {@link Driver.drainOccurrences}.
 *
 * A job may schedule, cancel (itself too) and query the driver while it runs; a task it
 * schedules with a slot `<= now` runs in the same call, in SPEC §4 order. A job may also move a
 * manual clock to simulate a long run. A job that throws becomes a `failed` outcome; nothing
 * a job does escapes the driver as an exception.
 *
 * @since 0.1.0
 */
import { Result } from "effect"
import { type Clock, isManual, type ManualClock } from "./Clock.ts"
import {
  InvalidOption,
  InvalidTime,
  type ManualRunRefused,
  type ScheduleError,
  show,
} from "./Errors.ts"
import {
  type BreakerInfo,
  type Explanation,
  Kernel,
  type KernelOptions,
  type Run,
  type Scheduled,
  type SlotToRetry,
  type Stats,
  type TaskFilter,
  type TaskOptions,
  type UpdateOptions,
} from "./Kernel.ts"
import type * as Task from "./Task.ts"
import type {
  Occurrence,
  Outcome,
  RunInfo,
  RunRecord,
  TaskId,
  TaskInfo,
  TaskState,
} from "./Task.ts"
import { failed, succeeded } from "./Task.ts"

/**
 * An inline job. It must be synchronous: a returned promise-like makes the run `failed` (the
 * driver cannot wait for it), and its rejection is absorbed.
 *
 * @category models
 * @since 0.1.0
 */
export type Job = (run: RunInfo) => void

/**
 * Driver options.
 *
 * @category models
 * @since 0.1.0
 */
export interface DriverOptions extends KernelOptions {
  /** The clock; `runUntil` and `tick` need a {@link ManualClock}. */
  readonly clock: Clock
  /** Called with every finished run, in run order, from every run method. */
  readonly onRun?: (record: RunRecord) => void
  /**
   * Called with every occurrence that is not a run (skipped slots, expired one-shots, pauses,
   * resumes, breaker transitions), in order, right after the step that made it. Without it they
   * are kept until {@link Driver.drainOccurrences}.
   */
  readonly onOccurrence?: (occurrence: Occurrence) => void
}

const noop = () => {}

/** The typed error of a driver task whose job is not a function; `undefined` when it is one. */
const badJob = (options: TaskOptions<Job>): InvalidOption | undefined =>
  typeof options?.job === "function"
    ? undefined
    : new InvalidOption({
        field: "job",
        value: options?.job,
        message: `job must be a function, got ${show(options?.job)}`,
      })

/**
 * A kernel with inline jobs and an injected clock.
 *
 * **Example** (Retries and a fixed rate, in virtual time)
 *
 * ```ts
 * import { Clock, Driver, Schedule } from "@tickwork/core"
 * const clock = new Clock.ManualClock(0)
 * const driver = Driver.make({ clock })
 * let calls = 0
 * driver.scheduleUnsafe({ schedule: Schedule.fixedRate(10), job: () => void calls++ })
 * driver.runUntil(35) // runs the slots 0, 10, 20 and 30
 * calls // 4
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export class Driver {
  readonly clock: Clock
  private readonly kernel: Kernel<Job>
  private readonly onRun: ((record: RunRecord) => void) | undefined
  private readonly onOccurrence: ((occurrence: Occurrence) => void) | undefined
  /** Records of the current `tick`, or undefined outside one. */
  private collecting: Array<RunRecord> | undefined

  constructor(options: DriverOptions) {
    this.clock = options.clock
    this.kernel = new Kernel(options)
    this.onRun = options.onRun
    this.onOccurrence = options.onOccurrence
  }

  /** Accepts a task, or returns the typed error of its first bad option (nothing changes). O(log n). */
  schedule(options: TaskOptions<Job>): Result.Result<TaskId, ScheduleError> {
    const id = this.accept(options)
    return typeof id === "string" ? Result.succeed(id) : Result.fail(id)
  }

  /**
   * {@link schedule}, saying what it did with a `dedup` key (SPEC §20.3): the id of the task
   * that holds the key and whether it was `created`, `deduplicated` or `replaced`. O(log n).
   */
  scheduleDeduplicated(options: TaskOptions<Job>): Result.Result<Scheduled, ScheduleError> {
    const bad = badJob(options)
    if (bad !== undefined) return Result.fail(bad)
    const done = this.flush(this.kernel.scheduleDeduplicated(options, this.clock.now()))
    return "outcome" in done ? Result.succeed(done) : Result.fail(done)
  }

  /** {@link schedule} that throws the typed error instead. */
  scheduleUnsafe(options: TaskOptions<Job>): TaskId {
    const id = this.accept(options)
    if (typeof id === "string") return id
    throw id
  }

  /**
   * Cancels a scheduled, running or paused task (SPEC §8); false for unknown or final ids.
   * O(1) amortised.
   */
  cancel(id: string): boolean {
    return this.flush(this.kernel.cancel(id, this.clock.now()))
  }

  /**
   * Pauses a task (SPEC §5, §15): a scheduled one at once, a running one when its run ends. False
   * for a task already paused, final or unknown. See {@link Kernel.pause}.
   */
  pause(id: string): boolean {
    return this.flush(this.kernel.pause(id, this.clock.now()))
  }

  /**
   * Resumes a paused task (SPEC §15) at the clock's time; slots that passed while it was paused
   * are recorded as skipped, never caught up. False for a task that is not paused. See
   * {@link Kernel.resume}.
   */
  resume(id: string): boolean {
    return this.flush(this.kernel.resume(id, this.clock.now()))
  }

  /**
   * Runs a `scheduled` task once at the clock's time, outside its schedule (SPEC §19.1): the run
   * is taken by the next {@link tick}; its pending run is put back when it ends. Fails with
   * `ManualRunRefused` (nothing changes) for a task that is not `scheduled` or already has a
   * manual run waiting. See {@link Kernel.trigger}.
   */
  trigger(id: string): Result.Result<true, ManualRunRefused> {
    const r = this.flush(this.kernel.trigger(id, this.clock.now()))
    return r === true ? Result.succeed(true) : Result.fail(r)
  }

  /**
   * Gives a `failed` task one more attempt of its failed slot, due at the clock's time (SPEC
   * §19.2). Fails with `ManualRunRefused` for any task that is not `failed`. See
   * {@link Kernel.retry}. Given `slot`, one more attempt of that failed slot of a recurring
   * task (SPEC §19.7), with what the caller's ledger holds about it (the driver keeps none).
   */
  retry(id: string, slot?: SlotToRetry): Result.Result<true, ManualRunRefused> {
    const r = this.flush(this.kernel.retry(id, this.clock.now(), slot))
    return r === true ? Result.succeed(true) : Result.fail(r)
  }

  /**
   * Changes a live task in place (SPEC §15): true when changed, false for an unknown or final id,
   * or the typed error of the first bad change (nothing changes). See {@link Kernel.update}.
   */
  update(id: string, changes: UpdateOptions<Job>): Result.Result<boolean, ScheduleError> {
    if (changes?.job !== undefined && typeof changes.job !== "function") {
      return Result.fail(
        new InvalidOption({
          field: "job",
          value: changes.job,
          message: `job must be a function, got ${show(changes.job)}`,
        }),
      )
    }
    const r = this.flush(this.kernel.update(id, changes, this.clock.now()))
    return typeof r === "boolean" ? Result.succeed(r) : Result.fail(r)
  }

  /** The tasks matching `filter` (SPEC §15). O(n). */
  tasks(filter: TaskFilter = {}): Array<TaskInfo> {
    return this.kernel.tasks(filter)
  }

  /** Pauses the tasks matching `filter`; returns the ids it paused. O(n). */
  pauseAll(filter: TaskFilter): Array<TaskId> {
    return this.flush(this.kernel.pauseAll(filter, this.clock.now()))
  }

  /** Resumes the tasks matching `filter`; returns the ids it resumed. O(n). */
  resumeAll(filter: TaskFilter): Array<TaskId> {
    return this.flush(this.kernel.resumeAll(filter, this.clock.now()))
  }

  /** Cancels the tasks matching `filter`; returns the ids it cancelled. O(n). */
  cancelAll(filter: TaskFilter): Array<TaskId> {
    return this.flush(this.kernel.cancelAll(filter, this.clock.now()))
  }

  /** A live task's next `count` slots given its state, at the clock's time (SPEC §15). Pure. */
  explain(id: string, count?: number): Explanation | undefined {
    return this.kernel.explain(id, this.clock.now(), count)
  }

  /** Every circuit breaker (SPEC §7). */
  breakers(): Array<BreakerInfo> {
    return this.kernel.breakers()
  }

  /** A shared breaker by name, or a task's own breaker by the task's id. */
  breaker(name: string): BreakerInfo | undefined {
    return this.kernel.breaker(name)
  }

  /** The occurrences kept since the last call (none when `onOccurrence` is given), in order. */
  drainOccurrences(): Array<Occurrence> {
    return this.kernel.drainOccurrences()
  }

  /** The task's state, or `"unknown"`. */
  status(id: string): TaskState | "unknown" {
    return this.kernel.status(id)
  }

  /** Everything known about a task, or undefined. */
  info(id: string): TaskInfo | undefined {
    return this.kernel.info(id)
  }

  /** Ids of live and retained tasks. O(n). */
  taskIds(): Array<TaskId> {
    return this.kernel.taskIds()
  }

  /** The earliest pending slot, or undefined when nothing is scheduled. */
  nextSlot(): number | undefined {
    return this.kernel.nextSlot()
  }

  /** Counts by state. */
  stats(): Stats {
    return this.kernel.stats()
  }

  /** Throws if an internal invariant is broken (for tests). O(n). */
  checkInvariants(): void {
    this.kernel.checkInvariants()
  }

  /**
   * Runs every run due at the current time, without moving the clock. Returns the count. "Due"
   * means due when `runDue` was called: a job that moves a manual clock (a long run) makes the
   * runs after it late, but does not add runs that only became due because of the move.
   */
  runDue(): number {
    // Bounding by the call's time also guarantees termination: a catch-up task whose runs take
    // longer than its period would otherwise keep producing due slots forever.
    const limit = this.clock.now()
    let n = 0
    for (;;) {
      const run = this.kernel.takeDue(this.clock.now(), limit)
      if (run === undefined) return this.flush(n)
      this.flush(0)
      this.execute(run)
      n++
    }
  }

  /**
   * Steps the manual clock to each due slot up to `end`, running each run at its slot, then
   * moves the clock to `end`. Returns the count. Throws {@link InvalidTime} when `end` is before
   * now, and {@link InvalidOption} when the clock is not a {@link ManualClock}.
   */
  runUntil(end: number): number {
    const clock = this.manual(end)
    let n = 0
    for (;;) {
      const run = this.kernel.takeDue(clock.now(), end)
      this.flush(0)
      if (run === undefined) break
      if (run.startedAt > clock.now()) clock.set(run.startedAt)
      this.execute(run)
      n++
    }
    if (clock.now() < end) clock.set(end)
    return n
  }

  /** {@link runUntil}, returning the record of every run in run order. */
  tick(end: number): Array<RunRecord> {
    const records: Array<RunRecord> = []
    const outer = this.collecting
    this.collecting = records
    try {
      this.runUntil(end)
    } finally {
      this.collecting = outer
    }
    return records
  }

  private accept(options: TaskOptions<Job>): TaskId | ScheduleError {
    return badJob(options) ?? this.flush(this.kernel.schedule(options, this.clock.now()))
  }

  /** Hands the occurrences of the step just taken to `onOccurrence`; returns `value`. */
  private flush<A>(value: A): A {
    if (this.onOccurrence !== undefined) {
      for (const o of this.kernel.drainOccurrences()) this.onOccurrence(o)
    }
    return value
  }

  private manual(end: number): ManualClock {
    if (!isManual(this.clock)) {
      throw new InvalidOption({
        field: "clock",
        value: this.clock,
        message: "runUntil and tick move the clock: give the driver a ManualClock",
      })
    }
    if (!Number.isSafeInteger(end) || end < this.clock.now()) {
      throw new InvalidTime({
        field: "end",
        value: end,
        message: `end must be a safe integer no earlier than now (${this.clock.now()}), got ${show(end)}`,
      })
    }
    return this.clock
  }

  private execute(run: ReturnType<Kernel<Job>["takeDue"]> & object): void {
    let outcome: Outcome = succeeded
    try {
      const result: unknown = run.job(run)
      if (
        result !== undefined &&
        result !== null &&
        typeof (result as PromiseLike<unknown>).then === "function"
      ) {
        ;(result as PromiseLike<unknown>).then(noop, noop)
        outcome = failed(
          new TypeError(
            "an inline job returned a promise: the deterministic driver runs synchronous jobs only",
          ),
        )
      }
    } catch (error) {
      outcome = failed(error)
    }
    const record = this.onRun !== undefined || this.collecting !== undefined
    const r = this.kernel.complete(run, outcome, this.clock.now(), record)
    if (r !== undefined) {
      this.collecting?.push(r)
      this.onRun?.(r)
    }
    // Stryker disable next-line CallExpression: equivalent, each caller flushes before it reports more
    this.flush(0)
  }
}

/**
 * Makes a {@link Driver}.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: DriverOptions): Driver => new Driver(options)

/**
 * What {@link simulate} plays: tasks as the kernel takes them, without jobs.
 *
 * @category models
 * @since 0.2.0
 */
export type SimulatedTask = Omit<TaskOptions<unknown>, "job"> & { readonly job?: unknown }

/**
 * Options of {@link simulate}.
 *
 * @category models
 * @since 0.2.0
 */
export interface SimulateOptions {
  /** Where the virtual clock starts, epoch ms. Default 0. */
  readonly from?: number
  /** Where it stops: runs with slots up to `until` are played. */
  readonly until: number
  /** Each run's outcome, decided from its info. Default: every run succeeds. */
  readonly outcome?: (run: RunInfo) => Outcome
  /** Circuit breakers shared by name, as in {@link DriverOptions}. */
  readonly breakers?: KernelOptions["breakers"]
  /** Jitter source. Default `Random.seeded(0)`. */
  readonly random?: KernelOptions["random"]
}

/**
 * The result of {@link simulate}.
 *
 * @category models
 * @since 0.2.0
 */
export interface Simulation {
  /** The ids given to the tasks, in the order they were given. */
  readonly ids: ReadonlyArray<TaskId>
  /** Every finished run, in run order. */
  readonly runs: ReadonlyArray<RunRecord>
  /** Runs and the other occurrences, interleaved in the order they happened. */
  readonly ledger: ReadonlyArray<RunRecord | Task.Occurrence>
  /** Each task at `until`. */
  readonly tasks: ReadonlyArray<TaskInfo>
}

/**
 * What a set of tasks would do on a virtual clock from `from` to `until` (SPEC §15), without
 * running any job: each run takes no time and its outcome comes from `outcome(run)` (default
 * success). Pure and deterministic: the same tasks and options always give the same result. Fails
 * with the typed error of the first task the kernel refuses.
 *
 * **Example** (A fixed rate whose second run fails, with one retry)
 *
 * ```ts
 * import { Driver, Schedule, Task } from "@tickwork/core"
 * const sim = Driver.simulate(
 *   [{ schedule: Schedule.fixedRate(10), retry: { maxRetries: 1, base: 2 } }],
 *   { until: 25, outcome: (run) => (run.runNumber === 2 ? Task.failed("down") : Task.succeeded) },
 * )
 * if (!("_tag" in sim)) sim.runs.map((r) => r.scheduledFor) // [0, 10, 12, 20]
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const simulate = (
  tasks: ReadonlyArray<SimulatedTask>,
  options: SimulateOptions,
): Simulation | ScheduleError => {
  const from = options.from ?? 0
  const until = options.until
  for (const [field, value] of [
    ["from", from],
    ["until", until],
  ] as const) {
    if (!Number.isSafeInteger(value) || (field === "until" && value < from)) {
      return new InvalidTime({
        field,
        value,
        message: `${field} must be a safe integer${field === "until" ? " no earlier than from" : ""}, got ${show(value)}`,
      })
    }
  }
  const kernel = new Kernel<unknown>({
    ...(options.breakers === undefined ? {} : { breakers: options.breakers }),
    ...(options.random === undefined ? {} : { random: options.random }),
  })
  const outcomeOf = options.outcome ?? (() => succeeded)
  const ids: Array<TaskId> = []
  const runs: Array<RunRecord> = []
  const ledger: Array<RunRecord | Task.Occurrence> = []
  const drain = () => {
    for (const o of kernel.drainOccurrences()) ledger.push(o)
  }
  for (const task of tasks) {
    const id = kernel.schedule({ ...task, job: task.job }, from)
    if (typeof id !== "string") return id
    ids.push(id)
  }
  // Stryker disable next-line CallExpression: equivalent, the first takeDue's drain keeps the order
  drain()
  let now = from
  for (;;) {
    const run: Run<unknown> | undefined = kernel.takeDue(now, until)
    drain()
    if (run === undefined) break
    if (run.startedAt > now) now = run.startedAt
    const record = kernel.complete(run, outcomeOf(run.toJSON()), now, true) as RunRecord
    runs.push(record)
    ledger.push(record)
    // Stryker disable next-line CallExpression: equivalent, the next takeDue's drain keeps the order
    drain()
  }
  return { ids, runs, ledger, tasks: ids.map((id) => kernel.info(id) as TaskInfo) }
}
