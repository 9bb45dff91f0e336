/**
 * @internal
 * The engine behind the Scheduler service: one kernel, one timing actor fiber, and a bounded
 * pool of run fibers.
 *
 * Ground rules:
 * 1. The kernel is mutated only in short synchronous steps (JavaScript runs one at a time, so
 *    each is atomic): accepting and cancelling tasks (by the caller's fiber), taking due runs
 *    and applying outcomes (by the actor). Jobs never run inside a kernel step.
 * 2. The actor takes a run only while fewer than `workers` runs are in flight: the heap is the
 *    queue, and overload shows as lateness, never as unbounded fibers.
 * 3. Each run gets its own fiber, started immediately; when it ends, its exit is reported to
 *    the actor as an event, and the actor applies the lifecycle transition (kernel.complete),
 *    the ledger, metrics and listeners, in the order the runs ended.
 * 4. The actor sleeps on Effect's Clock until the earliest slot, in chunks of at most
 *    2^31-1 ms, or until woken: by a finished run, or by an insert earlier than the slot it
 *    sleeps toward. It never busy-waits and never sleeps past an earlier insert.
 */
import type { Kernel, Task } from "@tickwork/core"
import {
  Cause,
  Context,
  Deferred,
  Effect,
  Exit,
  Fiber,
  Option,
  PubSub,
  References,
  Result,
} from "effect"
import * as Ledger from "../Ledger.ts"
import * as Metrics from "../Metrics.ts"

/** The longest single sleep: timers above 2^31-1 ms overflow and fire at once in Node. */
export const MAX_SLEEP_MS = 2 ** 31 - 1

/** The live monotonic clock in fractional ms (the scheduler's whole-ms clock floors it). */
const preciseNow = (): number => performance.timeOrigin + performance.now()

/** Runs the actor starts in one go before it yields to other fibers and Node's timers. */
const YIELD_EVERY = 512

/** A job as the kernel holds it. */
export interface Job {
  /** The job when it is an Effect; otherwise `make` builds one per run. */
  readonly effect: Effect.Effect<unknown, unknown> | undefined
  readonly make: ((run: Task.RunInfo) => Effect.Effect<unknown, unknown>) | undefined
  /** Run timeout in ms; 0 = none. */
  readonly timeoutMs: number
  /**
   * What the run's fiber sees: the scheduler layer's services with the scheduling caller's
   * context on top (merged once, when the task is accepted, not at every run).
   */
  readonly context: Context.Context<never>
}

/** The failure a run's timeout raises; private, so no job can raise it by accident. */
export class RunTimedOut {
  readonly afterMs: number
  constructor(afterMs: number) {
    this.afterMs = afterMs
  }
}

/**
 * What the inspection layer hears, in the order things happen. Each callback runs inside the
 * actor's or the caller's synchronous step: it must be quick and must not throw.
 */
export interface Listener {
  /** A task was accepted; `options` are the schedule options it was given (job included). */
  readonly accepted?: (id: Task.TaskId, info: Task.TaskInfo, options: AcceptedOptions) => void
  readonly started?: (run: Task.RunInfo) => void
  readonly completed?: (record: Task.RunRecord) => void
  readonly cancelled?: (occurrence: Ledger.Cancelled) => void
}

/** The options a task was accepted with, as the listener sees them. */
export interface AcceptedOptions {
  readonly schedule: unknown
  readonly priority?: Task.Priority | undefined
  readonly retry?: { readonly maxRetries?: number } | undefined
  readonly missedRuns?: string | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
}

/** How closing the scheduler treats pending and running work. */
export type ShutdownPolicy = "drain" | "cancel" | "interrupt"

/** What closing the scheduler did. */
export interface ShutdownReport {
  readonly policy: ShutdownPolicy
  /** Tasks still `scheduled` when it closed (never started; `drain` leaves them so). */
  readonly pending: ReadonlyArray<Task.TaskId>
  /** Runs that finished during the shutdown, with any outcome but `interrupted`. */
  readonly finished: ReadonlyArray<Task.TaskId>
  /** Tasks the shutdown cancelled (pending ones, under `cancel` and `interrupt`). */
  readonly cancelled: ReadonlyArray<Task.TaskId>
  /** Runs interrupted by the shutdown (policy `interrupt`, or past `shutdownTimeout`). */
  readonly interrupted: ReadonlyArray<Task.TaskId>
}

export interface EngineConfig {
  readonly kernel: Kernel.Kernel<Job>
  readonly workers: number
  readonly spans: boolean
  readonly logAnnotations: boolean
  readonly ledgerPerTask: number
  readonly ledgerFinalTasks: number
  readonly streamCapacity: number
  readonly shutdown: ShutdownPolicy
  readonly shutdownTimeoutMs: number
  readonly listener: Listener | undefined
}

interface Running {
  readonly run: Kernel.Run<Job>
  readonly fiber: Fiber.Fiber<unknown, unknown>
}

export class Engine {
  readonly kernel: Kernel.Kernel<Job>
  readonly ledger: Ledger.Store
  readonly occurrences: PubSub.PubSub<Ledger.Occurrence>
  /** No new tasks once set (SchedulerClosed). */
  closed = false

  private readonly config: EngineConfig
  /** The layer's services: the Clock every read uses, the metric registry, the tracer. */
  private readonly context: Context.Context<never>
  /** The runtime's time source, epoch ms (see `Scheduler.make`). */
  private readonly clock: () => number
  /** Runs in flight and their fibers, by worker slot: at most `workers` (ground rule 2). */
  private readonly slotRuns: Array<Kernel.Run<Job> | undefined>
  private readonly slotFibers: Array<Fiber.Fiber<unknown, unknown> | undefined>
  /** Indices of free entries in `slots`. */
  private readonly freeSlots: Array<number>
  /** One exit observer per worker slot, made once: a run's fiber reports through its slot's. */
  private readonly observers: Array<(exit: Exit.Exit<unknown, unknown>) => void>
  /** Finished runs not yet applied by the actor, in the order they ended (three parallel lists). */
  private readonly endedRuns: Array<Kernel.Run<Job>> = []
  private readonly endedExits: Array<Exit.Exit<unknown, unknown>> = []
  private readonly endedAt: Array<number> = []
  /** The actor's wake-up, while it is parked. */
  private parked: ((effect: Effect.Effect<void>) => void) | undefined = undefined
  /** A wake that came while the actor was busy: its next park returns at once. */
  private wakeRequested = false
  /** Inserts with a slot before this wake the actor; -Infinity while it is busy or the pool is full. */
  private wakeBefore = Number.NEGATIVE_INFINITY
  /**
   * Sleep with one Node timer inside the park instead of racing the park against Effect.sleep
   * (two fibers and a timer per sleep). Only when the scheduler reads the live monotonic clock:
   * under TestClock or a provided Clock, sleeping must go through Effect's Clock.
   */
  private readonly timerSleeps: boolean
  /** Times the actor has woken from a park or a sleep (a busy-waiting actor would show here). */
  wakes = 0
  /** Set by shutdown: take no more runs; end once nothing is in flight. */
  private stopping = false
  private readonly drained: Deferred.Deferred<void>
  /** Filled while shutting down. */
  private shutdownLog:
    | {
        finished: Array<Task.TaskId>
        interrupted: Array<Task.TaskId>
        cancelled: Array<Task.TaskId>
      }
    | undefined

  constructor(
    config: EngineConfig,
    context: Context.Context<never>,
    clock: () => number,
    timerSleeps: boolean,
    occurrences: PubSub.PubSub<Ledger.Occurrence>,
    drained: Deferred.Deferred<void>,
  ) {
    this.config = config
    this.kernel = config.kernel
    this.context = context
    this.clock = clock
    this.timerSleeps = timerSleeps
    this.ledger = new Ledger.Store(config.ledgerPerTask, config.ledgerFinalTasks)
    this.occurrences = occurrences
    this.drained = drained
    this.slotRuns = new Array(config.workers).fill(undefined)
    this.slotFibers = new Array(config.workers).fill(undefined)
    this.freeSlots = Array.from({ length: config.workers }, (_, k) => config.workers - 1 - k)
    this.observers = Array.from({ length: config.workers }, (_, slot) => (exit) => {
      const run = this.slotRuns[slot] as Kernel.Run<Job>
      this.slotRuns[slot] = undefined
      this.slotFibers[slot] = undefined
      this.freeSlots.push(slot)
      this.endedRuns.push(run)
      this.endedExits.push(exit)
      this.endedAt.push(this.now())
      this.wake()
    })
  }

  /** The current time on the layer's Clock, epoch ms. */
  now(): number {
    return this.clock()
  }

  /** Runs in flight. */
  get inFlight(): number {
    return this.config.workers - this.freeSlots.length
  }

  /** The runs in flight. */
  private running(): Array<Running> {
    const out: Array<Running> = []
    for (let k = 0; k < this.slotRuns.length; k++) {
      const run = this.slotRuns[k]
      if (run !== undefined)
        out.push({ run, fiber: this.slotFibers[k] as Fiber.Fiber<unknown, unknown> })
    }
    return out
  }

  // ---------------------------------------------------------------- the actor

  /** The timing actor's loop; ends after shutdown once nothing is in flight. */
  readonly actor: Effect.Effect<void> = Effect.suspend(() => this.loop())

  private loop(): Effect.Effect<void> {
    const self = this
    return Effect.gen(function* () {
      /** Runs started since the actor last gave other fibers (and Node's timers) a turn. */
      let taken = 0
      for (;;) {
        self.wakeRequested = false
        self.wakeBefore = Number.NEGATIVE_INFINITY
        if (self.endedRuns.length > 0) self.applyEvents()
        if (self.stopping && self.inFlight === 0) {
          yield* Deferred.succeed(self.drained, undefined)
          return
        }
        while (!self.stopping && self.inFlight < self.config.workers && taken < YIELD_EVERY) {
          // A job that finished synchronously has already ended: apply it before taking the
          // next run, so a retry or next slot it pushes competes in SPEC §4 order, and its
          // records come before anything the next run publishes.
          if (self.endedRuns.length > 0) self.applyEvents()
          // The clock at each take: a run's startedAt is when it really starts, even deep into
          // a backlog (on the live clock; under TestClock time stands still meanwhile).
          const run = self.kernel.takeDue(self.now())
          if (run === undefined) break
          self.start(run)
          taken++
        }
        if (taken >= YIELD_EVERY) {
          // Jobs that finish synchronously keep the actor busy; let other fibers run now and then.
          taken = 0
          yield* Effect.yieldNow
          continue
        }
        if (self.endedRuns.length > 0) continue
        taken = 0
        const now = self.now()
        self.updateGauges()
        const free = !self.stopping && self.inFlight < self.config.workers
        const next = free ? self.kernel.nextSlot() : undefined
        if (next === undefined) {
          // Nothing to sleep toward: only a finished run or (with a free worker) any insert wakes us.
          self.wakeBefore = free ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY
          yield* self.park()
        } else if (next <= self.now()) {
          // It fell due while the runs before it were taken (the live clock moves during a
          // turn): take it now. Sleeping here would cost a whole timer tick (>= 1 ms in Node).
          continue
        } else {
          self.wakeBefore = next
          // On the live clock, sleep to the slot's boundary from the precise time, not from the
          // whole-ms reading: that wakes ~0.5 ms sooner on average, and still never early.
          const ms = Math.min(
            self.timerSleeps ? Math.max(1, Math.ceil(next - preciseNow())) : next - now,
            MAX_SLEEP_MS,
          )
          yield* self.timerSleeps ? self.park(ms) : Effect.raceFirst(self.park(), Effect.sleep(ms))
        }
        self.wakes++
      }
    })
  }

  /**
   * Suspends the actor until {@link wake} — or, given `ms`, until a Node timer fires after `ms`
   * (only on the live monotonic clock; see `timerSleeps`). Returns at once if a wake came while
   * the actor was busy.
   */
  private park(ms?: number): Effect.Effect<void> {
    return Effect.callback<void>((resume) => {
      if (this.wakeRequested) {
        this.wakeRequested = false
        resume(Effect.void)
        return
      }
      this.parked = resume
      const timer =
        ms === undefined
          ? undefined
          : setTimeout(() => {
              if (this.parked === resume) this.parked = undefined
              resume(Effect.void)
            }, ms)
      return Effect.sync(() => {
        if (timer !== undefined) clearTimeout(timer)
        if (this.parked === resume) this.parked = undefined
      })
    })
  }

  /** Wakes the actor (or makes its next park return at once). */
  wake(): void {
    const resume = this.parked
    if (resume !== undefined) {
      this.parked = undefined
      resume(Effect.void)
    } else {
      this.wakeRequested = true
    }
  }

  /** Called after an insert: wakes the actor if the earliest slot is before the one it sleeps toward. */
  inserted(): void {
    if (this.wakeBefore === Number.NEGATIVE_INFINITY) return
    const next = this.kernel.nextSlot()
    if (next !== undefined && next < this.wakeBefore) this.wake()
  }

  /**
   * Starts a run on its own fiber, which begins at once (a job that finishes synchronously
   * reports before this returns); its exit comes back as an event.
   */
  private start(run: Kernel.Run<Job>): void {
    const job = run.job
    Metrics.lateness.updateUnsafe(run.startedAt - run.scheduledFor, this.context)
    this.config.listener?.started?.(run)
    let effect: Effect.Effect<unknown, unknown>
    if (job.effect !== undefined) {
      effect = job.effect
    } else {
      try {
        effect = (job.make as (run: Task.RunInfo) => Effect.Effect<unknown, unknown>)(run)
      } catch (defect) {
        effect = Effect.die(defect)
      }
    }
    if (job.timeoutMs > 0) {
      const afterMs = job.timeoutMs
      effect = Effect.timeoutOrElse(effect, {
        duration: afterMs,
        orElse: () => Effect.fail(new RunTimedOut(afterMs)),
      })
    }
    if (this.config.spans) {
      effect = effect.pipe(
        Effect.withSpan(
          "tickwork.run",
          {
            attributes: {
              "tickwork.task": run.id,
              "tickwork.slot": run.scheduledFor,
              "tickwork.attempt": run.attempt,
              "tickwork.run_number": run.runNumber,
              "tickwork.lateness_ms": run.startedAt - run.scheduledFor,
            },
          },
          // The stack would point into the engine, and capturing it costs ~4 µs per run.
          { captureStackTrace: false },
        ),
      )
    }
    let context = job.context
    if (this.config.logAnnotations) {
      // One context copy per run, instead of Effect.annotateLogs's update-and-restore.
      const annotations = Context.get(context, References.CurrentLogAnnotations)
      context = Context.add(context, References.CurrentLogAnnotations, {
        ...annotations,
        "tickwork.task": run.id,
        "tickwork.slot": run.scheduledFor,
        "tickwork.attempt": run.attempt,
      })
    }
    const slot = this.freeSlots.pop() as number
    this.slotRuns[slot] = run
    const fiber = Effect.runForkWith(context)(effect)
    this.slotFibers[slot] = fiber
    // Called at once when the job finished synchronously.
    fiber.addObserver(this.observers[slot] as (exit: Exit.Exit<unknown, unknown>) => void)
  }

  /** Applies finished runs in the order they ended. Applying starts no job, so none is added meanwhile. */
  private applyEvents(): void {
    const runs = this.endedRuns
    const exits = this.endedExits
    const at = this.endedAt
    for (let k = 0; k < runs.length; k++) {
      this.apply(
        runs[k] as Kernel.Run<Job>,
        exits[k] as Exit.Exit<unknown, unknown>,
        at[k] as number,
      )
    }
    runs.length = 0
    exits.length = 0
    at.length = 0
  }

  private apply(run: Kernel.Run<Job>, exit: Exit.Exit<unknown, unknown>, finishedAt: number): void {
    const outcome = classify(exit)
    const record = this.kernel.complete(run, outcome, finishedAt, true) as Task.RunRecord
    Metrics.runsByOutcome[outcome.kind].updateUnsafe(1, this.context)
    if (record.merged !== undefined) {
      // Merged into this run before it started, so recorded before it.
      const merged = Ledger.merged(record, record.merged)
      this.ledger.add(run.index, merged, false)
      PubSub.publishUnsafe(this.occurrences, merged)
    }
    const dropped = record.dropped
    const ran = Ledger.ran(record)
    this.ledger.add(run.index, ran, record.continuation === "final")
    PubSub.publishUnsafe(this.occurrences, ran)
    if (dropped !== undefined) {
      // Decided when the run ended, so recorded after it.
      const missed = Ledger.missed(record, dropped)
      this.ledger.add(run.index, missed, false)
      PubSub.publishUnsafe(this.occurrences, missed)
    }
    this.config.listener?.completed?.(record)
    const log = this.shutdownLog
    if (log !== undefined) {
      if (outcome.kind === "interrupted") log.interrupted.push(record.id)
      else log.finished.push(record.id)
      // Under "cancel" and "interrupt", a retry or next slot pushed during shutdown is pending
      // work too: cancel it like the rest.
      if (this.config.shutdown !== "drain" && record.state === "scheduled") {
        this.cancelNow(record.id, false)
        log.cancelled.push(record.id)
      }
    }
  }

  private updateGauges(): void {
    const stats = this.kernel.stats()
    Metrics.pending.updateUnsafe(stats.scheduled, this.context)
    Metrics.running.updateUnsafe(this.inFlight, this.context)
  }

  // ---------------------------------------------------------------- calls from users

  /** The recent occurrences of a task, oldest first. */
  history(id: string): ReadonlyArray<Ledger.Occurrence> {
    const info = this.kernel.info(id)
    return info === undefined ? [] : this.ledger.get(this.kernel.rowOf(id), info.generation)
  }

  /** Cancels a task (SPEC §8); with `interrupt`, also interrupts its running fiber and waits for it. */
  cancel(id: string, interrupt: boolean): Effect.Effect<boolean> {
    return Effect.suspend(() => {
      const fibers = this.cancelNow(id, interrupt)
      if (fibers === undefined) return Effect.succeed(false)
      return fibers.length === 0
        ? Effect.succeed(true)
        : Effect.as(Fiber.interruptAll(fibers), true)
    })
  }

  /**
   * The synchronous part of {@link cancel}: cancels the task and records it; returns the fibers
   * to interrupt (empty unless `interrupt` and running), or `undefined` if it was not cancellable.
   */
  private cancelNow(
    id: string,
    interrupt: boolean,
  ): Array<Fiber.Fiber<unknown, unknown>> | undefined {
    const info = this.kernel.info(id)
    if (info === undefined || (info.state !== "scheduled" && info.state !== "running")) {
      return undefined
    }
    const row = this.kernel.rowOf(id)
    this.kernel.cancel(id, this.now())
    const fibers: Array<Fiber.Fiber<unknown, unknown>> = []
    if (info.state === "running" && interrupt) {
      for (const r of this.running()) {
        if (r.run.generation === info.generation && r.run.id === info.id) fibers.push(r.fiber)
      }
    }
    const occurrence: Ledger.Cancelled = {
      kind: "cancelled",
      id: info.id,
      generation: info.generation,
      from: info.state,
      scheduledFor: info.scheduledFor,
      interrupted: fibers.length > 0,
      at: this.now(),
    }
    this.ledger.add(row, occurrence, true)
    PubSub.publishUnsafe(this.occurrences, occurrence)
    this.config.listener?.cancelled?.(occurrence)
    return fibers
  }

  // ---------------------------------------------------------------- shutdown

  /** Closes the scheduler under its policy and reports what happened. Idempotent. */
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
      self.wake()
      if (policy === "interrupt") yield* self.interruptAll()
      const done = yield* Effect.timeoutOption(
        Deferred.await(self.drained),
        self.config.shutdownTimeoutMs,
      )
      if (Option.isNone(done)) {
        yield* self.interruptAll()
        yield* Deferred.await(self.drained)
      }
      const pending = self.kernel.taskIds().filter((id) => self.kernel.status(id) === "scheduled")
      return {
        policy,
        pending,
        finished: log.finished,
        cancelled: log.cancelled,
        interrupted: log.interrupted,
      }
    })
  }

  private interruptAll(): Effect.Effect<void> {
    return Effect.suspend(() => Fiber.interruptAll(this.running().map((r) => r.fiber)))
  }
}

/** The outcome of a run's exit (SPEC §6). */
export const classify = (exit: Exit.Exit<unknown, unknown>): Task.Outcome => {
  if (Exit.isSuccess(exit)) {
    return exit.value === undefined ? succeeded : { kind: "succeeded", value: exit.value }
  }
  const cause = exit.cause
  const error = Cause.findErrorOption(cause)
  if (Option.isSome(error)) {
    return error.value instanceof RunTimedOut
      ? { kind: "timed-out", afterMs: error.value.afterMs }
      : { kind: "failed", error: error.value }
  }
  const defect = Cause.findDefect(cause)
  if (Result.isSuccess(defect)) return { kind: "defect", defect: defect.success }
  return { kind: "interrupted" }
}

const succeeded: Task.Outcome = { kind: "succeeded" }
