/**
 * @internal
 * The timing actor: the one owner of a kernel. Accepting, cancelling, taking due runs and
 * applying finished ones all go through it; the Scheduler service only calls its commands and
 * reads.
 *
 * Ground rules:
 * 1. The kernel is mutated only here, in short synchronous steps (JavaScript runs one at a time,
 *    so each is atomic). A caller's `accept` or `cancel` is applied in the caller's step — a
 *    message handled on arrival, with no queue hop — and the actor's loop takes and applies runs.
 *    Jobs never run inside a kernel step.
 * 2. The actor takes a run only while the pool has a free worker: the heap is the queue, and
 *    overload shows as lateness, never as unbounded fibers.
 * 3. A finished run comes back from the pool as an event; the actor applies the lifecycle
 *    transition (kernel.complete) and hands the record to the recorder, in the order runs ended.
 * 4. The actor sleeps until the earliest slot, in chunks of at most 2^31-1 ms, or until woken: by
 *    a finished run, or by an insert earlier than the slot it sleeps toward. It never busy-waits
 *    and never sleeps past an earlier insert. Both are the `Wakeup` it waits on.
 */
import { type Declared, type Errors, type Kernel, Rules, type Task } from "@tickwork/core"
import { Deferred, Effect, type Exit, Option } from "effect"
import type * as Ledger from "../Ledger.ts"
import type { AcceptedOptions, Recorder } from "../Recorder.ts"
import { outcome } from "../Run.ts"
import { Wakeup } from "../Wakeup.ts"
import { type PoolJob, WorkerPool } from "../WorkerPool.ts"
import type { ShutdownPolicy, ShutdownReport } from "./options.ts"

/**
 * How far the wall clock may drift from the scheduler's time before it re-anchors, in ms. Below
 * it, `at` and cron slots may be off by this much; above it, a step is followed.
 */
export const REANCHOR_TOLERANCE_MS = 100

/** On the live clock the actor looks at the wall clock at least this often (SPEC §2), in ms. */
const REANCHOR_EVERY_MS = 60_000

/**
 * The two clocks the scheduler reads (SPEC §2): a monotonic one that delays are measured on,
 * and the wall clock that `at` instants and cron matches name. Both in ms.
 */
export interface Clocks {
  /** Monotonic time in ms (fractional allowed; any origin): never steps. */
  readonly mono: () => number
  /** Wall-clock time, epoch ms: may step (NTP, a suspended VM). */
  readonly wall: () => number
  /**
   * The wall-clock time with its fraction of a ms, on the monotonic clock's basis (live clock:
   * `performance.timeOrigin + performance.now()`), when there is one: the scheduler's time is
   * anchored to it while it agrees with {@link wall}. `wall()` reads whole ms, and an anchor
   * taken from it is up to 1 ms behind: every `at` and cron run then started 0.5 ms late on
   * average.
   */
  readonly preciseWall?: () => number
}

/**
 * The offset from monotonic to scheduler time: from the precise wall reading when it lies in
 * the whole ms `wall()` reads, else from `wall()`. The monotonic clock is read last, so the
 * scheduler's time is never ahead of the reading it was anchored to (never early).
 */
export const anchorOffset = (clocks: Clocks): number => {
  const wall = clocks.wall()
  const precise = clocks.preciseWall?.()
  const mono = clocks.mono()
  return precise !== undefined && precise >= wall && precise < wall + 1
    ? precise - mono
    : wall - mono
}

/** Runs the actor starts in one go before it yields to other fibers and Node's timers. */
const YIELD_EVERY = 512

type Run = Kernel.Run<PoolJob>

/** What the actor is built from. */
export interface ActorConfig {
  readonly kernel: Kernel.Kernel<PoolJob>
  readonly recorder: Recorder
  readonly workers: number
  readonly spans: boolean
  readonly logAnnotations: boolean
  readonly logFailures: boolean
  readonly shutdown: ShutdownPolicy
  readonly shutdownTimeoutMs: number
  /** After the timeout's interruption, how long to wait for runs that ignore it. */
  readonly shutdownGraceMs: number
  /** A run going for longer than this is logged once at Warning; 0 = never. */
  readonly slowRunMs: number
  /** The monotonic and wall clocks the scheduler's time is made of. */
  readonly clocks: Clocks
  /**
   * Sleep with one Node timer (`Wakeup`'s `timer: "node"`) instead of racing the wait against
   * Effect.sleep. Only on the live monotonic clock: under TestClock or a provided Clock, sleeping
   * must go through Effect's Clock.
   */
  readonly timerSleeps: boolean
}

export class TimingActor {
  readonly kernel: Kernel.Kernel<PoolJob>
  readonly pool: WorkerPool<Run>
  readonly recorder: Recorder
  /** No new tasks once set (SchedulerClosed). */
  closed = false
  /** Times the actor has woken from a park or a sleep (a busy-waiting actor would show here). */
  wakes = 0

  private readonly config: ActorConfig
  private readonly clocks: Clocks
  /**
   * Scheduler time = monotonic time + `offset`: epoch ms that move with the monotonic clock and
   * are re-anchored to the wall clock when the two drift apart (see {@link reanchor}).
   */
  private offset: number
  /** Wall-clock steps followed (re-anchorings). */
  reanchors = 0
  /** When the last run started, scheduler ms; `undefined` until one has (health reads it). */
  lastStartedAt: number | undefined = undefined
  /**
   * The health watcher's wake-up (the scheduler that runs one waits on it): a command that moves
   * the earliest slot before its `wakeBefore` (scheduler ms) wakes it once. Its `wakeBefore` stays
   * -Infinity while no watcher waits.
   */
  readonly healthWakeup = new Wakeup()
  /** Finished runs not yet applied, in the order they ended (three parallel lists). */
  // Stryker disable ArrayDeclaration: equivalent, index k is written by onEnd before it is read
  private readonly endedRuns: Array<Run | undefined> = []
  private readonly endedExits: Array<Exit.Exit<unknown, unknown> | undefined> = []
  private readonly endedAt: Array<number> = []
  // Stryker restore ArrayDeclaration
  /**
   * How many of the ended* entries are waiting. The arrays are reused, never truncated:
   * `length = 0` drops their backing stores, and growing them again after every run cost
   * ~450 bytes of garbage per run.
   */
  private ended = 0
  /**
   * Each run's record is written here, not allocated (~200 bytes a run): the recorder reads it
   * at once and copies what it keeps (an object ledger entry, a published occurrence, a record
   * handed to a listener).
   */
  private readonly recordBuffer = Rules.makeRecordBuffer()
  /**
   * What the actor waits on between turns: a finished run wakes it, and so does an insert with a
   * slot before its `wakeBefore` (scheduler ms; -Infinity while it is busy or the pool is full).
   */
  private readonly wakeup: Wakeup
  /** A gauge refresh is queued (see {@link refreshGauges}). */
  private gaugesQueued = false
  /** Runs already reported as slow. */
  private readonly reportedSlow = new WeakSet<Run>()
  /** Set by shutdown: take no more runs; end once nothing is in flight. */
  private stopping = false
  private readonly drained = Deferred.makeUnsafe<void>()
  /** Filled while shutting down. */
  private shutdownLog:
    | {
        finished: Array<Task.TaskId>
        interrupted: Array<Task.TaskId>
        cancelled: Array<Task.TaskId>
      }
    | undefined

  constructor(config: ActorConfig) {
    this.config = config
    this.kernel = config.kernel
    this.recorder = config.recorder
    this.clocks = config.clocks
    this.offset = anchorOffset(config.clocks)
    // Stryker disable next-line StringLiteral: equivalent, any kind but "node" is Effect's timer; "node" saves a fiber race
    this.wakeup = new Wakeup({ timer: config.timerSleeps ? "node" : "effect" })
    this.pool = new WorkerPool<Run>({
      workers: config.workers,
      spans: config.spans,
      logAnnotations: config.logAnnotations,
      logFailures: config.logFailures,
      now: () => this.now(),
      onEnd: (run, exit, finishedAt) => {
        const k = this.ended++
        this.endedRuns[k] = run
        this.endedExits[k] = exit
        this.endedAt[k] = finishedAt
        this.wakeup.wake()
      },
    })
  }

  /** The scheduler's current time, whole epoch ms. */
  now(): number {
    return Math.floor(this.clocks.mono() + this.offset)
  }

  /** The scheduler's current time with its fraction (to size a live sleep to the boundary). */
  private preciseNow(): number {
    return this.clocks.mono() + this.offset
  }

  /**
   * Follows a wall-clock step (SPEC §2): when the wall clock is more than the tolerance away from
   * the scheduler's time, moves the scheduler's time onto it and shifts the kernel's delay-based
   * times by the same amount (`Kernel.shift`), so delays keep their distance and `at`/cron keep
   * their calendar time. Returns the step in ms (0 when none).
   */
  reanchor(): number {
    const delta = Math.round(this.clocks.wall() - this.preciseNow())
    if (Math.abs(delta) <= REANCHOR_TOLERANCE_MS) return 0
    this.offset += delta
    this.kernel.shift(delta)
    this.recorder.shift(delta)
    this.reanchors++
    return delta
  }

  // ---------------------------------------------------------------- commands

  /** What the last {@link accept} did (SPEC §20.3): read it right after the call. */
  outcome: Kernel.Scheduled["outcome"] = "created"

  /**
   * Accepts a task now: its id, or the typed error of its first bad option (nothing changed).
   * With a deduplication key the id is the key's holder, and {@link outcome} says what happened.
   * Wakes the actor if the task is due before the slot it sleeps toward.
   */
  accept(
    options: Kernel.TaskOptions<PoolJob>,
    heard: AcceptedOptions,
  ): Task.TaskId | Errors.ScheduleError {
    const now = this.now()
    this.outcome = "created"
    if (options.dedup !== undefined) {
      // A schedule under a deduplication key may create nothing (SPEC §20.3): it is recorded as
      // an occurrence of the key's holder, and a replaced holder's slot may have moved.
      const done = this.kernel.scheduleDeduplicated(options, now)
      if (!("outcome" in done)) return done
      this.outcome = done.outcome
      if (done.outcome !== "created") {
        this.flush()
        this.nudge()
        return done.id
      }
      return this.accepted(done.id, now, heard)
    }
    const id = this.kernel.schedule(options, now)
    if (typeof id !== "string") return id
    return this.accepted(id, now, heard)
  }

  /** Task `id`, just created at `now`: its ledger row, listeners, and a wake if it is due first. */
  private accepted(id: Task.TaskId, now: number, heard: AcceptedOptions): Task.TaskId {
    this.recorder.ledger.reserveRows(this.kernel.rowCapacity)
    this.recorder.acceptedOn(this.kernel.rowOf(id), now)
    // Listeners hear of the task before the actor may start it.
    if (this.recorder.hearsAccepted) {
      this.recorder.accepted(id, () => this.kernel.info(id) as Task.TaskInfo, heard)
    }
    this.flush()
    this.nudge()
    return id
  }

  /** Pauses a scheduled or running task (SPEC §15); false if it was neither. */
  pause(id: string): boolean {
    const done = this.kernel.pause(id, this.now())
    this.flush()
    // Pausing a half-open breaker's probe lets another held task through as the probe, now.
    this.nudge()
    return done
  }

  /** Resumes a paused task (or withdraws a running task's pending pause); false otherwise. */
  resume(id: string): boolean {
    const done = this.kernel.resume(id, this.now())
    this.flush()
    this.nudge()
    return done
  }

  /**
   * A trigger or retry (SPEC §19): true when accepted, else the kernel's refusal. A retry given
   * `slot` (epoch ms) is of that one slot (SPEC §19.7), decided on what the ledger holds of it.
   */
  manual(action: "trigger" | "retry", id: string, slot?: number): true | Errors.ManualRunRefused {
    const now = this.now()
    const done =
      action === "trigger"
        ? this.kernel.trigger(id, now)
        : slot === undefined
          ? this.kernel.retry(id, now)
          : this.kernel.retry(id, now, { slot, runs: this.slotRuns(id, slot) })
    this.flush()
    this.nudge()
    return done
  }

  /**
   * What the ledger of task `id`'s current generation holds about `slot` (SPEC §19.7): its run
   * with the highest attempt, or `undefined` when none is there (never ran, or dropped by the
   * ledger's bounds). O(records of the task).
   */
  private slotRuns(id: string, slot: number): Rules.SlotRuns | undefined {
    let last: Rules.SlotRuns | undefined
    for (const o of this.history(id)) {
      if ((o.kind !== "ran" && o.kind !== "retried") || o.slot !== slot) continue
      if (last === undefined || o.attempt >= last.lastAttempt)
        last = { lastAttempt: o.attempt, failed: o.outcome.kind !== "succeeded" }
    }
    return last
  }

  /**
   * Changes a live task in place (SPEC §15): true if it was live, or the typed error of a bad
   * change. A change made is recorded in the task's ledger as `updated`, as `record` says.
   */
  update(
    id: string,
    changes: Kernel.UpdateOptions<PoolJob>,
    record: Declared.Change,
  ): boolean | Errors.ScheduleError {
    const at = this.now()
    const done = this.kernel.update(id, changes, at)
    if (done === true) {
      const info = this.kernel.info(id)
      if (info !== undefined) {
        this.recorder.updated(this.kernel.rowOf(id), {
          kind: "updated",
          id: info.id,
          generation: info.generation,
          fields: record.fields,
          cause: record.cause,
          at,
        })
      }
    }
    this.flush()
    this.nudge()
    return done
  }

  /** Pauses, resumes or cancels every task the filter matches; returns the ids it changed. */
  bulk(action: "pause" | "resume" | "cancel", filter: Kernel.TaskFilter): Array<Task.TaskId> {
    const now = this.now()
    let ids: Array<Task.TaskId>
    if (action === "cancel") {
      // Through cancelNow, so each cancel is recorded like a single one.
      ids = []
      for (const info of this.kernel.tasks(filter)) {
        if (this.cancelNow(info.id, false) !== undefined) ids.push(info.id)
      }
    } else {
      ids =
        action === "pause" ? this.kernel.pauseAll(filter, now) : this.kernel.resumeAll(filter, now)
      this.flush()
    }
    this.nudge()
    return ids
  }

  /**
   * Files the kernel's control occurrences of the last step (skipped slots, expiries, pauses,
   * resumes, breaker transitions) with the recorder.
   */
  private flush(): void {
    if (this.kernel.pendingOccurrenceCount === 0) return
    this.recorder.occurred(this.kernel.drainOccurrences(), (id) => this.kernel.rowOf(id))
  }

  /**
   * Refreshes the pending and in-flight gauges after a command, once per burst of commands (a
   * microtask): a schedule call that does not wake the actor must not leave them stale until its
   * next wake, and a loop of a million schedule calls must not pay a gauge update each.
   */
  private refreshGauges(): void {
    if (this.gaugesQueued) return
    this.gaugesQueued = true
    queueMicrotask(() => {
      this.gaugesQueued = false
      this.recorder.gauges(this.kernel.scheduledCount, this.pool.inFlight)
    })
  }

  /** Wakes the actor if the earliest slot moved before the one it sleeps toward. */
  private nudge(): void {
    this.refreshGauges()
    // The earliest slot is looked up only when someone sleeps toward a time (this runs on every
    // schedule call).
    const health = this.healthWakeup
    if (health.wakeBefore !== Number.NEGATIVE_INFINITY) {
      const next = this.kernel.nextSlot()
      if (next !== undefined) health.wakeIfBefore(next)
    }
    if (this.wakeup.wakeBefore !== Number.NEGATIVE_INFINITY) {
      const next = this.kernel.nextSlot()
      if (next !== undefined) this.wakeup.wakeIfBefore(next)
    }
  }

  /**
   * Cancels a task (SPEC §8): true if it was scheduled or running. With `interrupt`, its running
   * run is interrupted too (the current fiber itself when a job cancels its own task).
   */
  cancel(id: string, interrupt: boolean): Effect.Effect<boolean> {
    return Effect.suspend(() => {
      const target = this.cancelNow(id, interrupt)
      if (target === undefined) return Effect.succeed(false)
      if (!target.interrupt) return Effect.succeed(true)
      return Effect.as(
        this.pool.interrupt(
          (run) => run.index === target.row && run.generation === target.generation,
        ),
        true,
      )
    })
  }

  /**
   * The recent occurrences of a task, oldest first: of its current generation, or of
   * `generation` (an earlier one's, while the ledger keeps it; SPEC §27.4).
   */
  history(id: string, generation?: number): ReadonlyArray<Ledger.Occurrence> {
    const info = this.kernel.info(id)
    if (info === undefined || (generation !== undefined && generation > info.generation)) return []
    return this.recorder.ledger.get(this.kernel.rowOf(id), generation ?? info.generation)
  }

  /** The synchronous part of {@link cancel}; `undefined` if the task was not cancellable. */
  private cancelNow(
    id: string,
    interrupt: boolean,
  ): { row: number; generation: number; interrupt: boolean } | undefined {
    const info = this.kernel.info(id)
    if (
      info === undefined ||
      (info.state !== "scheduled" && info.state !== "running" && info.state !== "paused")
    ) {
      return undefined
    }
    const row = this.kernel.rowOf(id)
    const at = this.now()
    this.kernel.cancel(id, at)
    this.flush()
    const interrupting = info.state === "running" && interrupt
    this.recorder.cancelled(row, {
      kind: "cancelled",
      id: info.id,
      generation: info.generation,
      from: info.state,
      scheduledFor: info.scheduledFor,
      interrupted: interrupting,
      at,
    })
    // Cancelling a half-open breaker's probe lets another held task through as the probe, now.
    this.nudge()
    return { row, generation: info.generation, interrupt: interrupting }
  }

  // ---------------------------------------------------------------- the loop

  /** The actor's loop; ends after shutdown once nothing is in flight. */
  readonly run: Effect.Effect<void> = Effect.suspend(() => this.loop())

  private loop(): Effect.Effect<void> {
    const self = this
    const pool = this.pool
    return Effect.gen(function* () {
      /** Runs started since the actor last gave other fibers (and Node's timers) a turn. */
      let taken = 0
      for (;;) {
        // Everything a wake so far could signal is looked at below, in this synchronous step.
        self.wakeup.reset()
        const step = self.reanchor()
        if (step !== 0) {
          yield* Effect.logWarning(
            `tickwork: the wall clock stepped by ${step} ms; at and cron tasks keep their calendar times, delays their distance`,
          )
        }
        if (self.ended > 0) self.applyEnded()
        if (self.stopping && pool.inFlight === 0) {
          Deferred.doneUnsafe(self.drained, Effect.void)
          return
        }
        while (!self.stopping && pool.free > 0 && taken < YIELD_EVERY) {
          // A job that finished synchronously has already ended: apply it before taking the
          // next run, so a retry or next slot it pushes competes in SPEC §4 order, and its
          // records come before anything the next run publishes.
          if (self.ended > 0) self.applyEnded()
          // The clock at each take: a run's startedAt is when it really starts, even deep into
          // a backlog (on the live clock; under TestClock time stands still meanwhile).
          const run = self.kernel.takeDue(self.now())
          // Taking may skip slots (window), expire a one-shot or open a breaker's probe.
          self.flush()
          if (run === undefined) break
          self.recorder.started(run, run.index)
          self.lastStartedAt = run.startedAt
          pool.start(run, run, run.job)
          taken++
        }
        if (taken >= YIELD_EVERY) {
          // Jobs that finish synchronously keep the actor busy; let other fibers run now and then.
          taken = 0
          yield* Effect.yieldNow
          continue
        }
        if (self.ended > 0) continue
        taken = 0
        const now = self.now()
        self.recorder.gauges(self.kernel.scheduledCount, pool.inFlight)
        const free = !self.stopping && pool.free > 0
        const next = free ? self.kernel.nextSlot() : undefined
        // Runs going too long are reported, and the next one to pass the bound is woken for.
        const slow = self.config.slowRunMs > 0 && pool.inFlight > 0 ? self.slowRuns(now) : undefined
        if (slow !== undefined) {
          for (const run of slow.passed) {
            yield* Effect.logWarning(
              `tickwork run still going after ${self.config.slowRunMs} ms (task ${run.id}, started ${new Date(run.startedAt).toISOString()}, attempt ${run.attempt})`,
            )
          }
        }
        const wakeAt = Math.min(
          next ?? Number.POSITIVE_INFINITY,
          slow?.next ?? Number.POSITIVE_INFINITY,
        )
        if (wakeAt === Number.POSITIVE_INFINITY) {
          // Nothing to sleep toward: only a finished run or (with a free worker) any insert wakes us.
          self.wakeup.wakeBefore = free ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY
          yield* self.wakeup.wait()
        } else if (next !== undefined && next <= self.now()) {
          // It fell due while the runs before it were taken (the live clock moves during a
          // turn): take it now. Sleeping here would cost a whole timer tick (>= 1 ms in Node).
          continue
        } else {
          self.wakeup.wakeBefore = free
            ? (next ?? Number.POSITIVE_INFINITY)
            : Number.NEGATIVE_INFINITY
          // On the live clock, sleep to the slot's boundary from the precise time, not from the
          // whole-ms reading: that wakes ~0.5 ms sooner on average, and still never early.
          const ms = self.config.timerSleeps
            ? // On the live clock, wake at least every minute to look at the wall clock.
              Math.min(Math.max(1, Math.ceil(wakeAt - self.preciseNow())), REANCHOR_EVERY_MS)
            : wakeAt - now
          yield* self.wakeup.wait(ms)
        }
        self.wakes++
      }
    })
  }

  /**
   * The runs in flight that passed `slowRunMs` since the last look (each reported once), and the
   * earliest time another one will. O(workers).
   */
  private slowRuns(now: number): { passed: Array<Run>; next: number | undefined } {
    const bound = this.config.slowRunMs
    const passed: Array<Run> = []
    let next: number | undefined
    for (const run of this.pool.running()) {
      if (this.reportedSlow.has(run)) continue
      const at = run.startedAt + bound
      if (at <= now) {
        this.reportedSlow.add(run)
        passed.push(run)
      } else if (next === undefined || at < next) {
        next = at
      }
    }
    return { passed, next }
  }

  /** Applies finished runs in the order they ended. Applying starts no job, so none is added meanwhile. */
  private applyEnded(): void {
    const runs = this.endedRuns
    const exits = this.endedExits
    const at = this.endedAt
    // Applying starts no job, so no run ends meanwhile and `ended` holds still.
    for (let k = 0; k < this.ended; k++) {
      this.apply(runs[k] as Run, exits[k] as Exit.Exit<unknown, unknown>, at[k] as number)
      // Dropped at once: the arrays outlive the runs.
      runs[k] = undefined
      exits[k] = undefined
    }
    this.ended = 0
  }

  private apply(run: Run, exit: Exit.Exit<unknown, unknown>, finishedAt: number): void {
    const record = this.kernel.complete(
      run,
      outcome(exit),
      finishedAt,
      true,
      this.recordBuffer,
    ) as Task.RunRecord
    this.recorder.finished(run.index, record, run.named, run.job.keepResult)
    // A failed slot may pause the task or open its breaker; after the run's own records.
    this.flush()
    const log = this.shutdownLog
    if (log !== undefined) {
      if (record.outcome.kind === "interrupted") log.interrupted.push(record.id)
      else log.finished.push(record.id)
      // Under "cancel" and "interrupt", a retry or next slot pushed during shutdown is pending
      // work too: cancel it like the rest.
      if (this.config.shutdown !== "drain" && record.state === "scheduled") {
        this.cancelNow(record.id, false)
        log.cancelled.push(record.id)
      }
    }
  }

  // ---------------------------------------------------------------- shutdown

  /**
   * Closes the scheduler under its policy and reports what happened. Bounded: past
   * `shutdownTimeout` the runs still going are interrupted, and past the grace after that, the
   * ones that ignore interruption are abandoned (listed in the report) and the close goes on.
   */
  shutdown(): Effect.Effect<ShutdownReport> {
    const self = this
    return Effect.gen(function* () {
      const policy = self.config.shutdown
      self.closed = true
      const log = {
        finished: [] as Array<Task.TaskId>,
        interrupted: [] as Array<Task.TaskId>,
        cancelled: [] as Array<Task.TaskId>,
      }
      self.shutdownLog = log
      if (policy !== "drain") {
        for (const id of self.kernel.taskIds()) {
          if (self.kernel.status(id) === "scheduled" && self.cancelNow(id, false) !== undefined) {
            log.cancelled.push(id)
          }
        }
      }
      self.stopping = true
      self.wakeup.wake()
      if (policy === "interrupt") self.pool.interruptAllUnsafe()
      let done = yield* Effect.timeoutOption(
        Deferred.await(self.drained),
        self.config.shutdownTimeoutMs,
      )
      if (Option.isNone(done)) {
        self.pool.interruptAllUnsafe()
        done = yield* Effect.timeoutOption(
          Deferred.await(self.drained),
          self.config.shutdownGraceMs,
        )
      }
      const abandoned = Option.isNone(done) ? self.pool.running().map((run) => run.id) : []
      // Each task in one list: one that ran during the shutdown is not pending as well.
      const ran = new Set<string>([...log.finished, ...log.interrupted, ...abandoned])
      const pending = self.kernel
        .taskIds()
        .filter((id) => self.kernel.status(id) === "scheduled" && !ran.has(id))
      return {
        policy,
        pending,
        finished: log.finished,
        cancelled: log.cancelled,
        interrupted: log.interrupted,
        abandoned,
      }
    })
  }
}
