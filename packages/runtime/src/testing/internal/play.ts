/**
 * @internal
 * Playing a lifecycle path against a real scheduler on the test clock (public through
 * `LifecyclePaths`): each machine event realised with the scheduler's own means, and the task's
 * status, info and new ledger records compared with the machine's after every step.
 */
import { type MissedRun, type Retry, Schedule, type Task, type Time } from "@tickwork/core"
import { Clock, Data, Effect, Option, Queue } from "effect"
import { TestClock } from "effect/testing"
import type * as Ledger from "../../Ledger.ts"
import * as Scheduler from "../../Scheduler.ts"
import { type Input, type Path, recurringOf, type Step } from "./paths.ts"

// ------------------------------------------------------------------ playing a path

/**
 * What a job is asked to do on a run: the path's next event is `SUCCEED` or `FAIL`.
 *
 * @category models
 * @since 0.1.0
 */
export type PlannedOutcome = "succeed" | "fail"

/**
 * The task a path is played with: a user's task options (its job replaced by one that does what
 * the path plans), or nothing, for a task made up from the path's {@link Input}.
 *
 * `retry.maxRetries` and `pauseAfterConsecutiveFailures` come from the path (they must agree when
 * given). Without a `schedule`, a one-off task runs 1 s after it is scheduled, a recurring one
 * every second; a `"may-end"` path needs a custom schedule (or none), which the driver wraps to
 * end exactly where the path says.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskUnderTest<R = never> {
  /** Default: `path-<n>`. */
  readonly id?: string
  readonly schedule?: Schedule.Schedule
  /** Default backoff: 100 ms, doubling, no jitter. */
  readonly retry?: Retry.RetryPolicy
  readonly pauseAfterConsecutiveFailures?: number
  readonly priority?: Task.Priority
  readonly missedRuns?: MissedRun.MissedRunPolicy
  readonly timeout?: Time.DurationInput
  /**
   * The catch-up window (SPEC §3). For a path whose input `expires`, the one-shot's deadline:
   * default 5 minutes, so the runs and retries the path starts fall well inside it, and the
   * `EXPIRE` step's clock move past it keeps the gate runs under the slow-run warning (10 min).
   */
  readonly window?: Time.DurationInput
  /**
   * The job, told what the path needs from this run: it must succeed for `"succeed"` and fail
   * (any failure: a typed error, a defect, a timeout) for `"fail"`. Typically it sets up a fake
   * dependency to answer accordingly, then runs the real job. Default: `Effect.void`, or a
   * failure with `"planned failure"`.
   */
  readonly job?: (outcome: PlannedOutcome, run: Task.RunInfo) => Effect.Effect<unknown, unknown, R>
}

/**
 * Options of {@link play}.
 *
 * @category models
 * @since 0.1.0
 */
export interface PlayOptions<R = never> {
  readonly task?: TaskUnderTest<R>
  /**
   * How `CANCEL` treats a running run: `"interrupt"` (default) interrupts its fiber
   * (`cancel(id, { interrupt: true })`, outcome `interrupted`); `"let-finish"` cancels
   * cooperatively and lets the run succeed (it reports, and is never rescheduled).
   */
  readonly cancelRunning?: "interrupt" | "let-finish"
  /** Fiber turns to wait for a step's effect at most. Default 10,000. */
  readonly maxTurns?: number
}

/**
 * The scheduler did something else than the machine says, at `step` (0 = right after
 * scheduling) of `path`.
 *
 * @category errors
 * @since 0.1.0
 */
export class PathMismatch extends Data.TaggedError("PathMismatch")<{
  readonly message: string
  readonly path: string
  readonly step: number
}> {}

/**
 * What a played path did.
 *
 * @category models
 * @since 0.1.0
 */
export interface PlayResult {
  readonly path: string
  readonly id: Task.TaskId
  readonly steps: number
  /** The task's ledger when the path ended (format it with `Trace.line`). */
  readonly ledger: ReadonlyArray<Ledger.Occurrence>
}

let played = 0

/** The outcome as a path sees it: a success, an interruption, or any other failure. */
const outcomeClass = (kind: Task.Outcome["kind"]) =>
  kind === "succeeded" ? "succeeded" : kind === "interrupted" ? "interrupted" : "failed"

/** A ledger record without its times and slots: what a path step determines. */
const summary = (o: Ledger.Occurrence): string => {
  switch (o.kind) {
    case "ran":
    case "retried":
      return `${o.kind} attempt=${o.attempt} run=${o.runNumber} ${outcomeClass(o.outcome.kind)} -> ${o.state} (${o.continuation})`
    case "cancelled":
      return `cancelled from=${o.from}${o.interrupted ? " interrupted" : ""}`
    case "updated":
      return `updated ${o.fields.join(",")} cause=${o.cause}`
    case "expired":
      return `expired attempt=${o.attempt}`
    case "paused":
    case "resumed":
      return `${o.kind} reason=${o.reason}`
    case "deduplicated":
      return `${o.result} key=${o.key}`
    default:
      return `${o.kind} cause=${o.cause} count=${o.count}`
  }
}

/**
 * Plays `path` against the {@link Scheduler.Scheduler} in context, which must run on Effect's
 * `TestClock` (use the `TestScheduler` layer, one fresh scheduler per path). Schedules the task,
 * then realises each step with the scheduler's own means — `START`: moves the clock to the task's
 * pending slot and waits until its run has started; `SUCCEED` / `FAIL`: lets the running job
 * succeed or fail; `CANCEL`: `scheduler.cancel(id)`; `PAUSE` / `RESUME`: `scheduler.pause(id)` /
 * `scheduler.resume(id)` (while the task runs, a pause is requested or withdrawn, and the run's
 * end then pauses it); `EXPIRE`: moves the clock past the one-shot's deadline (`explain(id)`)
 * and lets a worker take it — and after each step fails with {@link PathMismatch} unless the
 * task's status, its attempt, run number, consecutive failures and pause reason, the new ledger
 * records and the answer of `cancel`, `pause` or `resume` are exactly what the machine says.
 *
 * While the task is `scheduled`, every worker is held by a "gate" run (ids `<id>:gate-<n>`, high
 * priority): `START` releases one, so a slot due at once (a schedule that starts now, a retry
 * with no backoff) waits for the path like any other. Gates are the only other tasks the
 * scheduler sees.
 *
 * **Example** (Playing every path of a one-off task with retries)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { LifecyclePaths, TestScheduler } from "@tickwork/runtime/testing"
 *
 * const plan = LifecyclePaths.generate({ maxRetries: 2, pauseAfter: 0, recurring: false })
 * for (const path of plan.paths) {
 *   await TestScheduler.run(LifecyclePaths.play(path)) // rejects with a PathMismatch on the first difference
 * }
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const play = <R = never>(
  path: Path,
  options: PlayOptions<R> = {},
): Effect.Effect<PlayResult, PathMismatch, Scheduler.Scheduler | R> =>
  Effect.gen(function* () {
    const scheduler = yield* Scheduler.Scheduler
    const task = options.task ?? {}
    const input = path.input
    const maxTurns = options.maxTurns ?? 10_000
    const interrupt = (options.cancelRunning ?? "interrupt") === "interrupt"
    if (task.retry?.maxRetries !== undefined && task.retry.maxRetries !== input.maxRetries) {
      return yield* Effect.die(
        new Error(
          `the path is for maxRetries=${input.maxRetries}, the task has ${task.retry.maxRetries}`,
        ),
      )
    }
    if (
      task.pauseAfterConsecutiveFailures !== undefined &&
      task.pauseAfterConsecutiveFailures !== input.pauseAfter
    ) {
      return yield* Effect.die(
        new Error(
          `the path is for pauseAfter=${input.pauseAfter}, the task has ${task.pauseAfterConsecutiveFailures}`,
        ),
      )
    }

    // What the next completion should find: a next slot or none (for "may-end" schedules).
    let plannedNext = true
    const schedule = scheduleFor(input, task.schedule, () => plannedNext)
    if (typeof schedule === "string") return yield* Effect.die(new Error(schedule))
    const window = input.expires === true ? (task.window ?? "5 minutes") : task.window

    const outcomes = yield* Queue.unbounded<PlannedOutcome>()
    const job = task.job ?? defaultJob
    const id = task.id ?? `path-${++played}`
    const mismatch = (step: number, message: string) =>
      new PathMismatch({
        message: `${path.name}, step ${step}${step > 0 ? ` (${path.steps[step - 1]?.label})` : ""}: ${message}`,
        path: path.name,
        step,
      })

    const waitUntil = (step: number, what: string, done: Effect.Effect<boolean>) =>
      Effect.gen(function* () {
        for (let turn = 0; turn < maxTurns; turn++) {
          if (yield* done) return
          yield* Effect.yieldNow
        }
        return yield* mismatch(step, `${what} did not happen within ${maxTurns} turns`)
      })

    // Gates: runs that hold every worker, so the task starts only when a START step releases one
    // (a slot due at once — a schedule that starts now, a retry with no backoff — would otherwise
    // start before the path could see the task `scheduled`). After the task's run has started, a
    // new gate waits, and takes the worker back as soon as the run ends: it is due at the run's
    // start, at high priority and pushed first, so it goes before any follow-up of the task.
    const gates = yield* Queue.unbounded<void>()
    let gateCount = 0
    const addGate = Effect.suspend(() =>
      scheduler.schedule({
        id: `${id}:gate-${++gateCount}`,
        priority: "high",
        schedule: Schedule.once(0),
        job: Queue.take(gates),
      }),
    ).pipe(Effect.mapError((e) => mismatch(0, `a gate was not accepted: ${e.message}`)))
    const { workers } = yield* scheduler.stats
    for (let w = 0; w < workers; w++) yield* addGate
    yield* waitUntil(
      0,
      "holding every worker",
      Effect.map(scheduler.stats, (s) => s.inFlight === workers),
    )

    const taskId = yield* scheduler
      .schedule({
        id,
        schedule,
        retry: { base: 100, ...task.retry, maxRetries: input.maxRetries },
        pauseAfterConsecutiveFailures: input.pauseAfter,
        ...(task.priority === undefined ? {} : { priority: task.priority }),
        ...(task.missedRuns === undefined ? {} : { missedRuns: task.missedRuns }),
        ...(task.timeout === undefined ? {} : { timeout: task.timeout }),
        ...(window === undefined ? {} : { window }),
        job: (run: Task.RunInfo) => Effect.flatMap(Queue.take(outcomes), (o) => job(o, run)),
      })
      .pipe(Effect.mapError((e) => mismatch(0, `the task was not accepted: ${e.message}`)))

    const now = Clock.currentTimeMillis
    const infoOf = Effect.flatMap(scheduler.info(taskId), (o) =>
      Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(mismatch(0, "the task is unknown")),
    )
    const ledgerLength = Effect.map(scheduler.ledger(taskId), (l) => l.length)
    if ((yield* scheduler.status(taskId)) !== "scheduled") {
      return yield* mismatch(0, `a new task is ${yield* scheduler.status(taskId)}, not scheduled`)
    }

    /** Releases a gate and waits until the actor has taken the task's pending entry. */
    const take = (k: number, what: string) =>
      Effect.gen(function* () {
        yield* Queue.offer(gates, undefined)
        yield* waitUntil(
          k,
          what,
          Effect.map(scheduler.status(taskId), (s) => s !== "scheduled"),
        )
        yield* addGate
      })
    /** The answer of `pause` or `resume`: the machine handles the event, so it must be true. */
    const answered = (k: number, call: string, answer: boolean) =>
      answer
        ? Effect.void
        : Effect.fail(mismatch(k, `${call} returned false, the machine says true`))

    let seen = 0
    for (let k = 1; k <= path.steps.length; k++) {
      const step = path.steps[k - 1] as Step
      const after = step.context
      /** The context the event met: after the previous step. */
      const prior = k === 1 ? undefined : (path.steps[k - 2] as Step).context
      const expected: Array<string> = []
      switch (step.event.type) {
        case "START": {
          const info = yield* infoOf
          const t = yield* now
          if (info.scheduledFor > t) yield* TestClock.adjust(info.scheduledFor - t)
          yield* take(k, `the run due at ${info.scheduledFor}`)
          break
        }
        case "EXPIRE": {
          const explained = yield* scheduler.explain(taskId)
          const deadline = Option.isSome(explained) ? explained.value.deadline : undefined
          const pending = Option.isSome(explained) ? explained.value.pending : undefined
          if (deadline === undefined || pending === undefined) {
            return yield* mismatch(k, "explain gives no deadline for the pending run")
          }
          const past = Math.max(deadline + 1, pending.scheduledFor)
          const t = yield* now
          if (past > t) yield* TestClock.adjust(past - t)
          yield* take(k, `the run due at ${pending.scheduledFor}, past its deadline ${deadline}`)
          expected.push(`expired attempt=${after.attempt}`)
          break
        }
        case "PAUSE": {
          yield* answered(k, "pause", yield* scheduler.pause(taskId))
          if (step.from === "scheduled") expected.push("paused reason=manual")
          break
        }
        case "RESUME": {
          yield* answered(k, "resume", yield* scheduler.resume(taskId))
          if (step.from === "paused") {
            const before = k === 1 ? undefined : (path.steps[k - 2] as Step).pausedReason
            expected.push(`resumed reason=${before}`)
          }
          break
        }
        case "SUCCEED":
        case "FAIL": {
          plannedNext = step.event.nextSlot !== undefined
          yield* Queue.offer(outcomes, step.event.type === "SUCCEED" ? "succeed" : "fail")
          expected.push(
            `${step.continuation === "retry" ? "retried" : "ran"} attempt=${prior?.attempt ?? 1} run=${after.runNumber} ` +
              `${step.event.type === "SUCCEED" ? "succeeded" : "failed"} -> ${step.to} (${step.continuation})`,
          )
          // The run's end pauses it (a requested pause, or the failure policy): after its record.
          if (step.to === "paused") expected.push(`paused reason=${step.pausedReason}`)
          yield* waitUntil(
            k,
            "the run's end",
            Effect.map(ledgerLength, (n) => n > seen),
          )
          break
        }
        case "CANCEL": {
          const cancelled = yield* scheduler.cancel(taskId, { interrupt })
          const cancellable =
            step.from === "scheduled" || step.from === "running" || step.from === "paused"
          if (cancelled !== cancellable) {
            return yield* mismatch(
              k,
              `cancel returned ${cancelled}, the machine says ${cancellable}`,
            )
          }
          if (step.from === "scheduled" || step.from === "paused")
            expected.push(`cancelled from=${step.from}`)
          if (step.from === "running") {
            if (!interrupt) yield* Queue.offer(outcomes, "succeed")
            expected.push(
              `cancelled from=running${interrupt ? " interrupted" : ""}`,
              `ran attempt=${after.attempt} run=${after.runNumber} ${interrupt ? "interrupted" : "succeeded"} -> cancelled (final)`,
            )
            yield* waitUntil(
              k,
              "the cancelled run's end",
              Effect.map(ledgerLength, (n) => n >= seen + expected.length),
            )
          }
          break
        }
      }

      const status = yield* scheduler.status(taskId)
      if (status !== step.to) {
        return yield* mismatch(
          k,
          `status is ${status}, the machine says ${step.to} (${step.transition})`,
        )
      }
      const info = yield* infoOf
      const actual = {
        attempt: info.attempt,
        runNumber: info.runNumber,
        consecutiveFailures: info.consecutiveFailures,
        pausedReason: info.pausedReason ?? null,
      }
      const want = {
        attempt: step.context.attempt,
        runNumber: step.context.runNumber,
        consecutiveFailures: step.context.consecutiveFailures,
        pausedReason: step.pausedReason ?? null,
      }
      if (JSON.stringify(actual) !== JSON.stringify(want)) {
        return yield* mismatch(
          k,
          `info says ${JSON.stringify(actual)}, the machine says ${JSON.stringify(want)}`,
        )
      }
      const ledger = yield* scheduler.ledger(taskId)
      const added = ledger.slice(seen).map(summary)
      seen = ledger.length
      if (JSON.stringify(added) !== JSON.stringify(expected)) {
        return yield* mismatch(
          k,
          `the ledger recorded ${JSON.stringify(added)}, the machine says ${JSON.stringify(expected)}`,
        )
      }
    }
    return {
      path: path.name,
      id: taskId,
      steps: path.steps.length,
      ledger: yield* scheduler.ledger(taskId),
    }
  })

const defaultJob = (outcome: PlannedOutcome): Effect.Effect<void, string> =>
  outcome === "succeed" ? Effect.void : Effect.fail("planned failure")

/** The schedule a path is played with, or why the task's own cannot realise the path. */
const scheduleFor = (
  input: Input,
  own: Schedule.Schedule | undefined,
  plannedNext: () => boolean,
): Schedule.Schedule | string => {
  if (own === undefined) {
    if (input.recurring === false) return Schedule.once(1000)
    if (input.recurring === true) return Schedule.fixedRate(1000, { delay: 1000 })
    return Schedule.custom((slot, finishedAt) =>
      slot === undefined || plannedNext() ? finishedAt + 1000 : undefined,
    )
  }
  const recurring = recurringOf(own)
  if (recurring === "may-end" && own._tag === "Custom") {
    // The task's own schedule decides the next slot; the path decides whether there is one.
    const next = own.next
    return input.recurring === false
      ? `a custom schedule cannot realise a one-off path`
      : Schedule.custom((slot, finishedAt) =>
          slot === undefined || plannedNext() ? next(slot, finishedAt) : undefined,
        )
  }
  return recurring === input.recurring
    ? own
    : `the path is for recurring=${input.recurring}, the task's ${own._tag} schedule is recurring=${recurring}`
}
