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
 * A job may schedule, cancel (itself too) and query the driver while it runs; a task it
 * schedules with a slot `<= now` runs in the same call, in SPEC §4 order. A job may also move a
 * manual clock to simulate a long run. A job that throws becomes a `failed` outcome; nothing
 * a job does escapes the driver as an exception.
 *
 * @since 0.1.0
 */
import { Result } from "effect"
import { type Clock, isManual, type ManualClock } from "./Clock.ts"
import { InvalidOption, InvalidTime, type ScheduleError, show } from "./Errors.ts"
import { Kernel, type KernelOptions, type Stats, type TaskOptions } from "./Kernel.ts"
import type { Outcome, RunInfo, RunRecord, TaskId, TaskInfo, TaskState } from "./Task.ts"
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
}

const noop = () => {}

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
  /** Records of the current `tick`, or undefined outside one. */
  private collecting: Array<RunRecord> | undefined

  constructor(options: DriverOptions) {
    this.clock = options.clock
    this.kernel = new Kernel(options)
    this.onRun = options.onRun
  }

  /** Accepts a task, or returns the typed error of its first bad option (nothing changes). O(log n). */
  schedule(options: TaskOptions<Job>): Result.Result<TaskId, ScheduleError> {
    const id = this.accept(options)
    return typeof id === "string" ? Result.succeed(id) : Result.fail(id)
  }

  /** {@link schedule} that throws the typed error instead. */
  scheduleUnsafe(options: TaskOptions<Job>): TaskId {
    const id = this.accept(options)
    if (typeof id === "string") return id
    throw id
  }

  /** Cancels a scheduled or running task (SPEC §8); false for unknown or final ids. O(1) amortised. */
  cancel(id: string): boolean {
    return this.kernel.cancel(id, this.clock.now())
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
      if (run === undefined) return n
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
    if (typeof options?.job !== "function") {
      return new InvalidOption({
        field: "job",
        value: options?.job,
        message: `job must be a function, got ${show(options?.job)}`,
      })
    }
    return this.kernel.schedule(options, this.clock.now())
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
    if (r === undefined) return
    this.collecting?.push(r)
    this.onRun?.(r)
  }
}

/**
 * Makes a {@link Driver}.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: DriverOptions): Driver => new Driver(options)
