/**
 * The `Scheduler` service: tickwork's kernel run by a timing actor and a bounded pool of
 * workers, as an Effect service you provide with a `Layer`.
 *
 * Jobs are Effects. Scheduling captures the caller's context, so a job may require any service
 * the caller has. Every outcome — success, typed failure, defect, interruption, timeout — is
 * recorded in the occurrence ledger, published on {@link SchedulerShape.occurrences}, counted in
 * the metrics and traced with a span per run. Closing the layer's scope stops the scheduler
 * under its shutdown policy.
 *
 * **Example** (A recurring job with retries, in an Effect program)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Schedule, Scheduler } from "@tickwork/runtime"
 *
 * const program = Effect.gen(function* () {
 *   const scheduler = yield* Scheduler.Scheduler
 *   const id = yield* scheduler.schedule({
 *     id: "refresh-token",
 *     schedule: Schedule.fixedRate("2 seconds"),
 *     retry: { maxRetries: 3, base: "100 millis" },
 *     job: Effect.log("refreshing"),
 *   })
 *   return yield* scheduler.status(id)
 * })
 * Effect.runPromise(Effect.scoped(program.pipe(Effect.provide(Scheduler.layer({ workers: 4 })))))
 * ```
 *
 * @since 0.1.0
 */
import { Declared, Errors, Kernel, Options, Random, type Task, Time } from "@tickwork/core"
import {
  Clock,
  Context,
  Effect,
  Scheduler as EffectScheduler,
  Layer,
  Option,
  PubSub,
  type Scope,
  Tracer,
} from "effect"
import * as Health from "./Health.ts"
import { type Clocks, TimingActor } from "./internal/actor.ts"
import { isRunSyncScheduler, withoutFiberLocals } from "./internal/context.ts"
import * as Ensure from "./internal/ensure.ts"
import { attach, combine, Inspection } from "./internal/inspection.ts"
import {
  checkSchedule,
  jobError,
  parse,
  type SchedulerOptions,
  updateKeys,
} from "./internal/options.ts"
import type {
  LedgerRead,
  RunServices,
  ScheduleOptions,
  SchedulerShape,
  UpdateChanges,
} from "./internal/shape.ts"
import * as Ledger from "./Ledger.ts"
import * as Metrics from "./Metrics.ts"
import { Recorder } from "./Recorder.ts"
import type { PoolJob } from "./WorkerPool.ts"

// Declared beside their parsing (internal/options.ts), which the timing actor shares: the actor
// importing this module for them made the two import each other.
export type { SchedulerOptions, ShutdownPolicy, ShutdownReport } from "./internal/options.ts"
export type {
  JobInput,
  LedgerRead,
  RetryOptions,
  RunServices,
  ScheduleOptions,
  SchedulerShape,
  SchedulerStats,
  UpdateChanges,
} from "./internal/shape.ts"
export type { AcceptedOptions, Listener } from "./Recorder.ts"

/**
 * The Scheduler service.
 *
 * @category services
 * @since 0.1.0
 */
export class Scheduler extends Context.Service<Scheduler, SchedulerShape>()(
  "@tickwork/runtime/Scheduler",
) {}

const optionError = Options.invalid
const millis = (field: string, input: Time.DurationInput | undefined, fallback: number) =>
  Options.millis(field, input, fallback)

/**
 * Builds a scheduler in the current scope: starts its timing actor, and on scope close applies
 * the shutdown policy. Fails with `InvalidOption` for bad options, unknown keys included.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  options: SchedulerOptions = {},
): Effect.Effect<SchedulerShape, Errors.InvalidOption, Scope.Scope> =>
  Effect.gen(function* () {
    const settings = parse(options)
    if (settings instanceof Errors.InvalidOption) return yield* settings
    const {
      name,
      workers,
      ledgerPerTask,
      ledgerCapacity,
      streamCapacity,
      maxResultBytes,
      shutdownTimeoutMs,
      shutdownGraceMs,
      slowRunMs,
      defaultTimeoutMs,
      policy,
      stallMs,
      background,
      seed,
    } = settings
    const kernel = yield* Effect.try({
      try: () =>
        new Kernel.Kernel<PoolJob>({
          random: Random.seeded(seed),
          ...(options.breakers === undefined ? {} : { breakers: options.breakers }),
          ...(options.limits === undefined ? {} : { limits: options.limits }),
          ...(options.retention === undefined ? {} : { retention: options.retention }),
        }),
      catch: (error) => error as Errors.InvalidOption,
    })

    // The layer's services, without the fiber-locals of the fiber that built it.
    const context = withoutFiberLocals(yield* Effect.context<never>())
    // Delays are measured on a monotonic clock and `at`/cron name wall-clock instants (SPEC §2):
    // the scheduler's time moves with the first and is re-anchored to the second when it steps.
    // Unless a Clock was provided (TestClock, or the application's own), these are
    // performance.now() and Date.now(); a provided Clock gives both (monotonicTimeNanos and
    // currentTimeMillis).
    const liveClock = !context.mapUnsafe.has(Clock.Clock.key)
    const effectClock = yield* Clock.Clock
    let lastNanos = -1n
    let lastMono = 0
    const clocks: Clocks = liveClock
      ? {
          mono: () => performance.now(),
          wall: () => Date.now(),
          preciseWall: () => performance.timeOrigin + performance.now(),
        }
      : {
          mono: () => {
            // Converted once per reading that changed: virtual time stands still between
            // adjustments, and two BigInt divisions per read cost more than the kernel's take.
            const nanos = effectClock.monotonicTimeNanosUnsafe()
            if (nanos !== lastNanos) {
              lastNanos = nanos
              // Split before converting: epoch nanoseconds are past 2^53, a Number would round.
              lastMono = Number(nanos / 1_000_000n) + Number(nanos % 1_000_000n) / 1e6
            }
            return lastMono
          },
          wall: () => effectClock.currentTimeMillisUnsafe(),
        }
    const occurrences = yield* PubSub.sliding<Ledger.StreamItem>(streamCapacity)
    const inspection = options.inspect === undefined ? undefined : new Inspection(options.inspect)
    const listener =
      inspection === undefined ? options.listener : combine(inspection, options.listener)
    const recorder = new Recorder({
      ledger: new Ledger.Store(
        ledgerPerTask,
        options.retention?.maxFinished ?? 10_000,
        ledgerCapacity,
      ),
      occurrences,
      listener,
      metrics: Metrics.forScheduler(name),
      context,
      states: () => kernel.stats(),
      waiting: () => kernel.stats().waiting,
    })
    yield* Effect.addFinalizer(() => Effect.sync(recorder.closeGauges))
    const actor = new TimingActor({
      kernel,
      recorder,
      workers,
      spans:
        options.spans === undefined || options.spans === "auto"
          ? (yield* Tracer.Tracer) !== Tracer.nativeTracer
          : options.spans,
      logAnnotations: options.logAnnotations ?? true,
      logFailures: options.logFailures ?? true,
      shutdown: policy,
      shutdownTimeoutMs,
      shutdownGraceMs,
      slowRunMs,
      clocks,
      timerSleeps: liveClock,
    })
    const createdAt = actor.now()
    // The actor yields every few hundred runs of a backlog so Node's timers and I/O get a turn.
    // Under the scheduler `Effect.runSync` hands to the fibers it forks, a yield is a microtask,
    // and a backlog of a million runs would hold the event loop for its whole length.
    yield* Effect.forkScoped(
      isRunSyncScheduler(yield* EffectScheduler.Scheduler)
        ? Effect.provideService(
            actor.run,
            EffectScheduler.Scheduler,
            new EffectScheduler.MixedScheduler("async"),
          )
        : actor.run,
    )
    const healthBounds: Health.Bounds = { ...Health.defaultBounds, stallMs }
    const assessNow = () => {
      const now = actor.now()
      const next = kernel.nextSlot()
      const signals: Health.Signals = {
        now,
        dueSince: next !== undefined && next <= now && !actor.closed ? next : undefined,
        // A scheduler that has started nothing yet counts from its own start.
        lastStartedAt: actor.lastStartedAt ?? createdAt,
      }
      return { health: Health.assess(signals, healthBounds), signals, next }
    }
    // The gauge is kept current in the background: a stall shows with nobody calling `health`.
    // It looks only when the assessment could change (Health.recheckAt), O(1) each time, and a
    // command that brings work forward wakes it (the actor's healthWakeup).
    if (background)
      yield* Effect.forkScoped(
        Effect.gen(function* () {
          const wakeup = actor.healthWakeup
          for (;;) {
            const { health, signals, next } = assessNow()
            yield* Health.record(name, health)
            const at = Health.recheckAt(
              health,
              signals,
              actor.closed ? undefined : next,
              healthBounds,
            )
            // A command that came while this looked (or recorded) has woken it already: the wait
            // then returns at once and it looks again.
            wakeup.wakeBefore = at === undefined ? Number.POSITIVE_INFINITY : at - stallMs
            yield* wakeup.wait(at === undefined ? undefined : at - signals.now)
          }
        }),
      )
    // Finalizers run in reverse order: the shutdown runs before the actor is interrupted.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(actor.shutdown(), (report) =>
        Effect.sync(() => {
          try {
            options.onShutdown?.(report)
          } catch (error) {
            return error
          }
          return undefined
        }).pipe(
          Effect.flatMap((error) =>
            error === undefined
              ? Effect.void
              : Effect.logError("tickwork onShutdown threw; the scheduler closed anyway", error),
          ),
          // A run that ignored interruption outlives the close: say which, once.
          Effect.andThen(
            report.abandoned.length === 0
              ? Effect.void
              : Effect.logWarning(
                  `tickwork scheduler closed after shutdownTimeout ${shutdownTimeoutMs} ms + shutdownGrace ${shutdownGraceMs} ms without ${report.abandoned.length} run(s) that ignored interruption: ${report.abandoned.slice(0, 20).join(", ")}${report.abandoned.length > 20 ? ` and ${report.abandoned.length - 20} more` : ""}`,
                ).pipe(Effect.annotateLogs({ scheduler: name })),
          ),
          Effect.andThen(
            Effect.logInfo("tickwork scheduler closed").pipe(
              Effect.annotateLogs({
                scheduler: name,
                policy: report.policy,
                pending: report.pending.length,
                finished: report.finished.length,
                cancelled: report.cancelled.length,
                interrupted: report.interrupted.length,
                abandoned: report.abandoned.length,
              }),
            ),
          ),
        ),
      ),
    )

    const closedError = new Errors.SchedulerClosed({
      message: "the scheduler is closed: it accepts no new tasks",
    })

    // The layer's services with the caller's on top, merged once per caller context: a loop of
    // schedule calls from one fiber shares one merged context.
    let lastCaller: Context.Context<never> | undefined
    let lastMerged: Context.Context<never> = context
    const contextFor = (caller: Context.Context<never>): Context.Context<never> => {
      if (caller !== lastCaller) {
        lastCaller = caller
        lastMerged = Context.merge(context, withoutFiberLocals(caller))
      }
      return lastMerged
    }

    let lastJob: PoolJob | undefined
    /** Accepts `o` now, synchronously: the id (of the key's holder, with `dedup`) or the error. */
    const acceptNow = <A, E, R>(
      o: ScheduleOptions<A, E, R>,
      callerContext: Context.Context<never>,
    ): Task.TaskId | Errors.ScheduleError | Errors.SchedulerClosed => {
      if (actor.closed) return closedError
      const checked = checkSchedule(o, defaultTimeoutMs, maxResultBytes)
      if (checked instanceof Errors.InvalidOption) return checked
      const { timeoutMs, keepResult } = checked
      const input = o.job
      const context = contextFor(callerContext)
      const link = Context.getOrUndefined(callerContext, Tracer.ParentSpan)
      // Tasks scheduled in a row with the same job, context, timeout and link (a loop of
      // schedule calls) share one PoolJob: ~50 bytes less per pending task.
      let job = lastJob
      if (
        job === undefined ||
        job.job !== input ||
        job.context !== context ||
        job.timeoutMs !== timeoutMs ||
        job.link !== link ||
        job.keepResult !== keepResult
      ) {
        // The job's requirements R are met by this context, which its runs see.
        job = { job: input as PoolJob["job"], context, timeoutMs, link, keepResult }
        lastJob = job
      }
      // One literal of the kernel's options, every key present: its shape is the same on
      // every call. Object rest and spread made a dictionary-mode copy that the kernel's
      // checks then read by hash, ~1 µs per call.
      return actor.accept(
        {
          job,
          schedule: o.schedule,
          id: o.id,
          priority: o.priority,
          retry: o.retry,
          missedRuns: o.missedRuns,
          pauseAfterConsecutiveFailures: o.pauseAfterConsecutiveFailures,
          window: o.window,
          tags: o.tags,
          breaker: o.breaker,
          group: o.group,
          key: o.key,
          dedup: o.dedup,
        },
        o,
      )
    }

    const schedule = <A, E, R>(
      o: ScheduleOptions<A, E, R>,
    ): Effect.Effect<
      Task.TaskId,
      Errors.ScheduleError | Errors.SchedulerClosed,
      Exclude<R, RunServices>
    > =>
      Effect.flatMap(Effect.context<never>(), (callerContext) => {
        const id = acceptNow(o, callerContext)
        return typeof id === "string" ? Effect.succeed(id) : Effect.fail(id)
      })

    // The actor's outcome is read in the same synchronous step as the accept: no schedule between.
    const scheduleDeduplicated = <A, E, R>(
      o: ScheduleOptions<A, E, R>,
    ): Effect.Effect<
      Kernel.Scheduled,
      Errors.ScheduleError | Errors.SchedulerClosed,
      Exclude<R, RunServices>
    > =>
      Effect.flatMap(Effect.context<never>(), (callerContext) => {
        const id = acceptNow(o, callerContext)
        return typeof id === "string"
          ? Effect.succeed({ id, outcome: actor.outcome })
          : Effect.fail(id)
      })

    /**
     * `update`, recorded as core's `Declared.changeOf` says: with `ensured` (the fields `ensure`
     * found changed) as an ensure's, without it as an update of the fields given.
     */
    const updateAs = <A = never, E = never, R = never>(
      id: string,
      changes: UpdateChanges<A, E, R>,
      ensured?: ReadonlyArray<Declared.Field>,
    ): Effect.Effect<boolean, Errors.ScheduleError, Exclude<R, RunServices>> =>
      Effect.flatMap(
        Effect.context<never>(),
        (callerContext): Effect.Effect<boolean, Errors.ScheduleError> => {
          if (typeof changes !== "object" || changes === null) {
            return Effect.fail(optionError("changes", changes, "must be an object"))
          }
          const unknownChange = Errors.unknownKey(changes, updateKeys)
          if (unknownChange !== undefined) return Effect.fail(unknownChange)
          const { timeout, job: input, ...rest } = changes
          const info = kernel.info(id)
          if (info === undefined) return Effect.succeed(false)
          let job: PoolJob | undefined
          if (input !== undefined || timeout !== undefined) {
            // A new job, or a new timeout on the job it has: the pool job is rebuilt.
            const current = kernel.jobOf(id)
            const timeoutMs = millis("timeout", timeout, current?.timeoutMs ?? defaultTimeoutMs)
            if (typeof timeoutMs !== "number") return Effect.fail(timeoutMs)
            const badJob = input === undefined ? undefined : jobError(input)
            if (badJob !== undefined) return Effect.fail(badJob)
            job =
              input === undefined && current !== undefined
                ? { ...current, timeoutMs }
                : {
                    job: input as PoolJob["job"],
                    context: contextFor(callerContext),
                    timeoutMs,
                    // A new job keeps the task's choice of keeping results.
                    keepResult: current?.keepResult,
                    link: Option.getOrUndefined(
                      Context.getOption(callerContext, Tracer.ParentSpan),
                    ),
                  }
          }
          const done = actor.update(
            id,
            job === undefined ? rest : { ...rest, job },
            Declared.changeOf(ensured === undefined ? { update: changes } : { ensure: ensured }),
          )
          return typeof done === "boolean" ? Effect.succeed(done) : Effect.fail(done)
        },
      )

    const update = <A = never, E = never, R = never>(
      id: string,
      changes: UpdateChanges<A, E, R>,
    ): Effect.Effect<boolean, Errors.ScheduleError, Exclude<R, RunServices>> =>
      updateAs(id, changes)

    const ensure = <A, E, R>(
      declared: ReadonlyArray<ScheduleOptions<A, E, R> & { readonly id: string }>,
      ensureOptions?: Declared.EnsureOptions,
    ): Effect.Effect<
      Declared.Report,
      Errors.ScheduleError | Errors.SchedulerClosed,
      Exclude<R, RunServices>
    > =>
      Effect.suspend(() => {
        if (actor.closed) return Effect.fail(closedError)
        if (!Array.isArray(declared))
          return Effect.fail(optionError("tasks", declared, "must be an array"))
        const set = ensureOptions?.set
        const badBatch = Declared.checkBatch(
          declared.map((o) => (typeof o === "object" && o !== null ? o.id : undefined)),
          set,
        )
        if (badBatch !== undefined) return Effect.fail(badBatch)
        // Every declaration decided before anything changes (SPEC §18.2).
        const decided = Ensure.decideAll<ScheduleOptions<A, E, R> & { readonly id: string }>(
          kernel,
          declared,
          set,
          actor.now(),
          defaultTimeoutMs,
        )
        if ("error" in decided) return Effect.fail(decided.error)
        const plans = decided.plans
        return Effect.gen(function* () {
          const created: Array<Task.TaskId> = []
          const updated: Array<{ id: Task.TaskId; fields: ReadonlyArray<Declared.Field> }> = []
          const unchanged: Array<Task.TaskId> = []
          for (const { o, d } of plans) {
            const id = o.id as Task.TaskId
            if (d._tag === "create") {
              created.push(yield* schedule(o))
            } else if (d._tag === "update") {
              yield* updateAs(
                id,
                Declared.changesOf(o, d.fields) as UpdateChanges<A, E, R>,
                d.fields,
              )
              updated.push({ id, fields: d.fields })
            } else unchanged.push(id)
          }
          const cancelled: Array<Task.TaskId> = []
          if (set !== undefined) {
            const members = kernel
              .tasks({ tag: set })
              .filter(
                (t) => t.state === "scheduled" || t.state === "running" || t.state === "paused",
              )
              .map((t) => t.id as string)
            const ids = plans.map((p) => p.o.id as string)
            for (const id of Declared.undeclared(members, ids)) {
              if (yield* actor.cancel(id, false)) cancelled.push(id as Task.TaskId)
            }
          }
          return { created, updated, unchanged, cancelled }
        })
      })

    const service = Scheduler.of({
      schedule,
      scheduleDeduplicated,
      ensure,
      cancel: (id, cancelOptions) => actor.cancel(id, cancelOptions?.interrupt === true),
      status: (id) => Effect.sync(() => kernel.status(id)),
      info: (id) => Effect.sync(() => Option.fromNullishOr(kernel.info(id))),
      tasks: (filter) => Effect.sync(() => kernel.tasks(filter)),
      pause: (id) => Effect.sync(() => actor.pause(id)),
      resume: (id) => Effect.sync(() => actor.resume(id)),
      trigger: (id) => Effect.suspend(() => manualResult(actor.manual("trigger", id))),
      retry: (id, retryOptions) =>
        Effect.suspend((): Effect.Effect<void, Errors.ManualRunRefused | Errors.InvalidTime> => {
          if (retryOptions?.slot === undefined) return manualResult(actor.manual("retry", id))
          // SPEC §19.7: a bad slot is a typed error naming the field, before anything is read.
          const slot = Time.toInstant(retryOptions.slot, "slot")
          return typeof slot === "number"
            ? manualResult(actor.manual("retry", id, slot))
            : Effect.fail(slot)
        }),
      update,
      pauseAll: (filter) => Effect.sync(() => actor.bulk("pause", filter)),
      resumeAll: (filter) => Effect.sync(() => actor.bulk("resume", filter)),
      cancelAll: (filter) => Effect.sync(() => actor.bulk("cancel", filter)),
      explain: (id, count) =>
        Effect.sync(() => Option.fromNullishOr(kernel.explain(id, actor.now(), count))),
      breakers: Effect.sync(() => kernel.breakers()),
      breaker: (name) => Effect.sync(() => Option.fromNullishOr(kernel.breaker(name))),
      ledger: ((id: string, read?: { readonly generation: number }) => {
        if (read === undefined) return Effect.sync(() => actor.history(id))
        const generation = read.generation
        if (!Number.isSafeInteger(generation) || generation < 1) {
          return Effect.fail(
            new Errors.InvalidOption({
              field: "generation",
              value: generation,
              message: `generation must be a positive integer, got ${String(generation)}`,
            }),
          )
        }
        return Effect.sync(() => actor.history(id, generation))
      }) as LedgerRead,
      occurrences: recorder.stream(),
      stats: Effect.sync(() => ({
        ...kernel.stats(),
        name,
        workers,
        closed: actor.closed,
        actorWakes: actor.wakes,
        listenerErrors: recorder.listenerErrors,
        clockSteps: actor.reanchors,
      })),
      nextSlot: Effect.sync(() => Option.fromNullishOr(kernel.nextSlot())),
      health: Effect.suspend(() => {
        const { health } = assessNow()
        return Effect.as(Health.record(name, health), health)
      }),
    })
    if (inspection !== undefined) attach(service, inspection)
    return service
  })

const manualResult = (
  r: true | Errors.ManualRunRefused,
): Effect.Effect<void, Errors.ManualRunRefused> => (r === true ? Effect.void : Effect.fail(r))

/**
 * A layer providing {@link Scheduler}; closing its scope shuts the scheduler down.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options?: SchedulerOptions): Layer.Layer<Scheduler, Errors.InvalidOption> =>
  Layer.effect(Scheduler, make(options))
