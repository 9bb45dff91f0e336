/**
 * The `DurableScheduler` service: tasks kept as data in a {@link TaskStore.TaskStore}, run by
 * named {@link Handler}s on the runtime's bounded pool, surviving restarts and shared by several
 * processes. One execution path serves both stores:
 *
 * 1. **Claim.** A dispatcher fiber sleeps until the store's earliest due time (a local timer,
 *    woken by this process's inserts) or a short poll (other processes' inserts), then claims
 *    due rows — as many as it has free workers — each leased to this process under a new fence.
 * 2. **Decide late slots.** A grid task (fixed rate, cron) whose first delivery is late applies
 *    the catch-up window (slots older than it are skipped and recorded) and, under `coalesce`,
 *    runs once for the slots that passed. Every rule is the core's.
 * 3. **Run.** Each claimed row becomes a one-shot task of the runtime `Scheduler` (its bounded
 *    pool, timeouts, lateness metric, spans and log annotations), running the handler with the
 *    payload decoded by its schema and a {@link Handler.DurableRun}: `(id, slot, attempt)`,
 *    the delivery count and the fence.
 * 4. **Complete.** The outcome goes through the core's lifecycle machine, missed-run policy and
 *    retry backoff; the next slot, attempt and state, the `(task id, slot)` ledger row and any
 *    skipped/coalesced slots are written in one transaction, applied only if the row's fence is
 *    still the one it was claimed with. A late completion from a lost lease is rejected and
 *    recorded (`fenced-out`). Long runs renew their lease.
 *
 * **At least once.** A run in flight when its process dies runs again: on the same SQLite file
 * when it is reopened, on PostgreSQL when its lease expires (another process takes it). Handlers
 * get `run.key` (`"<id>@<slot>"`) and `run.delivery` to make their side effects idempotent.
 *
 * The layer also provides the runtime `Scheduler` it runs on, so in-memory tasks (closures) can
 * share the same pool.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { Errors, Kernel, Random, Retry, Schedule, Task, Time } from "@tickwork/core"
import { Scheduler } from "@tickwork/runtime"
import {
  Cause,
  Clock,
  Context,
  Effect,
  Exit,
  Fiber,
  Latch,
  Layer,
  Metric,
  Option,
  PubSub,
  Queue,
  Result,
  Schema,
  type Scope,
  Stream,
} from "effect"
import {
  type DurableScheduleError,
  InvalidPayload,
  PayloadDecodeError,
  StoreError,
  type StoreFailure,
  UnknownHandler,
} from "./Errors.ts"
import type * as Handler from "./Handler.ts"
import * as Ids from "./internal/ids.ts"
import * as Rules from "./internal/rules.ts"
import * as Spec from "./Spec.ts"
import {
  type Change,
  type ChangeResult,
  type Counts,
  type EventEntry,
  type NewTask,
  type RunEntry,
  storeError,
  type TaskRow,
  TaskStore,
} from "./TaskStore.ts"

/**
 * What to schedule: a registered handler (the object, whose payload type then checks the
 * payload, or its name) with its payload, a schedule that can be stored, and the same policies
 * as an in-memory task.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableTaskOptions<H extends Handler.Any | string = Handler.Any | string>
  extends Omit<Kernel.TaskOptions<unknown>, "job" | "id"> {
  readonly handler: H
  readonly payload: Handler.PayloadOf<H>
  /** A caller-supplied id; a random UUID when absent. */
  readonly id?: string | undefined
  /** Each run is interrupted after this long and reported `timed-out`. */
  readonly timeout?: Time.DurationInput | undefined
}

/**
 * A durable task, as stored.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableTaskInfo {
  readonly id: Task.TaskId
  readonly generation: number
  readonly state: Task.TaskState
  readonly handler: string
  /** The payload in its encoded (JSON) form. */
  readonly payload: unknown
  readonly schedule: Spec.ScheduleSpec
  readonly priority: Task.Priority
  /** The grid slot being worked on. */
  readonly slot: number
  /** When the pending attempt is due (the slot, or a retry's time). */
  readonly scheduledFor: number
  readonly attempt: number
  /** Runs whose completion committed. */
  readonly runNumber: number
  readonly consecutiveFailures: number
  /** Claims of the pending (slot, attempt): more than 1 after a crash or a lost lease. */
  readonly deliveries: number
  /** The process holding the run, while `running`. */
  readonly leaseOwner: string | null
  readonly lastError: string | null
  readonly finishedAt: number | null
}

/**
 * A run recorded in the ledger.
 *
 * @category models
 * @since 0.1.0
 */
export interface Ran extends RunEntry {
  readonly kind: "ran"
}

/**
 * A ledger record: a run that completed, or an event (skipped, coalesced, fenced-out,
 * cancelled, recovered, released).
 *
 * @category models
 * @since 0.1.0
 */
export type DurableOccurrence = Ran | EventEntry

/**
 * Store counts and this process's figures.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableStats {
  /** Tasks by state, in the whole store. */
  readonly tasks: Counts
  /** This process's lease owner name. */
  readonly owner: string
  /** Runs this process holds (claimed, running or completing). */
  readonly inFlight: number
  /** Rows this process claimed. */
  readonly claimed: number
  /** Runs this process completed (committed). */
  readonly completed: number
  /** Completions of this process rejected by their fence. */
  readonly fencedOut: number
  /** Runs this process handed back unfinished when closing. */
  readonly released: number
  /** Runs cut off by a crash that this process made due again at start. */
  readonly recovered: number
  /**
   * Runs this process interrupted because it had not renewed their lease for a whole lease
   * period (it stalled, or the store did not answer): another process may hold them by now.
   */
  readonly leasesLost: number
  /**
   * Runs that finished more than a lease ago and are still not committed (the store does not
   * answer): each is logged once, and counted in the `tickwork_durable_uncommitted_runs_total`
   * metric. Their commit keeps being retried; 0 when the store works.
   */
  readonly uncommitted: number
  /** Failed store operations of this process (each outage is logged once, not each failure). */
  readonly storeFailures: number
  readonly closed: boolean
}

/**
 * The durable scheduler's operations.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableSchedulerShape {
  /** The name this process leases runs under. */
  readonly owner: string
  /**
   * Validates and stores a task. Fails with the typed error of the first bad field (core
   * errors, `UnknownHandler`, `InvalidPayload`, `NotDurable`), `DuplicateTaskId`,
   * `SchedulerClosed` or `StoreError`; then nothing was written.
   */
  readonly schedule: <H extends Handler.Any | string>(
    options: DurableTaskOptions<H>,
  ) => Effect.Effect<Task.TaskId, DurableScheduleError>
  /** Stores several tasks in one transaction: all, or none (the first error). */
  readonly scheduleAll: (
    options: ReadonlyArray<DurableTaskOptions>,
  ) => Effect.Effect<ReadonlyArray<Task.TaskId>, DurableScheduleError>
  /**
   * Cancels a scheduled or running task: true if it was one of those. A running run finishes
   * (its run is recorded, the task stays cancelled), unless `interrupt` is set and it runs in
   * this process: then its fiber is interrupted.
   */
  readonly cancel: (
    id: string,
    options?: { readonly interrupt?: boolean },
  ) => Effect.Effect<boolean, StoreError>
  /** The task's state, or `"unknown"`. */
  readonly status: (id: string) => Effect.Effect<Task.TaskState | "unknown", StoreError>
  readonly info: (id: string) => Effect.Effect<Option.Option<DurableTaskInfo>, StoreError>
  /** The task's runs and events, oldest first (ledger rows are kept for `retention`). */
  readonly ledger: (id: string) => Effect.Effect<ReadonlyArray<DurableOccurrence>, StoreError>
  /** Every run and event this process records, as it commits. */
  readonly occurrences: Stream.Stream<DurableOccurrence>
  readonly stats: Effect.Effect<DurableStats, StoreError>
  /** Wakes the dispatcher now (e.g. after writing to the store from elsewhere). */
  readonly poll: Effect.Effect<void>
  /**
   * Whether there is nothing to do right now: the dispatcher waits (for the next due time, a
   * poll or an insert) and this process holds no run. Tests under `TestClock` can yield until
   * it holds before moving the clock (work started by a test's own calls is not awaited by
   * `TestClock.adjust`, only work woken by the clock).
   */
  readonly idle: Effect.Effect<boolean>
}

/**
 * The DurableScheduler service.
 *
 * @category services
 * @since 0.1.0
 */
export class DurableScheduler extends Context.Service<DurableScheduler, DurableSchedulerShape>()(
  "@tickwork/durable/DurableScheduler",
) {}

/**
 * Layer options.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableSchedulerOptions<H extends Handler.Any = Handler.Any> {
  /** The handlers this process can run; it claims only tasks naming one of them. */
  readonly handlers: ReadonlyArray<H>
  /**
   * `false`: schedule only — this process writes tasks but never claims runs (an API process
   * beside worker processes). Default true.
   */
  readonly claim?: boolean | undefined
  /** Runs in flight at most (the runtime pool's size, and the claims held). Default 4. */
  readonly workers?: number | undefined
  /**
   * How long a claim holds a run before other processes may take it; renewed every third of
   * it while the run goes on. A run whose lease this process has not renewed for a whole lease
   * (measured on the monotonic clock: a stalled or suspended process, a store that does not
   * answer) is interrupted as lost. At least {@link MIN_LEASE_MS} (1 second); default 30
   * seconds.
   */
  readonly lease?: Time.DurationInput | undefined
  /**
   * How often to look for work the local timer cannot know of (other processes' inserts).
   * Default 200 ms for a shared store, none for SQLite (one process).
   */
  readonly pollInterval?: Time.DurationInput | false | undefined
  /**
   * The catch-up window (max lateness): a grid task's slots older than this when it is claimed
   * are skipped (recorded) instead of run. Default 1 day; `false` for no window.
   */
  readonly catchUpWindow?: Time.DurationInput | false | undefined
  /** Rows claimed per statement at most. Default 100. */
  readonly claimBatch?: number | undefined
  /**
   * What closing does with the runs this process holds. Under every policy no new run starts:
   * claims whose run has not started are handed back to the store at once (`released`, due
   * again for any process). `"drain"` (default) and `"cancel"` let running runs finish for up
   * to `shutdownTimeout`, then interrupt and hand back the rest; `"interrupt"` interrupts them
   * and hands them back at once. The tasks themselves are never cancelled: they belong to the
   * store, and another process runs them. Default: the runtime's `shutdown`, else `"drain"`;
   * it is also the policy of the runtime pool's in-memory tasks unless `runtime.shutdown` is set.
   */
  readonly shutdown?: Scheduler.ShutdownPolicy | undefined
  /** How long closing waits for runs in flight before interrupting and releasing them. Default 30 s. */
  readonly shutdownTimeout?: Time.DurationInput | undefined
  /** How long ledger rows and final tasks are kept. Default 7 days; `false` keeps them. */
  readonly retention?: Time.DurationInput | false | undefined
  /** Seed for retry jitter. Default 0. */
  readonly seed?: number | undefined
  /** The lease owner name. Default `"<host>:<pid>:<random>"`. */
  readonly owner?: string | undefined
  /** Buffer of the occurrence stream per subscriber. Default 10,000. */
  readonly streamCapacity?: number | undefined
  /** Options of the runtime `Scheduler` the runs go through (spans, log annotations, …). */
  readonly runtime?: Omit<Scheduler.SchedulerOptions, "workers"> | undefined
}

/**
 * The shortest `lease`: 1 second. A lease is renewed every third of it, so each renewal has
 * about 660 ms to get through the event loop and a store round trip before the run counts as
 * lost. On a loaded 2-core machine, garbage collection, a busy event loop and a database
 * under load reach hundreds of milliseconds; leases of tens of milliseconds lose healthy runs
 * to other processes (a 30 ms lease ran 24-28 of 300 tasks twice; 1 ms started one task 444
 * times). Leases in production should be far longer (the default is 30 s): a lease is how long
 * a stalled process's runs wait before another process takes them.
 *
 * @category models
 * @since 0.1.0
 */
export const MIN_LEASE_MS = 1_000

/** The longest single sleep: Node timers overflow above 2^31-1 ms. */
const MAX_SLEEP_MS = 2 ** 31 - 1

/** Finished runs not committed within a lease: counted here, and logged once each. */
const uncommittedRuns = Metric.counter("tickwork_durable_uncommitted_runs_total", {
  description:
    "runs that finished but were not committed within a lease (the store did not answer)",
})
const DAY = 86_400_000

const optionError = (field: string, value: unknown, rule: string) =>
  new Errors.InvalidOption({ field, value, message: `${field} ${rule}, got ${Errors.show(value)}` })

const positiveInt = (field: string, value: number | undefined, fallback: number) => {
  const v = value ?? fallback
  return Number.isSafeInteger(v) && v >= 1
    ? v
    : optionError(field, value, "must be an integer >= 1")
}

const millis = (
  field: string,
  input: Time.DurationInput | false | undefined,
  fallback: number,
  positive = false,
): number | Errors.InvalidOption => {
  if (input === false) return Number.POSITIVE_INFINITY
  if (input === undefined) return fallback
  const ms = Time.toMillisWith(input, (reason) => optionError(field, input, reason))
  if (typeof ms === "number" && positive && ms === 0)
    return optionError(field, input, "must be positive")
  return ms
}

/** The field path of a schema issue's first problem, e.g. `["to"]`. */
const issuePath = (issue: unknown): ReadonlyArray<PropertyKey> => {
  if (typeof issue !== "object" || issue === null) return []
  const i = issue as {
    path?: ReadonlyArray<PropertyKey>
    issue?: unknown
    issues?: ReadonlyArray<unknown>
  }
  if (Array.isArray(i.path) && i.issue !== undefined) return [...i.path, ...issuePath(i.issue)]
  if (Array.isArray(i.issues) && i.issues.length > 0) return issuePath(i.issues[0])
  if (i.issue !== undefined) return issuePath(i.issue)
  return []
}

const at = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let v = value
  for (const key of path) {
    if (typeof v !== "object" || v === null) return undefined
    v = (v as Record<PropertyKey, unknown>)[key]
  }
  return v
}

const fieldOf = (path: ReadonlyArray<PropertyKey>): string =>
  `payload${path.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("")}`

/** One run this process holds. */
interface Held {
  /** The row as claimed (slot moved by a claim-time decision). */
  readonly row: TaskRow
  readonly runtimeId: string
  started: boolean
  /** The runtime reported its end. */
  finished: boolean
  /** Its lease was lost: the completion will be fenced out. */
  lost: boolean
  /** Closing: hand it back instead of completing it. */
  releasing: boolean
  /** Monotonic ms when the lease was last known good: when its claim or last renewal was sent. */
  renewedAt: number
  /** Monotonic ms when the run finished (its commit is pending); -1 while it runs. */
  finishedAt: number
  /** The watchdog reported it finished but uncommitted. */
  overdue: boolean
}

interface Finished {
  readonly held: Held
  /** The run's end; `undefined` for a run that never started and is handed back. */
  readonly record: Task.RunRecord | undefined
}

/**
 * Builds a durable scheduler in the current scope on the {@link TaskStore.TaskStore} in context.
 * At start, an exclusive store (SQLite) makes the runs a crash cut off due again; then the
 * dispatcher starts claiming. Closing the scope stops claiming, hands back claims whose run has
 * not started, lets running runs finish for up to `shutdownTimeout` (policy `interrupt`: not at
 * all), then interrupts the rest and hands them back to the store, due at once for another
 * process.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <H extends Handler.Any>(
  options: DurableSchedulerOptions<H>,
): Effect.Effect<
  { readonly durable: DurableSchedulerShape; readonly runtime: Scheduler.SchedulerShape },
  Errors.InvalidOption | StoreError,
  TaskStore | Handler.Services<H> | Scope.Scope
> =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const clock = yield* Clock.Clock
    const now = () => clock.currentTimeMillisUnsafe()

    // ---------------------------------------------------------------- options
    const handlers = new Map<string, Handler.Any>()
    if (!Array.isArray(options?.handlers)) {
      return yield* optionError("handlers", options?.handlers, "must be an array of handlers")
    }
    for (const h of options.handlers) {
      if (typeof h?.name !== "string" || h.name === "" || typeof h.run !== "function") {
        return yield* optionError("handlers", h, "must hold handlers made by Handler.make")
      }
      const badName = Ids.problem(h.name)
      if (badName !== undefined) {
        return yield* optionError("handlers", h.name, `must hold handlers whose name ${badName}`)
      }
      if (handlers.has(h.name)) {
        return yield* optionError("handlers", h.name, "must not name a handler twice")
      }
      handlers.set(h.name, h)
    }
    const names = [...handlers.keys()]
    const workers = positiveInt("workers", options.workers, 4)
    if (typeof workers !== "number") return yield* workers
    const claimBatch = positiveInt("claimBatch", options.claimBatch, 100)
    if (typeof claimBatch !== "number") return yield* claimBatch
    const streamCapacity = positiveInt("streamCapacity", options.streamCapacity, 10_000)
    if (typeof streamCapacity !== "number") return yield* streamCapacity
    const leaseMs = millis("lease", options.lease, 30_000, true)
    if (typeof leaseMs !== "number") return yield* leaseMs
    if (!Number.isFinite(leaseMs)) return yield* optionError("lease", false, "must be a duration")
    if (leaseMs < MIN_LEASE_MS) {
      return yield* optionError(
        "lease",
        options.lease,
        `must be at least ${MIN_LEASE_MS} ms (1 second; renewals need time on a loaded machine)`,
      )
    }
    const pollMs = millis(
      "pollInterval",
      options.pollInterval,
      store.exclusive ? Infinity : 200,
      true,
    )
    if (typeof pollMs !== "number") return yield* pollMs
    const windowMs = millis("catchUpWindow", options.catchUpWindow, DAY)
    if (typeof windowMs !== "number") return yield* windowMs
    const shutdownMs = millis("shutdownTimeout", options.shutdownTimeout, 30_000)
    if (typeof shutdownMs !== "number") return yield* shutdownMs
    const policy = options.shutdown ?? options.runtime?.shutdown ?? "drain"
    if (policy !== "drain" && policy !== "cancel" && policy !== "interrupt") {
      return yield* optionError("shutdown", policy, 'must be "drain", "cancel" or "interrupt"')
    }
    const retentionMs = millis("retention", options.retention, 7 * DAY, true)
    if (typeof retentionMs !== "number") return yield* retentionMs
    const seed = options.seed ?? 0
    if (!Number.isSafeInteger(seed)) return yield* optionError("seed", seed, "must be an integer")
    const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    const badOwner = Ids.check("owner", owner)
    if (badOwner !== undefined) return yield* badOwner
    const random = Random.seeded(seed)
    /** Inserts due sooner than this are announced to other processes (when the store can). */
    const notifyWithinMs = Number.isFinite(pollMs) ? pollMs : 0
    /** Push order (SPEC §4) for rows this process writes: increasing, and ahead of earlier runs. */
    let lastSeq = 0
    const nextSeq = (): number => {
      lastSeq = Math.max(lastSeq + 1, now() * 1000)
      return lastSeq
    }

    // ---------------------------------------------------------------- state
    /** Runs held, by runtime id and by task id. */
    const held = new Map<string, Held>()
    const heldByTask = new Map<string, Held>()
    const finished = yield* Queue.unbounded<Finished>()
    const occurrences = yield* PubSub.sliding<DurableOccurrence>(streamCapacity)
    const counters = {
      claimed: 0,
      completed: 0,
      fencedOut: 0,
      released: 0,
      recovered: 0,
      leasesLost: 0,
      uncommitted: 0,
      storeFailures: 0,
    }
    /** Monotonic ms (live: `performance.now`; under `TestClock`: virtual). */
    const mono = (): number => Number(clock.currentTimeNanosUnsafe()) / 1e6
    /** Open while this process holds runs: the lease guard watches them. */
    const holding = yield* Latch.make(false)
    let closed = false
    let stopping = false
    /** The dispatcher's wake-up while it sleeps, and the time it sleeps toward. */
    let parked: ((effect: Effect.Effect<void>) => void) | undefined
    let wakeRequested = false
    let sleepingUntil = Number.NEGATIVE_INFINITY
    let drainedWaiter: ((effect: Effect.Effect<void>) => void) | undefined

    const wake = (): void => {
      const resume = parked
      if (resume !== undefined) {
        parked = undefined
        resume(Effect.void)
      } else wakeRequested = true
    }
    const park = Effect.callback<void>((resume) => {
      if (wakeRequested) {
        wakeRequested = false
        resume(Effect.void)
        return
      }
      parked = resume
      return Effect.sync(() => {
        if (parked === resume) parked = undefined
      })
    })
    const drained = Effect.callback<void>((resume) => {
      if (held.size === 0) {
        resume(Effect.void)
        return
      }
      drainedWaiter = resume
      return Effect.sync(() => {
        if (drainedWaiter === resume) drainedWaiter = undefined
      })
    })
    const forget = (h: Held): void => {
      if (!held.delete(h.runtimeId)) return
      if (h.overdue) counters.uncommitted--
      if (held.size === 0) holding.closeUnsafe()
      if (heldByTask.get(h.row.id) === h) heldByTask.delete(h.row.id)
      if (held.size === 0 && drainedWaiter !== undefined) {
        const resume = drainedWaiter
        drainedWaiter = undefined
        resume(Effect.void)
      }
    }
    const publish = (o: DurableOccurrence): void => {
      PubSub.publishUnsafe(occurrences, o)
    }

    // ---------------------------------------------------------------- the runtime pool
    const userListener = options.runtime?.listener
    // The pool reads the same clock as the store's times: wall-clock epoch ms (Effect's Clock),
    // which survive a restart and agree across processes. (Left alone, the runtime reads the
    // process's monotonic clock, which drifts from the wall clock over a long uptime.)
    const runtime = yield* Scheduler.make({
      // The durable scheduler reports its runs' outcomes itself (its ledger and events).
      logFailures: false,
      ...options.runtime,
      ...(options.runtime?.shutdown === undefined ? { shutdown: policy } : {}),
      workers,
      listener: {
        ...userListener,
        completed: (record) => {
          userListener?.completed?.(record)
          const h = held.get(record.id)
          if (h !== undefined && !h.finished) {
            h.finished = true
            h.finishedAt = mono()
            Queue.offerUnsafe(finished, { held: h, record })
          }
        },
      },
    }).pipe(Effect.provideService(Clock.Clock, clock))
    const context = yield* Effect.context<Handler.Services<H>>()

    // ---------------------------------------------------------------- completing
    const releaseChange = (h: Held, at: number): Change => ({
      id: h.row.id,
      fence: h.row.fence,
      update: Rules.release(h.row, at, h.started),
      events: [
        {
          taskId: h.row.id,
          generation: h.row.generation,
          kind: "released",
          firstSlot: h.row.slot,
          lastSlot: h.row.slot,
          count: 1,
          cause: h.started ? "interrupted" : "not started",
          at,
          fence: h.row.fence,
          owner,
          detail: `attempt ${h.row.attempt}, delivery ${h.row.deliveries}`,
        },
      ],
      fencedOut: Rules.fencedOutEvent(h.row, owner, at, "release after the lease was lost"),
    })

    const unreadable = (h: Held, at: number, error: unknown): Change => ({
      id: h.row.id,
      fence: h.row.fence,
      update: {
        ...Rules.release(h.row, at, true),
        state: "failed",
        dueAt: h.row.runAt,
        finishedAt: at,
        lastError: `the stored task cannot be completed: ${error instanceof Error ? error.message : String(error)}`,
      },
      events: [],
      fencedOut: Rules.fencedOutEvent(h.row, owner, at, "failed unreadable task"),
    })

    const toChange = (f: Finished): { change: Change; ran: Ran | undefined } => {
      const { held: h, record } = f
      if (record === undefined) return { change: releaseChange(h, now()), ran: undefined }
      if (h.releasing && record.outcome.kind === "interrupted") {
        return { change: releaseChange(h, record.finishedAt), ran: undefined }
      }
      const result = Rules.afterRun(
        h.row,
        {
          owner,
          outcome: record.outcome,
          startedAt: record.startedAt,
          finishedAt: record.finishedAt,
          seq: nextSeq(),
        },
        random,
      )
      return {
        change: {
          id: h.row.id,
          fence: h.row.fence,
          update: result.update,
          run: result.run,
          events: result.events,
          fencedOut: Rules.fencedOutEvent(
            h.row,
            owner,
            record.finishedAt,
            `attempt ${h.row.attempt}, delivery ${h.row.deliveries}, outcome ${record.outcome.kind}${h.lost ? " (lease lost)" : ""}`,
          ),
        },
        ran: { kind: "ran", ...result.run },
      }
    }

    // ---------------------------------------------------------------- outages
    /** The store's failure since it last worked: each outage is logged once, with its reason. */
    let outage: { reason: StoreFailure; failures: number } | undefined
    const storeFailed = (e: StoreError): Effect.Effect<void> =>
      Effect.suspend(() => {
        counters.storeFailures++
        if (outage !== undefined && outage.reason === e.reason) {
          outage.failures++
          return Effect.void
        }
        outage = { reason: e.reason, failures: 1 }
        return Effect.logWarning(
          `tickwork durable: ${e.message}; retrying until the store works again (logged once per outage)`,
        ).pipe(Effect.annotateLogs({ reason: e.reason, operation: e.operation }))
      })
    const storeWorked: Effect.Effect<void> = Effect.suspend(() => {
      if (outage === undefined) return Effect.void
      const { reason, failures } = outage
      outage = undefined
      return Effect.logInfo(
        `tickwork durable: the task store works again (${failures} failed attempt(s), ${reason})`,
      )
    })
    /** A failed store call: a StoreError is an outage; anything else is a bug, logged in full. */
    const reportFailure = (what: string, cause: Cause.Cause<unknown>): Effect.Effect<void> => {
      const error = Cause.findErrorOption(cause)
      return Option.isSome(error) && error.value instanceof StoreError
        ? storeFailed(error.value)
        : Effect.logWarning(`tickwork durable: ${what} failed`, cause)
    }

    /**
     * Commits, retrying while the store fails (the fence keeps a late commit safe; an attempt
     * whose answer was lost is recognised by the store). Each attempt has the store's deadline,
     * so a connection that never answers costs one deadline, not the process's completions.
     */
    const commitRetrying = (
      changes: ReadonlyArray<Change>,
    ): Effect.Effect<ReadonlyArray<ChangeResult>> =>
      Effect.gen(function* () {
        for (let k = 0; ; k++) {
          const exit = yield* Effect.exit(store.commit(changes))
          if (Exit.isSuccess(exit)) {
            yield* storeWorked
            return exit.value
          }
          yield* reportFailure("completing runs", exit.cause)
          yield* Effect.sleep(Math.min(5_000, 250 * 2 ** Math.min(k, 5)))
        }
      })

    /** Completes finished runs, batch by batch; a bug in one pass is logged, not fatal. */
    const completer = Effect.gen(function* () {
      for (;;) {
        const exit = yield* Effect.exit(completeBatch)
        if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
          yield* Effect.logWarning("tickwork durable: completing runs failed", exit.cause)
        }
      }
    })

    const completeBatch = Effect.gen(function* () {
      {
        const batch = yield* Queue.takeAll(finished)
        const prepared = batch.map((f) => {
          try {
            return toChange(f)
          } catch (error) {
            // A row that cannot be read back into the core's terms: it ends failed, saying why.
            return {
              change: unreadable(f.held, f.record?.finishedAt ?? now(), error),
              ran: undefined,
            }
          }
        })
        const results = yield* commitRetrying(prepared.map((p) => p.change))
        for (let k = 0; k < batch.length; k++) {
          const { change, ran } = prepared[k] as (typeof prepared)[number]
          const h = (batch[k] as Finished).held
          const result = results[k]
          if (result === "fenced-out") {
            counters.fencedOut++
            publish(change.fencedOut)
          } else if (ran === undefined) {
            if (change.update.state !== "failed") counters.released++
            for (const e of change.events) publish(e)
          } else {
            counters.completed++
            publish(result === "cancelled" ? { ...ran, state: "cancelled", nextRunAt: null } : ran)
            if (result === "applied") for (const e of change.events) publish(e)
          }
          forget(h)
        }
        wake()
      }
    })

    // ---------------------------------------------------------------- claiming
    const payloadOf = (
      h: Handler.Any,
      row: TaskRow,
    ): Effect.Effect<unknown, PayloadDecodeError> => {
      let raw: unknown
      try {
        raw = JSON.parse(row.payload)
      } catch (error) {
        return Effect.fail(
          new PayloadDecodeError({
            handler: h.name,
            taskId: row.id,
            message: `the stored payload of task ${Errors.show(row.id)} is not JSON: ${String(error)}`,
          }),
        )
      }
      const decoded = Schema.decodeUnknownResult(h.payload)(raw)
      return Result.isSuccess(decoded)
        ? Effect.succeed(decoded.success)
        : Effect.fail(
            new PayloadDecodeError({
              handler: h.name,
              taskId: row.id,
              message: `the stored payload of task ${Errors.show(row.id)} no longer matches the schema of handler ${Errors.show(h.name)}: ${decoded.failure.message}`,
            }),
          )
    }

    const start = (row: TaskRow, claimedAt: number) =>
      Effect.gen(function* () {
        const handler = handlers.get(row.handler) as Handler.Any
        const previous = heldByTask.get(row.id)
        if (previous !== undefined) {
          // Our own lease on it expired and we claimed it again: the old run is fenced out.
          previous.lost = true
          yield* runtime.cancel(previous.runtimeId, { interrupt: true })
        }
        let runtimeId = `durable:${row.id}`
        if (held.has(runtimeId) || (yield* runtime.status(runtimeId)) === "running") {
          runtimeId = `durable:${row.id}@${row.fence}`
        }
        const h: Held = {
          row,
          runtimeId,
          started: false,
          finished: false,
          lost: false,
          releasing: false,
          renewedAt: claimedAt,
          finishedAt: -1,
          overdue: false,
        }
        held.set(runtimeId, h)
        holding.openUnsafe()
        heldByTask.set(row.id, h)
        counters.claimed++
        const job = (info: Task.RunInfo) =>
          Effect.suspend(() => {
            // A lease that lapsed while the run waited for a worker: it is not ours to run.
            // Closing, or handed back already: start no new run (it is released instead).
            if (h.lost || h.releasing) return Effect.interrupt
            if (stopping) {
              h.releasing = true
              return Effect.interrupt
            }
            h.started = true
            const run: Handler.DurableRun = {
              id: row.id as Task.TaskId,
              generation: row.generation,
              scheduledFor: row.runAt,
              startedAt: info.startedAt,
              attempt: row.attempt,
              runNumber: row.runNumber + 1,
              slot: row.slot,
              key: `${row.id}@${row.slot}`,
              delivery: row.deliveries,
              fence: row.fence,
              handler: row.handler,
            }
            return Effect.flatMap(
              payloadOf(handler, row),
              // A registered handler: its services are among the layer's.
              (payload) =>
                handler.run(payload, run) as Effect.Effect<unknown, unknown, Handler.Services<H>>,
            )
          }).pipe(Effect.provideContext(context))
        const scheduled = yield* runtime
          .schedule({
            id: runtimeId,
            schedule: Schedule.at(row.runAt),
            priority: Task.priorities[row.priority] ?? "normal",
            timeout: row.timeoutMs > 0 ? row.timeoutMs : undefined,
            job,
          })
          .pipe(Effect.result)
        if (Result.isFailure(scheduled)) {
          // The runtime is closing: hand the row back.
          yield* commitRetrying([releaseChange(h, now())])
          counters.released++
          forget(h)
        }
      })

    /**
     * Applies claim-time decisions (catch-up window, coalesce): a moved row goes back to the
     * store at its new slot and is claimed again in its turn. Starts the rest.
     */
    const startAll = (rows: ReadonlyArray<TaskRow>, at: number, claimedAt: number) =>
      Effect.gen(function* () {
        const changes: Array<Change> = []
        const toStart: Array<TaskRow> = []
        for (const row of rows) {
          const move = Rules.atClaim(row, at, windowMs)
          if (move === undefined) {
            toStart.push(row)
            continue
          }
          const events: Array<EventEntry> = []
          if (move.skipped !== undefined) {
            events.push(Rules.windowEvent(move.skipped, row, owner, at, windowMs))
          }
          if (move.merged !== undefined) {
            events.push({
              taskId: row.id,
              generation: row.generation,
              kind: "coalesced",
              firstSlot: move.merged.first,
              lastSlot: move.merged.last,
              count: move.merged.count,
              cause: "late",
              at,
              fence: row.fence,
              owner,
              detail: `merged into the run of slot ${move.slot}`,
            })
          }
          changes.push({
            id: row.id,
            fence: row.fence,
            update: Rules.parkAt(row, move.slot, at, nextSeq()),
            events,
            fencedOut: Rules.fencedOutEvent(row, owner, at, "claim-time decision"),
          })
        }
        if (changes.length > 0) {
          const results = yield* store.commit(changes)
          for (let k = 0; k < changes.length; k++) {
            if (results[k] === "applied") for (const e of (changes[k] as Change).events) publish(e)
          }
          // A moved row may be due at once: claim again before sleeping.
          wakeRequested = true
        }
        for (const row of toStart) yield* start(row, claimedAt)
      })

    /** One pass: claim what is due and start it, then sleep until the next due time or a wake. */
    const dispatchLoop = Effect.gen(function* () {
      for (;;) {
        if (stopping) return
        // First, after any wake (a stall included): runs whose lease lapsed stop here.
        yield* dropLapsed
        const t = now()
        const free = workers - held.size
        let full = false
        if (free > 0) {
          const limit = Math.min(free, claimBatch)
          const claimedAt = mono()
          const rows = yield* store.claim({ owner, now: t, limit, leaseMs, handlers: names })
          yield* storeWorked
          if (rows.length > 0) yield* startAll(rows, t, claimedAt)
          full = rows.length === limit
        }
        if (full) {
          yield* Effect.yieldNow
          continue
        }
        // From here on, any insert wakes us (it may be earlier than what nextDue sees).
        sleepingUntil = Number.POSITIVE_INFINITY
        let wait = MAX_SLEEP_MS
        if (held.size < workers) {
          const next = yield* store.nextDue(names)
          // Due but not claimed: rows another process is claiming right now.
          if (next !== undefined) wait = Math.max(1, next - t)
        }
        wait = Math.min(wait, pollMs, MAX_SLEEP_MS)
        sleepingUntil = t + wait
        yield* Effect.raceFirst(park, Effect.sleep(wait))
        sleepingUntil = Number.NEGATIVE_INFINITY
      }
    })

    // A failing store (or a bug) never stops the dispatcher: it says so and tries again.
    const dispatcher = Effect.gen(function* () {
      while (!stopping) {
        const exit = yield* Effect.exit(dispatchLoop)
        if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
          sleepingUntil = Number.NEGATIVE_INFINITY
          yield* reportFailure("claiming", exit.cause)
          yield* Effect.raceFirst(park, Effect.sleep(1_000))
        }
      }
    })

    // ---------------------------------------------------------------- leases
    /**
     * The lease guard's check: a run whose lease this process has not renewed for a whole lease
     * (monotonic time: a stall, a suspended process, a store that does not answer) may belong
     * to another process by now. It is interrupted at once, before anything else runs, and
     * handed back if the store still says it is ours. A run waiting for a worker is handed
     * back without starting.
     */
    const dropLapsed: Effect.Effect<void> = Effect.suspend(() => {
      if (held.size === 0) return Effect.void
      const at = mono()
      const lapsed: Array<Held> = []
      for (const h of held.values()) {
        if (!h.finished && !h.lost && at - h.renewedAt >= leaseMs) lapsed.push(h)
      }
      if (lapsed.length === 0) return Effect.void
      return Effect.forEach(
        lapsed,
        (h) =>
          Effect.gen(function* () {
            h.lost = true
            h.releasing = true
            counters.leasesLost++
            yield* Effect.logWarning(
              `tickwork durable: the lease of task ${h.row.id} (slot ${h.row.slot}) was not renewed for ${Math.round(at - h.renewedAt)} ms, more than the lease of ${leaseMs} ms (this process stalled or the store did not answer); another process may run it now: interrupting its run`,
            )
            yield* runtime.cancel(h.runtimeId, { interrupt: true })
            if (!h.started && !h.finished) {
              // Cancelled before it started: the runtime reports no end for it.
              h.finished = true
              h.finishedAt = mono()
              Queue.offerUnsafe(finished, { held: h, record: undefined })
            }
          }),
        { discard: true },
      )
    })

    /** Finished runs not committed within a lease: each is reported once. */
    const watchUncommitted: Effect.Effect<void> = Effect.suspend(() => {
      const at = mono()
      const overdue: Array<Held> = []
      for (const h of held.values()) {
        if (h.finishedAt >= 0 && !h.overdue && at - h.finishedAt >= leaseMs) overdue.push(h)
      }
      if (overdue.length === 0) return Effect.void
      for (const h of overdue) h.overdue = true
      counters.uncommitted += overdue.length
      return Effect.andThen(
        Metric.update(uncommittedRuns, overdue.length),
        Effect.logWarning(
          `tickwork durable: ${overdue.length} finished run(s) not committed after ${leaseMs} ms (the store does not answer; retrying): ${overdue
            .slice(0, 5)
            .map((h) => `${h.row.id}@${h.row.slot}`)
            .join(", ")}${overdue.length > 5 ? ", …" : ""}`,
        ),
      )
    })

    /** Watches held runs on the monotonic clock, every tenth of a lease while runs are held. */
    const guard = Effect.gen(function* () {
      const every = Math.max(10, Math.floor(leaseMs / 10))
      for (;;) {
        yield* holding.await
        yield* Effect.sleep(every)
        yield* dropLapsed
        yield* watchUncommitted
      }
    })

    const renewer = Effect.gen(function* () {
      for (;;) {
        yield* Effect.sleep(Math.max(1, Math.floor(leaseMs / 3)))
        yield* dropLapsed
        const live = [...held.values()].filter((h) => !h.finished && !h.lost)
        if (live.length === 0) continue
        const sentAt = mono()
        const renewed = yield* store
          .renew(
            owner,
            live.map((h) => ({ id: h.row.id, fence: h.row.fence })),
            now(),
            leaseMs,
          )
          .pipe(
            Effect.tap(() => storeWorked),
            Effect.catch((e) => Effect.as(storeFailed(e), undefined)),
          )
        if (renewed === undefined) continue
        for (const h of live) {
          if (renewed.has(h.row.id)) h.renewedAt = sentAt
          else if (!h.finished && !h.lost) {
            h.lost = true
            yield* Effect.logWarning(
              `tickwork durable: lost the lease of task ${h.row.id} (slot ${h.row.slot}); interrupting its run`,
            )
            yield* runtime.cancel(h.runtimeId, { interrupt: true })
          }
        }
      }
    })

    /** Whether the LISTEN connection is lost (logged once until it is back). */
    let listenerDown = false
    /** Other processes' notices that work is due soon: look now instead of at the next poll. */
    const listener = Effect.gen(function* () {
      const signal = store.signal
      if (signal === undefined) return
      for (;;) {
        const listened = yield* Effect.result(
          Effect.scoped(
            Effect.gen(function* () {
              const notices = yield* signal.listen
              if (listenerDown) {
                listenerDown = false
                yield* Effect.logInfo("tickwork durable: listening for other processes again")
              }
              for (;;) {
                yield* Queue.take(notices)
                wake()
              }
            }),
          ),
        )
        if (Result.isFailure(listened)) {
          const e =
            listened.failure instanceof StoreError
              ? listened.failure
              : storeError("listen for other processes", listened.failure)
          if (!listenerDown) {
            listenerDown = true
            yield* Effect.logWarning(
              `tickwork durable: lost the LISTEN connection for other processes' notices: ${e.message.replace(/^the task store failed to [^:]*: /, "")}; polling only, listening again every 5 s (logged once until it works)`,
            ).pipe(Effect.annotateLogs({ reason: e.reason }))
          }
        }
        yield* Effect.sleep(5_000)
      }
    })

    const pruner = Effect.gen(function* () {
      for (;;) {
        yield* store.prune(now() - retentionMs).pipe(Effect.catch(storeFailed))
        yield* Effect.sleep(Math.min(MAX_SLEEP_MS, Math.max(60_000, Math.floor(retentionMs / 100))))
      }
    })

    // ---------------------------------------------------------------- start
    if (store.exclusive) {
      counters.recovered = yield* store.recover(now())
      if (counters.recovered > 0) {
        yield* Effect.logInfo(
          `tickwork durable: ${counters.recovered} run(s) cut off by a crash are due again`,
        )
      }
    }
    yield* Effect.forkScoped(completer)
    const dispatcherFiber = yield* Effect.forkScoped(
      options.claim === false ? Effect.void : dispatcher,
    )
    yield* Effect.forkScoped(renewer)
    yield* Effect.forkScoped(guard)
    if (store.signal !== undefined && Number.isFinite(pollMs)) yield* Effect.forkScoped(listener)
    if (Number.isFinite(retentionMs)) yield* Effect.forkScoped(pruner)

    /**
     * Hands back runs that have not started (closing starts no new run): the runtime forgets
     * them, and their rows are due again at once for any process, under their fence.
     */
    const releaseUnstarted = Effect.gen(function* () {
      const unstarted = [...held.values()].filter((h) => !h.started && !h.finished)
      for (const h of unstarted) h.releasing = true
      for (const h of unstarted) yield* runtime.cancel(h.runtimeId, { interrupt: true })
      // Cancelled before they started: the runtime reports no end for them.
      const left = unstarted.filter((h) => !h.finished)
      if (left.length === 0) return
      for (const h of left) {
        h.finished = true
        h.finishedAt = mono()
      }
      const changes = left.map((h) => releaseChange(h, now()))
      const results = yield* commitRetrying(changes).pipe(Effect.timeoutOption(shutdownMs))
      if (Option.isSome(results)) {
        for (let k = 0; k < left.length; k++) {
          if (results.value[k] === "fenced-out") {
            counters.fencedOut++
            publish((changes[k] as Change).fencedOut)
          } else {
            counters.released++
            for (const e of (changes[k] as Change).events) publish(e)
          }
        }
      }
      for (const h of left) forget(h)
    })

    /** Interrupts running runs; each is handed back as its run ends (the completer). */
    const interruptRunning = Effect.gen(function* () {
      const running = [...held.values()].filter((h) => !h.finished)
      for (const h of running) h.releasing = true
      for (const h of running) yield* runtime.cancel(h.runtimeId, { interrupt: true })
    })

    // Finalizers run in reverse: this one runs before the fibers above are interrupted and
    // before the runtime pool closes, so the completer, the renewer and the store still work.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        closed = true
        stopping = true
        wake()
        yield* Fiber.await(dispatcherFiber)
        const before = counters.released
        yield* releaseUnstarted
        if (policy === "interrupt") yield* interruptRunning
        else {
          const done = yield* Effect.timeoutOption(drained, shutdownMs)
          if (Option.isNone(done)) {
            yield* releaseUnstarted
            yield* interruptRunning
          }
        }
        yield* Effect.timeoutOption(drained, Math.max(shutdownMs, 1_000))
        // Released rows are due now: other processes need not wait for their next poll.
        if (counters.released > before && store.signal !== undefined) {
          yield* Effect.ignore(store.signal.notify)
        }
      }),
    )

    // ---------------------------------------------------------------- validation
    /** Validates options exactly as the kernel does (nothing is kept in it). */
    const validator = new Kernel.Kernel<undefined>({ retention: { maxFinished: 0 } })
    const closedError = new Errors.SchedulerClosed({
      message: "the durable scheduler is closed: it accepts no new tasks",
    })

    const prepare = (
      o: DurableTaskOptions,
      t: number,
    ): NewTask | Exclude<DurableScheduleError, StoreError> => {
      if (closed) return closedError
      if (typeof o !== "object" || o === null) {
        return optionError("options", o, "must be an object")
      }
      const name = typeof o.handler === "string" ? o.handler : (o.handler as Handler.Any)?.name
      const handler = typeof name === "string" ? handlers.get(name) : undefined
      if (handler === undefined) {
        return new UnknownHandler({
          field: "handler",
          value: name ?? o.handler,
          message: `handler ${Errors.show(name ?? o.handler)} is not registered with this scheduler (registered: ${
            names.length === 0 ? "none" : names.map((n) => JSON.stringify(n)).join(", ")
          })`,
        })
      }
      if (o.schedule?._tag === "Custom") return Spec.notDurable(o.schedule)
      if (o.id !== undefined) {
        const badId = Ids.check("id", o.id)
        if (badId !== undefined) return badId
      }
      const id = o.id ?? randomUUID()
      const accepted = validator.schedule(
        {
          job: undefined,
          schedule: o.schedule,
          id,
          priority: o.priority,
          retry: o.retry,
          missedRuns: o.missedRuns,
          pauseAfterConsecutiveFailures: o.pauseAfterConsecutiveFailures,
        },
        t,
      )
      if (typeof accepted !== "string") return accepted
      const first = (validator.info(accepted) as Task.TaskInfo).scheduledFor
      validator.cancel(accepted, t)
      const timeoutMs =
        o.timeout === undefined
          ? 0
          : Time.toMillisWith(o.timeout, (reason) => optionError("timeout", o.timeout, reason))
      if (typeof timeoutMs !== "number") return timeoutMs
      const encoded = Schema.encodeUnknownResult(handler.payload)(o.payload)
      if (Result.isFailure(encoded)) {
        const path = issuePath(encoded.failure.issue)
        const field = fieldOf(path)
        const value = path.length === 0 ? o.payload : at(o.payload, path)
        const reason = encoded.failure.message.split("\n")[0]
        return new InvalidPayload({
          field,
          value,
          handler: handler.name,
          message: `${field} does not match the schema of handler ${Errors.show(handler.name)}: ${reason}, got ${Errors.show(value)}`,
        })
      }
      let text: string | undefined
      try {
        text = JSON.stringify(encoded.success)
      } catch {
        text = undefined
      }
      const back =
        text === undefined
          ? undefined
          : Schema.decodeUnknownResult(handler.payload)(JSON.parse(text))
      if (text === undefined || back === undefined || Result.isFailure(back)) {
        return new InvalidPayload({
          field: "payload",
          value: o.payload,
          handler: handler.name,
          message: `payload of handler ${Errors.show(handler.name)} cannot be stored: its encoded form is not JSON that decodes back${
            back !== undefined && Result.isFailure(back)
              ? ` (${back.failure.message.split("\n")[0]})`
              : ""
          }`,
        })
      }
      const spec = Spec.fromSchedule(o.schedule, first)
      if ("_tag" in spec) return spec
      const retry = Retry.resolve(o.retry) as Retry.Resolved
      return {
        id,
        handler: handler.name,
        payload: text,
        seq: nextSeq(),
        schedule: spec,
        priority: Task.priorities.indexOf(o.priority ?? "normal"),
        retry,
        missedRuns: o.missedRuns ?? "catch-up",
        pauseAfter: o.pauseAfterConsecutiveFailures ?? 0,
        timeoutMs,
        slot: first,
        now: t,
      }
    }

    /**
     * After an insert: wakes the dispatcher if the new work is due before it would look again,
     * and tells other processes (they would otherwise see it at their next poll).
     */
    const inserted = (tasks: ReadonlyArray<NewTask>, t: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        let earliest = Number.POSITIVE_INFINITY
        for (const task of tasks) if (task.slot < earliest) earliest = task.slot
        if (earliest < sleepingUntil) wake()
        const signal = store.signal
        return signal !== undefined && earliest <= t + notifyWithinMs
          ? Effect.ignore(signal.notify)
          : Effect.void
      })

    const scheduleAll: DurableSchedulerShape["scheduleAll"] = (list) =>
      Effect.suspend((): Effect.Effect<ReadonlyArray<Task.TaskId>, DurableScheduleError> => {
        if (!Array.isArray(list))
          return Effect.fail(optionError("options", list, "must be an array"))
        const t = now()
        const tasks: Array<NewTask> = []
        for (const o of list) {
          const p = prepare(o, t)
          if (!("slot" in p)) return Effect.fail(p)
          tasks.push(p)
        }
        if (tasks.length === 0) return Effect.succeed([])
        return store
          .insert(tasks as unknown as readonly [NewTask, ...Array<NewTask>])
          .pipe(
            Effect.andThen(inserted(tasks, t)),
            Effect.as(tasks.map((x) => x.id as Task.TaskId)),
          )
      })

    const schedule: DurableSchedulerShape["schedule"] = (o) =>
      Effect.suspend((): Effect.Effect<Task.TaskId, DurableScheduleError> => {
        const t = now()
        const p = prepare(o as DurableTaskOptions, t)
        if (!("slot" in p)) return Effect.fail(p)
        return store
          .insert([p])
          .pipe(Effect.andThen(inserted([p], t)), Effect.as(p.id as Task.TaskId))
      })

    const cancel: DurableSchedulerShape["cancel"] = (id, cancelOptions) =>
      Effect.gen(function* () {
        const t = now()
        const found = yield* store.cancel(id, t)
        if (Option.isNone(found)) return false
        const c = found.value
        publish({
          taskId: id,
          generation: c.generation,
          kind: "cancelled",
          firstSlot: c.slot,
          lastSlot: c.slot,
          count: 1,
          cause: c.from,
          at: t,
          fence: c.fence,
          owner: c.leaseOwner,
          detail: null,
        })
        const h = heldByTask.get(id)
        if (cancelOptions?.interrupt === true && h !== undefined && !h.finished) {
          yield* runtime.cancel(h.runtimeId, { interrupt: true })
        }
        return true
      })

    const info: DurableSchedulerShape["info"] = (id) =>
      Effect.map(
        store.get(id),
        Option.map(
          (row): DurableTaskInfo => ({
            id: row.id as Task.TaskId,
            generation: row.generation,
            state: row.state,
            handler: row.handler,
            payload: JSON.parse(row.payload),
            schedule: row.schedule,
            priority: Task.priorities[row.priority] ?? "normal",
            slot: row.slot,
            scheduledFor: row.runAt,
            attempt: row.attempt,
            runNumber: row.runNumber,
            consecutiveFailures: row.consecutiveFailures,
            deliveries: row.deliveries,
            leaseOwner: row.state === "running" ? row.leaseOwner : null,
            lastError: row.lastError,
            finishedAt: row.finishedAt,
          }),
        ),
      )

    /**
     * At equal times and fences, a cancel comes before the run it cut short, and slots a run's
     * policy skipped or coalesced come after it.
     */
    const rank = (o: DurableOccurrence): number =>
      o.kind === "ran" ? 1 : o.kind === "skipped" || o.kind === "coalesced" ? 2 : 0
    const ledger: DurableSchedulerShape["ledger"] = (id) =>
      Effect.map(Effect.all([store.runs(id), store.events(id)]), ([runs, events]) => {
        const out: Array<{ at: number; fence: number; o: DurableOccurrence }> = [
          ...runs.map((r) => ({
            at: r.finishedAt,
            fence: r.fence,
            o: { kind: "ran" as const, ...r },
          })),
          ...events.map((e) => ({ at: e.at, fence: e.fence ?? 0, o: e })),
        ]
        return out
          .sort((a, b) => a.at - b.at || a.fence - b.fence || rank(a.o) - rank(b.o))
          .map((x) => x.o)
      })

    const durable = DurableScheduler.of({
      owner,
      schedule,
      scheduleAll,
      cancel,
      status: (id) =>
        Effect.map(
          store.state(id),
          Option.getOrElse(() => "unknown" as const),
        ),
      info,
      ledger,
      occurrences: Stream.fromPubSub(occurrences),
      stats: Effect.map(store.counts, (tasks) => ({
        tasks,
        owner,
        inFlight: held.size,
        ...counters,
        closed,
      })),
      poll: Effect.sync(wake),
      idle: Effect.sync(
        () =>
          (options.claim === false || (parked !== undefined && !wakeRequested)) && held.size === 0,
      ),
    })
    return { durable, runtime }
  })

/**
 * A layer providing the {@link DurableScheduler} and the runtime `Scheduler` it runs on. It needs
 * a `TaskStore` (`Sqlite.layer` or `Postgres.layer`) and the handlers' services.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <H extends Handler.Any>(
  options: DurableSchedulerOptions<H>,
): Layer.Layer<
  DurableScheduler | Scheduler.Scheduler,
  Errors.InvalidOption | StoreError,
  TaskStore | Handler.Services<H>
> =>
  Layer.effectContext(
    Effect.map(make(options), ({ durable, runtime }) =>
      Context.make(DurableScheduler, durable).pipe(Context.add(Scheduler.Scheduler, runtime)),
    ),
  )
