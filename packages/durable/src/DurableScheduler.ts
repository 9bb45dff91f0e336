/**
 * The `DurableScheduler` service: tasks kept as data in a {@link TaskStore.TaskStore}, run by
 * named {@link Handler}s on the runtime's bounded worker pool, surviving restarts and shared by
 * several processes. Every decision about a task is the core's (`Rules`): the durable scheduler
 * only loads rows, asks, and stores the answers. Its parts, one concept each, live under
 * `internal/`:
 *
 * 1. **Claim** (`dispatcher`). A dispatcher fiber sleeps until the store's earliest due time (a
 *    local timer, woken by this process's inserts) or a short poll (other processes' inserts),
 *    then claims due rows — as many as it has free workers — each leased to this process under
 *    a new fence. A grid task's late first delivery is decided by `Rules.take` (catch-up window,
 *    `coalesce`) first.
 * 2. **Run.** Each claimed row runs on the runtime's `WorkerPool` (its own Scope, span and log
 *    annotations, timeout), the handler getting the payload decoded by its schema (`payload`)
 *    and a {@link Handler.DurableRun}: `(id, slot, attempt)`, the delivery count and the fence.
 *    One lifecycle step and one ledger row per run.
 * 3. **Complete** (`completion`). `Rules.settle` gives the next state, slot or retry; the row,
 *    its `(task id, slot)` ledger row and any skipped/coalesced slots are written in one
 *    transaction, applied only if the row's fence is still the one it was claimed with. A late
 *    completion from a lost lease is rejected and recorded (`fenced-out`). Long runs renew
 *    their lease (`leases`).
 *
 * **At least once.** A run in flight when its process dies runs again: on the same SQLite file
 * when it is reopened; on PostgreSQL at once when the dead process's database session ends
 * (another process takes it over), or when its lease expires if it only stalled. Handlers
 * get `run.key` (`"<id>@<slot>"`) and `run.delivery` to make their side effects idempotent.
 *
 * The layer also provides a runtime `Scheduler` (on the layer's `runtime` options and as many
 * workers), so in-memory tasks (closures) can run beside the durable ones.
 *
 * @since 0.1.0
 */
import { Errors as CoreErrors, type Kernel, Task } from "@tickwork/core"
import { Health, Metrics, Run, Scheduler, WorkerPool } from "@tickwork/runtime"
import {
  Clock,
  Context,
  Effect,
  Exit,
  Fiber,
  Layer,
  Option,
  PubSub,
  Queue,
  Scope,
  Stream,
  Tracer,
} from "effect"
import type { DurableScheduleError, StoreCorrupt, StoreError } from "./Errors.ts"
import type * as Handler from "./Handler.ts"
import * as Accept from "./internal/accept.ts"
import * as Completion from "./internal/completion.ts"
import * as Controls from "./internal/controls.ts"
import * as Dedup from "./internal/dedupControl.ts"
import * as Dispatcher from "./internal/dispatcher.ts"
import * as Ensure from "./internal/ensure.ts"
import * as Env from "./internal/env.ts"
import { type Finished, type Occurrence, Wakeup } from "./internal/env.ts"
import * as Events from "./internal/events.ts"
import * as Held from "./internal/held.ts"
import * as Leases from "./internal/leases.ts"
import type * as List from "./internal/list.ts"
import * as Liveness from "./internal/liveness.ts"
import type { Counts } from "./internal/model.ts"
import * as Options from "./internal/options.ts"
import * as Outage from "./internal/outage.ts"
import * as RetryControl from "./internal/retryControl.ts"
import type {
  DurableSchedulerShape,
  DurableTaskFilter,
  DurableTaskOptions,
} from "./internal/scheduler.ts"
import { infoOf } from "./internal/scheduler.ts"
import * as Shutdown from "./internal/shutdown.ts"
import * as StoreCounts from "./internal/storeCounts.ts"
import * as TriggerControl from "./internal/triggerControl.ts"
import * as TypedLedger from "./internal/typedLedger.ts"
import * as Upkeep from "./internal/upkeep.ts"
import { type BreakerView, type NewTask, TaskStore } from "./TaskStore.ts"

/**
 * The scheduler's models (what to schedule, a task as reported, filters, changes, figures and
 * the service's shape), kept in their own module so that `StoreAdmin` reads tasks the same way
 * without importing the scheduler.
 *
 * @category models
 * @since 0.1.0
 */
export type {
  DurableChanges,
  DurableDedupStats,
  DurableLedgerRead,
  DurableOccurrence,
  DurableSchedulerShape,
  DurableStats,
  DurableTaskFilter,
  DurableTaskInfo,
  DurableTaskOptions,
  DurableUpdateError,
  Ran,
} from "./internal/scheduler.ts"
/**
 * A stored row as the scheduler reports it (`info`, `tasks`).
 *
 * @category getters
 * @since 0.1.0
 */
export { infoOf } from "./internal/scheduler.ts"
/**
 * Task `id`'s ledger with each run's kept result typed (SPEC §19.3): `value` is of `handler`'s
 * `result` schema type (`undefined` when none was kept or it no longer decodes). A handler
 * without a `result` schema, or not the task's, is an `InvalidOption` naming `handler`.
 *
 * @category getters
 * @since 0.7.0
 */
export { ledgerOf, type TypedOccurrence, type TypedRan } from "./internal/typedLedger.ts"

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
 * Layer options. An unknown key is an `InvalidOption`.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableSchedulerOptions<H extends Handler.Any = Handler.Any>
  extends Options.LayerOptions {
  /** The handlers this process can run; it claims only tasks naming one of them. */
  readonly handlers: ReadonlyArray<H>
}

/**
 * What closing the durable scheduler did, given to the layer's `onShutdown` and logged: runs
 * completed and handed back while closing, and, by task id, the runs that were not handed back
 * within `shutdownTimeout + shutdownGrace` (`abandoned`: still running, ignoring interruption;
 * `uncommitted`: ended, but the store did not take the hand-back). Those rows stay `running`
 * until their lease expires, the session ends (PostgreSQL) or the file is reopened (SQLite).
 *
 * @category models
 * @since 0.4.0
 */
export type DurableShutdownReport = Options.ShutdownReport

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
export const MIN_LEASE_MS = Options.MIN_LEASE_MS

/**
 * How often, at most, the durable gauges re-read the store's counts by state: after a change
 * this process made or saw (an exclusive store), or every interval (a shared store, which other
 * processes change). Each read is one `GROUP BY` over the tasks.
 *
 * @category models
 * @since 0.5.0
 */
export const STORE_COUNTS_REFRESH_MS = 5_000

const noWaits: List.WaitCounts = { concurrency: 0, "rate-limited": 0 }

const noCounts: Counts = {
  scheduled: 0,
  running: 0,
  paused: 0,
  done: 0,
  failed: 0,
  cancelled: 0,
}

/**
 * Builds a durable scheduler in the current scope on the {@link TaskStore.TaskStore} in context.
 * At start, an exclusive store (SQLite) makes the runs a crash cut off due again; then the
 * dispatcher starts claiming. Closing the scope stops claiming, lets runs in flight finish for
 * up to `shutdownTimeout` (policy `interrupt`: not at all), then interrupts the rest and hands
 * them back to the store, due at once for another process (notified on PostgreSQL). The whole
 * close, the in-memory runtime's included, takes at most `shutdownTimeout + shutdownGrace`;
 * runs not handed back by then are named in a warning and in the `onShutdown` report. A store
 * found damaged (`StoreCorrupt`) stops claiming and fails the program serving it.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <H extends Handler.Any>(
  options: DurableSchedulerOptions<H>,
): Effect.Effect<
  { readonly durable: DurableSchedulerShape; readonly runtime: Scheduler.SchedulerShape },
  CoreErrors.InvalidOption | StoreError,
  TaskStore | Handler.Services<H> | Scope.Scope
> =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const clock = yield* Clock.Clock
    const resolved = Options.resolve(options, store.exclusive)
    if (!("workers" in resolved)) return yield* resolved
    const counters = Env.counters()
    const occurrences = yield* PubSub.sliding<Occurrence>(resolved.streamCapacity)
    const finished = yield* Queue.unbounded<Finished>()
    const held = yield* Held.make(counters)
    const wakeup = new Wakeup()
    const dispatch = { wantsWorker: true }
    // The fiber building the scheduler: under `Effect.provide(layer)` (and `Main.runMain`), the
    // one that runs the program it serves. A damaged store interrupts it, and the close then
    // fails with the StoreCorrupt: the program ends in failure (a non-zero exit), not a stall.
    const builder = Fiber.getCurrent()
    let onCorrupt: (e: StoreCorrupt) => Effect.Effect<void> = () => Effect.void
    const runtimeOptions = resolved.runtime ?? {}
    // The runtime's run series under the scheduler's name, in the registry the layer was built
    // with: durable runs count as runs, labelled with their handler. The label's values are
    // the handlers this process declares (it claims only those) and "unknown" (slots skipped
    // by a path that had not the task's row at hand).
    const metricsName = runtimeOptions.name ?? "default"
    const metricsContext = yield* Effect.context<never>()
    const seriesByHandler = new Map<string, Metrics.RunSeries>()
    const runSeries = (handler: string): Metrics.RunSeries => {
      let series = seriesByHandler.get(handler)
      if (series === undefined) {
        series = Metrics.runSeries(metricsName, metricsContext, handler)
        seriesByHandler.set(handler, series)
      }
      return series
    }
    // The whole store's tasks by state (SPEC §17.13), read by the gauges: refreshed after a
    // change this process made or saw, and every STORE_COUNTS_REFRESH_MS on a shared store,
    // but at most once per that interval.
    let storeCounts: Counts | undefined
    // Due runs waiting on a limit, store-wide by cause (SPEC §20.4), read with the counts.
    let storeWaiting: List.WaitCounts = noWaits
    const countsWakeup = new Wakeup()
    const spans =
      runtimeOptions.spans === undefined || runtimeOptions.spans === "auto"
        ? (yield* Tracer.Tracer) !== Tracer.nativeTracer
        : runtimeOptions.spans
    // The parts a tool's controls share (StoreAdmin builds the same), then the running ones.
    const basis = Env.base(store, resolved, clock, (o, handler) => {
      PubSub.publishUnsafe(occurrences, o)
      const kind = o.kind
      if ((kind === "skipped" || kind === "coalesced") && "taskId" in o) {
        // As the runtime's recorder counts missed slots (one rule, in Metrics).
        Metrics.countMissed(runSeries(handler ?? held.ofTask(o.taskId)?.row.handler ?? "unknown"), {
          kind,
          cause: o.cause,
          count: o.count,
        })
      }
      countsWakeup.wake()
    })
    const { now, mono } = basis
    const env: Env.Env = {
      ...basis,
      runSeries,
      counters,
      held,
      outage: Outage.make(store, counters, (e) => onCorrupt(e), now),
      wakeup,
      // The pool reads the same clock as the store's times: wall-clock epoch ms (Effect's
      // Clock), which survive a restart and agree across processes.
      pool: new WorkerPool.WorkerPool<Held.Held>({
        workers: resolved.workers,
        spans,
        logAnnotations: runtimeOptions.logAnnotations ?? true,
        // Failures are logged by default, as in memory (SPEC §16.5).
        logFailures: runtimeOptions.logFailures ?? true,
        now,
        onEnd: (h, exit, finishedAt) => {
          h.finished = true
          h.finishedAt = mono()
          const outcome = Run.outcome(exit)
          const runMetrics = runSeries(h.row.handler)
          runMetrics.ran(outcome.kind)
          // A manual run (SPEC §19.1) was not scheduled: it has no lateness to count.
          const late = Task.countedLateness(
            { scheduledFor: h.row.runAt, startedAt: h.startedAt, manual: h.row.kept !== undefined },
            h.row.createdAt,
          )
          if (late !== undefined) runMetrics.lateness.add(late / 1000)
          runMetrics.duration.add(Math.max(0, finishedAt - h.startedAt) / 1000)
          Queue.offerUnsafe(finished, { held: h, outcome, startedAt: h.startedAt, finishedAt })
          // Its worker is free now, before its completion commits: the dispatcher may claim.
          if (dispatch.wantsWorker) wakeup.wake()
        },
      }),
      finished,
      session: { held: store.session === undefined || !resolved.claim },
      closing: { closed: false },
      fatal: { error: undefined },
      progress: { lastStartedAt: undefined },
      dispatch,
    }
    // In-memory tasks (closures) beside the durable ones, in a scope of their own: the durable
    // close closes it at the same time as it hands runs back, under the same timeout and grace.
    const runtimeScope = yield* Scope.fork(yield* Scope.Scope)
    const runtimeMs = Options.runtimeShutdown(resolved)
    if (!("graceMs" in runtimeMs)) return yield* runtimeMs
    const runtime = yield* Scheduler.make({
      ...resolved.runtime,
      workers: resolved.workers,
      // Its gauge carries the same name as this scheduler's: only this one's background
      // assessment (below) sets it.
      health: { ...resolved.runtime?.health, background: false },
      // Its own timeout and grace, if given, only within the durable ones: one budget.
      shutdownTimeout: Math.min(resolved.shutdownMs, runtimeMs.shutdownMs),
      shutdownGrace: Math.min(resolved.graceMs, runtimeMs.graceMs),
    }).pipe(Effect.provideService(Clock.Clock, clock), Scope.provide(runtimeScope))
    const context = yield* Effect.context<Handler.Services<H>>()

    // ---------------------------------------------------------------- start
    const startedAt = now()
    yield* store.defineBreakers(
      [...resolved.breakers].map(([name, policy]) => ({ name, policy })),
      now(),
    )
    if (store.exclusive) {
      counters.recovered = yield* store.recover(now())
      if (counters.recovered > 0) {
        yield* Effect.logInfo(
          `tickwork durable: ${counters.recovered} run(s) cut off by a crash are due again`,
        )
      }
    }
    let stopping = false
    onCorrupt = (e) =>
      Effect.suspend(() => {
        if (env.fatal.error !== undefined) return Effect.void
        env.fatal.error = e
        stopping = true
        env.wakeup.wake()
        return Effect.andThen(
          Effect.logError(
            `tickwork durable: ${e.message}. This process claims nothing more and stops: the program fails with StoreCorrupt`,
          ).pipe(Effect.annotateLogs({ owner: resolved.owner, filename: e.filename })),
          Effect.sync(() => builder?.interruptUnsafe()),
        )
      })
    const dropLapsed = Leases.dropLapsed(env)
    yield* Effect.forkScoped(Completion.completer(env))
    const dispatcherFiber = yield* Effect.forkScoped(
      resolved.claim
        ? Dispatcher.dispatcher(env, context as Context.Context<never>, dropLapsed, () => stopping)
        : Effect.void,
    )
    yield* Effect.forkScoped(Leases.renewer(env))
    yield* Effect.forkScoped(Leases.guard(env))
    if (store.session !== undefined && resolved.claim)
      yield* Effect.forkScoped(Liveness.keeper(env))
    else if (store.signal !== undefined && Number.isFinite(resolved.pollMs))
      yield* Effect.forkScoped(Upkeep.listener(env))
    if (Number.isFinite(resolved.retentionMs)) yield* Effect.forkScoped(Upkeep.pruner(env))
    // This process's part of its name's gauges: the store's scheduled tasks and tasks by state
    // (store-wide), and its own runs in flight.
    const removeGauges = Metrics.contributeGauges(metricsName, metricsContext, {
      get pending() {
        return storeCounts?.scheduled ?? 0
      },
      get running() {
        return held.size
      },
      states: () => storeCounts ?? noCounts,
      waiting: () => storeWaiting,
    })
    yield* Effect.addFinalizer(() => Effect.sync(removeGauges))
    yield* Effect.forkScoped(
      StoreCounts.refresher(
        store.tally,
        (tally) => {
          storeCounts = tally.counts
          storeWaiting = tally.waiting
        },
        countsWakeup,
        { shared: Number.isFinite(resolved.pollMs), refreshMs: STORE_COUNTS_REFRESH_MS, mono },
      ),
    )
    countsWakeup.wake()

    // Finalizers run in reverse: this one runs before the fibers above are interrupted. The
    // runtime beside it closes inside it, at the same time: one budget for both.
    yield* Effect.addFinalizer((exit) =>
      Shutdown.close(env, {
        dispatcher: dispatcherFiber,
        stop: () => {
          stopping = true
        },
        closeRuntime: Scope.close(runtimeScope, exit),
      }).pipe(
        // A damaged store ends the program as a failure (a finalizer fails only as a defect).
        Effect.andThen(
          Effect.suspend(() =>
            env.fatal.error === undefined ? Effect.void : Effect.die(env.fatal.error),
          ),
        ),
      ),
    )

    // ---------------------------------------------------------------- operations
    const closedError = new CoreErrors.SchedulerClosed({
      message: "the durable scheduler is closed: it accepts no new tasks",
    })
    const prepare = (o: DurableTaskOptions, t: number) =>
      env.closing.closed
        ? closedError
        : Accept.prepare(
            o as Accept.TaskOptions,
            t,
            resolved.handlers,
            env.nextSeq,
            resolved.breakers,
            resolved.limits,
          )

    /**
     * Inserts tasks accepted at `t`, telling other processes (in the insert's own round trip on
     * PostgreSQL) when the work is due before their next poll; then wakes the dispatcher if the
     * work is due before it would look again.
     */
    const notifyWithinMs = Number.isFinite(resolved.pollMs) ? resolved.pollMs : 0
    const insert = (tasks: readonly [NewTask, ...Array<NewTask>], t: number) => {
      let earliest = Number.POSITIVE_INFINITY
      for (const task of tasks) if (task.slot < earliest) earliest = task.slot
      const notify = store.signal !== undefined && earliest <= t + notifyWithinMs
      // A map, not a tap of an Effect.sync: one step fewer for every schedule() call.
      return Effect.map(store.insert(tasks, { notify }), (generations) => {
        env.wakeup.wakeIfBefore(earliest)
        countsWakeup.wake()
        return generations
      })
    }

    // Schedules under deduplication keys (SPEC §20.3), counted in one series per scheduler.
    const series = Metrics.runSeries(metricsName, metricsContext)
    const keyed = Dedup.keyed(env, { series, notifyWithinMs, wake: [env.wakeup, countsWakeup] })

    const scheduleAll: DurableSchedulerShape["scheduleAll"] = (list) =>
      Effect.suspend((): Effect.Effect<ReadonlyArray<Task.TaskId>, DurableScheduleError> => {
        if (!Array.isArray(list))
          return Effect.fail(Options.optionError("options", list, "must be an array"))
        const t = now()
        const tasks: Array<NewTask> = []
        for (const o of list) {
          const p = prepare(o, t)
          if (!("slot" in p)) return Effect.fail(p)
          tasks.push(p)
        }
        if (tasks.length === 0) return Effect.succeed([])
        const all = tasks as unknown as readonly [NewTask, ...Array<NewTask>]
        if (tasks.some((x) => x.dedup !== undefined))
          return Effect.map(keyed(list, all, t), (done) => done.map((d) => d.id as Task.TaskId))
        return insert(all, t).pipe(Effect.as(tasks.map((x) => x.id as Task.TaskId)))
      })

    const scheduleDeduplicated: DurableSchedulerShape["scheduleDeduplicated"] = (o) =>
      Effect.suspend((): ReturnType<DurableSchedulerShape["scheduleDeduplicated"]> => {
        const t = now()
        const p = prepare(o as DurableTaskOptions, t)
        if (!("slot" in p)) return Effect.fail(p)
        const done =
          p.dedup === undefined
            ? Effect.as(insert([p], t), [{ id: p.id, outcome: "created" } as Dedup.Keyed])
            : keyed([o as DurableTaskOptions], [p], t)
        return Effect.map(done, ([d]) => d as { id: Task.TaskId } & Dedup.Keyed)
      })

    // scheduleDeduplicated's id, without building its answer for the common case of no key.
    const schedule: DurableSchedulerShape["schedule"] = (o) =>
      Effect.suspend((): ReturnType<DurableSchedulerShape["schedule"]> => {
        const t = now()
        const p = prepare(o, t)
        if (!("slot" in p)) return Effect.fail(p)
        return p.dedup === undefined
          ? Effect.as(insert([p], t), p.id as Task.TaskId)
          : Effect.map(keyed([o], [p], t), ([d]) => (d as Dedup.Keyed).id as Task.TaskId)
      })

    const ensure: DurableSchedulerShape["ensure"] = (list, ensureOptions) =>
      Effect.suspend(() =>
        env.closing.closed
          ? Effect.fail(closedError)
          : Ensure.ensure(
              env,
              {
                prepare: (o, t) => prepare(o as DurableTaskOptions, t),
                insert: (task, t) => insert([task], t),
              },
              list as ReadonlyArray<Accept.TaskOptions>,
              ensureOptions,
            ),
      )

    const cancel: DurableSchedulerShape["cancel"] = (id, cancelOptions) =>
      Effect.gen(function* () {
        const found = yield* store.cancel(id, now())
        if (Option.isNone(found)) return false
        const c = found.value
        env.publish(Events.make("cancelled", { id, ...c }, now(), c.leaseOwner, { cause: c.from }))
        const h = held.ofTask(id)
        if (cancelOptions?.interrupt === true && h !== undefined && !h.finished) {
          yield* env.pool.interrupt((t) => t === h)
        }
        return true
      })

    const info: DurableSchedulerShape["info"] = (id) =>
      Effect.map(store.get(id), Option.map(infoOf))

    const queryOf = (filter: DurableTaskFilter | undefined) => ({
      state: filter?.state,
      tag: filter?.tag,
      kind: filter?.kind,
      handler: filter?.handler,
    })
    const tasks: DurableSchedulerShape["tasks"] = (filter) =>
      Effect.suspend((): ReturnType<DurableSchedulerShape["tasks"]> => {
        const limit = Options.positiveInt("limit", filter?.limit, 1_000, Options.bounds.limit)
        if (typeof limit !== "number") return Effect.fail(limit)
        return Effect.map(store.list({ ...queryOf(filter), after: filter?.after, limit }), (rows) =>
          rows.map(infoOf),
        )
      })

    const breakerInfo = (v: BreakerView): Kernel.BreakerInfo => {
      const b = v.breaker
      return {
        name: b.name,
        shared: b.shared,
        state: b.state,
        failures: b.failures,
        policy: b.policy,
        opens: b.opens,
        openedAt: b.openedAt ?? undefined,
        halfOpenAt: b.state === "open" ? (b.halfOpenAt ?? undefined) : undefined,
        probe: (b.probe ?? undefined) as Task.TaskId | undefined,
        tasks: v.tasks as ReadonlyArray<Task.TaskId>,
        held: v.held as ReadonlyArray<Task.TaskId>,
      }
    }
    const breakers: DurableSchedulerShape["breakers"] = Effect.map(store.breakers, (views) =>
      views.map(breakerInfo),
    )
    const wake = (ids: ReadonlyArray<Task.TaskId>) =>
      Effect.sync(() => {
        if (ids.length > 0) env.wakeup.wake()
      })

    const assessHealth: Effect.Effect<Health.Health> = Effect.gen(function* () {
      // Work this process could run that is due now (a failed read: the store is failing).
      const due = resolved.claim
        ? yield* Effect.exit(store.nextDue(resolved.names))
        : Exit.succeed(undefined)
      const t = now()
      const failingSince = env.outage.failingSince() ?? (Exit.isFailure(due) ? t : undefined)
      const next = Exit.isSuccess(due) ? due.value : undefined
      const health = Health.assess(
        {
          now: t,
          dueSince: next !== undefined && next <= t && !env.closing.closed ? next : undefined,
          // A process that has started nothing yet counts from its own start.
          lastStartedAt: env.progress.lastStartedAt ?? startedAt,
          storeFailingSince: failingSince,
          uncommitted: counters.uncommitted,
          corrupt: env.fatal.error?.message,
        },
        { stallMs: resolved.stallMs, storeMs: resolved.storeFailureMs },
      )
      yield* Health.record(runtimeOptions.name ?? "default", health)
      return health
    })
    // The gauge is kept current in the background, one store read every Health.refreshMs: a
    // stall or a failing store shows with nobody calling `health`. It wakes whether or not there
    // is work (another process's insert is seen only by reading), so it is off where only calls
    // read health: the test layer, where it would cost a wake per 5 virtual seconds.
    if (resolved.healthBackground)
      yield* Effect.forkScoped(
        Effect.forever(Effect.andThen(Effect.sleep(Health.refreshMs), assessHealth)),
      )

    /** The dispatcher waits (for a due time, a poll or an insert), or this process never claims. */
    const parked = () => !resolved.claim || env.wakeup.idle
    const durable = DurableScheduler.of({
      owner: resolved.owner,
      schedule,
      scheduleDeduplicated,
      scheduleAll,
      ensure,
      pause: (id) => Controls.pause(env, id),
      resume: (id) =>
        Effect.tap(Controls.resume(env, id), (ok) => Effect.sync(() => ok && env.wakeup.wake())),
      retry: (id, retryOptions) =>
        Effect.tap(RetryControl.retryAsked(env, id, retryOptions?.slot), () =>
          Effect.sync(() => env.wakeup.wake()),
        ),
      trigger: (id) =>
        Effect.tap(TriggerControl.triggerTask(env, id), () => Effect.sync(() => env.wakeup.wake())),
      update: (id, changes) =>
        Effect.tap(Controls.update(env, id, changes as Controls.Changes), (ok) =>
          Effect.sync(() => ok && env.wakeup.wake()),
        ),
      tasks,
      pauseAll: (filter) =>
        Controls.changeAll(env, queryOf(filter), (id) => Controls.pause(env, id)),
      resumeAll: (filter) =>
        Effect.tap(
          Controls.changeAll(env, queryOf(filter), (id) => Controls.resume(env, id)),
          wake,
        ),
      cancelAll: (filter) => Controls.changeAll(env, queryOf(filter), (id) => cancel(id)),
      breakers,
      breaker: (name) =>
        Effect.map(store.breakers, (views) => {
          const shared = views.find((v) => v.breaker.shared && v.breaker.name === name)
          const own = views.find((v) => !v.breaker.shared && v.breaker.name === name)
          const found = shared ?? own
          return found === undefined ? Option.none() : Option.some(breakerInfo(found))
        }),
      cancel,
      status: (id) =>
        Effect.map(
          store.state(id),
          Option.getOrElse(() => "unknown" as const),
        ),
      info,
      ledger: TypedLedger.read(store, resolved.handlers),
      occurrences: Stream.fromPubSub(occurrences),
      stats: Effect.map(Effect.all([store.tally, store.dedupKeys]), ([tally, keys]) => ({
        tasks: tally.counts,
        waiting: tally.waiting,
        dedup: { keys, ...keyed.counted },
        owner: resolved.owner,
        inFlight: held.size,
        ...counters,
        sessionHeld: env.session.held,
        closed: env.closing.closed,
      })),
      health: assessHealth,
      poll: Effect.sync(() => env.wakeup.wake()),
      idle: Effect.sync(() => parked() && held.size === 0),
      waitsOnHandlers: Effect.sync(() => parked() && held.inHandler === held.size),
    })
    return { durable, runtime }
  })

/**
 * A layer providing the {@link DurableScheduler} and a runtime `Scheduler` for in-memory tasks.
 * It needs a `TaskStore` (`Sqlite.layer` or `Postgres.layer`) and the handlers' services.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <H extends Handler.Any>(
  options: DurableSchedulerOptions<H>,
): Layer.Layer<
  DurableScheduler | Scheduler.Scheduler,
  CoreErrors.InvalidOption | StoreError,
  TaskStore | Handler.Services<H>
> =>
  Layer.effectContext(
    Effect.map(make(options), ({ durable, runtime }) =>
      Context.make(DurableScheduler, durable).pipe(Context.add(Scheduler.Scheduler, runtime)),
    ),
  )
