/**
 * Model-based tests of a task's lifecycle: paths generated from THE task machine
 * (`Lifecycle.machine`) with `xstate/graph`, covering every transition the machine can take for
 * a task's retry policy, failure policy and catch-up window — not only every state — pauses and
 * resumes included, and a driver that plays a path against a real {@link Scheduler.Scheduler}
 * on the test clock, asserting the lifecycle after every step. The manual runs' events
 * (`TRIGGER`, `MANUAL_END`, `RETRY`, SPEC §19) are not generated: the paths give the scheduler's
 * own events only.
 *
 * A path is a list of machine events. The driver realises each one with the scheduler's own
 * means: `START` lets the task's slot arrive (the clock moves to it), `SUCCEED` / `FAIL` make the
 * running job succeed or fail, `CANCEL` calls `scheduler.cancel`, `PAUSE` / `RESUME` call
 * `scheduler.pause` / `scheduler.resume` (on a running task: the pause takes effect when the run
 * ends), `EXPIRE` moves the clock past a one-shot's deadline before a worker takes it. After each
 * step it compares the task's `status`, its `info` (attempt, run number, consecutive failures,
 * pause reason) and the new ledger records with what the machine says, replaying the events with
 * XState's pure `transition()`.
 *
 * **Example** (Every transition of a retrying, recurring task)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Schedule } from "@tickwork/runtime"
 * import { LifecyclePaths } from "@tickwork/runtime/testing"
 *
 * const task = { schedule: Schedule.fixedRate("1 hour"), retry: { maxRetries: 1 }, pauseAfterConsecutiveFailures: 2 }
 * const plan = LifecyclePaths.generate(LifecyclePaths.inputOf(task))
 * plan.paths.length // 38 paths, taking all 63 edges between 27 (state, counters) classes
 * const report = await Effect.runPromise(LifecyclePaths.check({ task }))
 * report.transitions // ["cancelled --CANCEL--> (ignored)", …, "scheduled --START--> running"]: all 15
 * ```
 *
 * @since 0.1.0
 */
import {
  Lifecycle,
  type MissedRun,
  type Retry,
  Schedule,
  type Task,
  type Time,
} from "@tickwork/core"
import { Clock, Data, Effect, Option, Queue } from "effect"
import { TestClock } from "effect/testing"
import { initialTransition, type SnapshotFrom, transition } from "xstate"
import { adjacencyMapToArray, getAdjacencyMap, getShortestPaths } from "xstate/graph"
import type * as Ledger from "../Ledger.ts"
import * as Scheduler from "../Scheduler.ts"
import * as TestScheduler from "./TestScheduler.ts"

type Snapshot = SnapshotFrom<typeof Lifecycle.machine>

/**
 * What paths are generated for: the parts of a task that change which transitions the machine
 * can take.
 *
 * - `maxRetries`, `pauseAfter`: the task's `retry.maxRetries` and
 *   `pauseAfterConsecutiveFailures` (0 = never pause).
 * - `recurring`: `false` for a one-off task (no run has a next slot); `true` when every run has
 *   a next slot (fixed rate, fixed delay, cron); `"may-end"` when the schedule may end after any
 *   run (a custom schedule): paths then take both kinds of `SUCCEED` and `FAIL`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Input {
  readonly maxRetries: number
  readonly pauseAfter: number
  readonly recurring: boolean | "may-end"
  /**
   * A one-shot task with a catch-up window (SPEC §3): its pending run can be found past its
   * deadline, so paths also take `EXPIRE`. Only for `recurring: false`. Default `false`.
   */
  readonly expires?: boolean
}

/**
 * The options of a task that {@link inputOf} reads.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskShape {
  readonly schedule: Schedule.Schedule
  readonly retry?: Retry.RetryPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly window?: Time.DurationInput | undefined
}

/**
 * Whether a schedule's runs are followed by a next slot: never (`once`, `at`), always (fixed
 * rate, fixed delay, cron) or as the schedule decides (`custom`: `"may-end"`).
 *
 * @internal
 */
const recurringOf = (schedule: Schedule.Schedule): Input["recurring"] => {
  switch (schedule._tag) {
    case "Once":
    case "At":
      return false
    case "Custom":
      return "may-end"
    default:
      return true
  }
}

/**
 * The {@link Input} of a task's options: its `retry.maxRetries`, its
 * `pauseAfterConsecutiveFailures`, whether its schedule recurs, and whether it is a one-shot
 * with a catch-up `window` (a deadline: it may expire).
 *
 * **Example** (A cron task with retries, and a one-shot with a deadline)
 *
 * ```ts
 * import { Schedule } from "@tickwork/runtime"
 * import { LifecyclePaths } from "@tickwork/runtime/testing"
 *
 * LifecyclePaths.inputOf({ schedule: Schedule.cron("30 2 * * *"), retry: { maxRetries: 2 } })
 * // { maxRetries: 2, pauseAfter: 0, recurring: true, expires: false }
 * LifecyclePaths.inputOf({ schedule: Schedule.once("1 minute"), window: "10 minutes" })
 * // { maxRetries: 0, pauseAfter: 0, recurring: false, expires: true }
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const inputOf = (task: TaskShape): Input => {
  const recurring = recurringOf(task.schedule)
  return {
    maxRetries: task.retry?.maxRetries ?? 0,
    pauseAfter: task.pauseAfterConsecutiveFailures ?? 0,
    recurring,
    expires: recurring === false && task.window !== undefined,
  }
}

/**
 * One step of a path: an event, the machine transition it takes, and the exact lifecycle after
 * it (from replaying the path's events with XState's `transition()`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Step {
  readonly event: Lifecycle.TaskEvent
  /**
   * The event as a path shows it: `START`, `SUCCEED`, `SUCCEED+next`, `FAIL`, `FAIL+next`,
   * `CANCEL`, `PAUSE`, `RESUME`, `EXPIRE`.
   */
  readonly label: string
  /**
   * The machine transition taken, e.g. `running --FAIL [retriesLeft]--> scheduled`, or
   * `done --CANCEL--> (ignored)` for an event the state ignores.
   */
  readonly transition: string
  /**
   * The edge of the machine's graph for the path's input: the transition between (state,
   * guard-relevant counters) classes, e.g. `running a2 c0 --FAIL [hasNextSlot]--> scheduled a1 c1`
   * (`a`: attempt, `c`: consecutive failed slots, counted up to `pauseAfter`). Events that differ
   * only in their payload but take the same transition (`FAIL` and `FAIL+next` while retries are
   * left) are one edge.
   */
  readonly edge: string
  readonly from: Lifecycle.TaskState
  readonly to: Lifecycle.TaskState
  /** The machine's context after the event. */
  readonly context: Lifecycle.TaskContext
  /** For `SUCCEED` and `FAIL`: what the task does next (the run's ledger record says the same). */
  readonly continuation: Task.Continuation | undefined
  /**
   * Why the task is paused after the step (`manual`: a `PAUSE`; `failures`: its failure policy),
   * or, while it runs with a pause requested, why it will be; `undefined` otherwise. The task's
   * `info.pausedReason` says the same.
   */
  readonly pausedReason: Task.PauseReason | undefined
}

/**
 * A path from a new task: its steps, in order.
 *
 * @category models
 * @since 0.1.0
 */
export interface Path {
  /** E.g. `START → FAIL+next → START → SUCCEED+next ⇒ scheduled a1 c0`. */
  readonly name: string
  readonly input: Input
  readonly steps: ReadonlyArray<Step>
  /** The state the path ends in. */
  readonly state: Lifecycle.TaskState
}

/**
 * The paths for one {@link Input}, and what they cover.
 *
 * @category models
 * @since 0.1.0
 */
export interface Plan {
  readonly input: Input
  /** Shortest paths to every (state class, incoming transition, previous class), prefixes dropped. */
  readonly paths: ReadonlyArray<Path>
  /** Every machine transition reachable for this input, each taken by some path. */
  readonly transitions: ReadonlyArray<string>
  /**
   * Every edge of the machine's reachable graph for this input — (state, guard-relevant
   * counters) class, transition, next class — each taken by some path.
   */
  readonly edges: ReadonlyArray<string>
}

const machineInput = (input: Input): Lifecycle.TaskInput => ({
  maxRetries: input.maxRetries,
  pauseAfter: input.pauseAfter,
})

/**
 * The class of a snapshot: its state and the context the guards read — `attempt` (against
 * `maxRetries`), `consecutiveFailures` (against `pauseAfter`, and only when pausing is on) and
 * whether a pause was requested while running (` p`). `runNumber` only grows and no guard reads
 * it, so it is left out (traversal would not end).
 */
const classOf = (input: Input) => (s: Snapshot) =>
  `${String(s.value)} a${s.context.attempt} c${
    input.pauseAfter === 0 ? 0 : Math.min(s.context.consecutiveFailures, input.pauseAfter)
  }${s.context.pauseRequested === true ? " p" : ""}`

/**
 * The events a state can be given by a scheduler: the ones it handles, plus CANCEL in final
 * states. A running task is given PAUSE only while no pause is requested and RESUME only while
 * one is (the other way round the machine ignores them); EXPIRE only for a one-shot with a window.
 */
const eventsFor =
  (input: Input) =>
  (s: Snapshot): Array<Lifecycle.TaskEvent> => {
    switch (s.value) {
      case "scheduled": {
        const out: Array<Lifecycle.TaskEvent> = [
          { type: "START" },
          { type: "PAUSE" },
          { type: "CANCEL" },
        ]
        if (input.expires === true && input.recurring === false) out.push({ type: "EXPIRE" })
        return out
      }
      case "running": {
        const out: Array<Lifecycle.TaskEvent> = []
        if (input.recurring !== false) {
          out.push({ type: "SUCCEED", nextSlot: 1 }, { type: "FAIL", nextSlot: 1 })
        }
        if (input.recurring !== true) out.push({ type: "SUCCEED" }, { type: "FAIL" })
        out.push(s.context.pauseRequested === true ? { type: "RESUME" } : { type: "PAUSE" }, {
          type: "CANCEL",
        })
        return out
      }
      case "paused":
        return [{ type: "RESUME" }, { type: "CANCEL" }]
      default:
        // A final task ignores everything; cancelling it is the one event a caller can still send.
        return [{ type: "CANCEL" }]
    }
  }

/** Why the task is (or, running, will be) paused after `event` took it from `from` to `to`. */
const pausedReasonAfter = (
  before: Task.PauseReason | undefined,
  from: Snapshot,
  event: Lifecycle.TaskEvent,
  to: Snapshot,
): Task.PauseReason | undefined => {
  if (to.value === "running") return to.context.pauseRequested === true ? "manual" : undefined
  if (to.value !== "paused") return undefined
  if (from.value === "paused") return before
  // Entered `paused`: by hand, or at the end of a run during which a pause was requested, or
  // (no request) stopped by the failure policy.
  if (event.type === "PAUSE") return "manual"
  return from.context.pauseRequested === true ? "manual" : "failures"
}

const labelOf = (e: Lifecycle.TaskEvent): string =>
  "nextSlot" in e && e.nextSlot !== undefined ? `${e.type}+next` : e.type

/**
 * The machine transition `event` takes from `s`, named by source, event, guard and target, e.g.
 * `running --FAIL [retriesLeft]--> scheduled`; `name` replaces the source and target states (by
 * their classes, for an edge).
 */
const transitionOf = (
  s: Snapshot,
  event: Lifecycle.TaskEvent,
  name: (s: Snapshot) => string = (x) => String(x.value),
  next?: Snapshot,
): string => {
  const [def] = Lifecycle.machine.getTransitionData(s, event)
  if (def === undefined) return `${name(s)} --${event.type}--> (ignored)`
  const g = def.guard as string | { readonly type: string } | undefined
  const guard = g === undefined ? "" : ` [${typeof g === "string" ? g : g.type}]`
  const target = next === undefined ? (def.target?.[0]?.key ?? String(s.value)) : name(next)
  return `${name(s)} --${event.type}${guard}--> ${target}`
}

/**
 * Generates the paths for `input`: the shortest path to every (state class, incoming transition,
 * previous class) triple, so that together they take every transition of the machine's reachable
 * graph, each step with its exact expected lifecycle. Paths that are a prefix of another are
 * dropped (the longer one checks the same steps). Throws if the paths miss an edge of the
 * adjacency map (it cannot happen with these keys; the check keeps it so).
 *
 * **Example** (A one-off task with one retry)
 *
 * ```ts
 * import { LifecyclePaths } from "@tickwork/runtime/testing"
 *
 * const plan = LifecyclePaths.generate({ maxRetries: 1, pauseAfter: 0, recurring: false })
 * plan.paths.map((p) => p.name)
 * // ["CANCEL → CANCEL ⇒ cancelled a1 c0", "PAUSE → CANCEL ⇒ cancelled a1 c0", …,
 * //  "START → FAIL → START → PAUSE → FAIL → CANCEL ⇒ failed a1 c0 p"]: 19 paths
 * plan.transitions.length // 15: the 12 a one-off task can take, and CANCEL ignored by the final states
 *
 * // With a catch-up window, its run (or a pending retry) can also expire.
 * LifecyclePaths.generate({ maxRetries: 1, pauseAfter: 0, recurring: false, expires: true })
 *   .transitions.includes("scheduled --EXPIRE--> failed") // true
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const generate = (input: Input): Plan => {
  if (
    !Number.isSafeInteger(input.maxRetries) ||
    input.maxRetries < 0 ||
    !Number.isSafeInteger(input.pauseAfter) ||
    input.pauseAfter < 0
  ) {
    throw new RangeError(
      `maxRetries and pauseAfter must be non-negative integers, got ${JSON.stringify(input)}`,
    )
  }
  if (input.expires === true && input.recurring !== false) {
    throw new RangeError(
      `only a one-shot task (recurring: false) expires, got ${JSON.stringify(input)}`,
    )
  }
  const key = classOf(input)
  const events = eventsFor(input)
  const edgeOf = (from: Snapshot, event: Lifecycle.TaskEvent, to: Snapshot) =>
    transitionOf(from, event, key, to)
  const options = { input: machineInput(input), events }
  // The incoming transition and the previous class are part of the vertex, so the shortest
  // paths reach every edge, not only every state.
  const graphPaths = getShortestPaths(Lifecycle.machine, {
    ...options,
    serializeState: (s, event, prev) =>
      prev === undefined || event === undefined
        ? key(s)
        : `${key(s)} <- ${transitionOf(prev, event)} <- ${key(prev)}`,
  })

  const replayed = graphPaths.map((graphPath): Path => {
    let [snapshot] = initialTransition(Lifecycle.machine, machineInput(input))
    const steps: Array<Step> = []
    let pausedReason: Task.PauseReason | undefined
    for (const { event, state: representative } of graphPath.steps.slice(1)) {
      const from = snapshot
      const [next, actions] = transition(Lifecycle.machine, from, event)
      snapshot = next
      // The step's snapshot only represents its class (its context may come from another
      // route): the replay gives the exact context, and must land in the same class.
      if (key(next) !== key(representative)) {
        throw new Error(
          `replay of ${labelOf(event)} reached ${key(next)}, not ${key(representative)}`,
        )
      }
      const effects = actions.map((a) => a.type)
      pausedReason = pausedReasonAfter(pausedReason, from, event, next)
      steps.push({
        event,
        label: labelOf(event),
        transition: transitionOf(from, event),
        edge: edgeOf(from, event, next),
        from: from.value as Lifecycle.TaskState,
        to: next.value as Lifecycle.TaskState,
        context: { ...next.context },
        continuation:
          event.type === "SUCCEED" || event.type === "FAIL"
            ? effects.includes("scheduleRetry")
              ? "retry"
              : effects.includes("scheduleNext")
                ? "next"
                : "final"
            : undefined,
        pausedReason,
      })
    }
    const labels = steps.map((s) => s.label).join(" → ")
    return {
      name: `${labels || "(new)"} ⇒ ${key(snapshot)}`,
      input,
      steps,
      state: snapshot.value as Lifecycle.TaskState,
    }
  })

  // Drop paths that are a prefix of another path.
  const signature = (p: Path) => p.steps.map((s) => `${s.label} ${s.edge}`).join("\n")
  const signatures = replayed.map(signature)
  const paths = replayed
    .filter((_p, k) => {
      const own = signatures[k] as string
      return !signatures.some(
        (other, j) =>
          j !== k && other.length > own.length && other.startsWith(own === "" ? "" : `${own}\n`),
      )
    })
    .sort((a, b) => a.steps.length - b.steps.length || a.name.localeCompare(b.name))

  const covered = new Set(paths.flatMap((p) => p.steps.map((s) => s.edge)))
  const all = adjacencyMapToArray(
    getAdjacencyMap(Lifecycle.machine, { ...options, serializeState: (s) => key(s) }),
  ).map(({ state, event, nextState }) => edgeOf(state, event, nextState))
  const missed = all.filter((e) => !covered.has(e))
  if (missed.length > 0)
    throw new Error(`paths miss ${missed.length} edge(s): ${missed.join("; ")}`)
  const edges = [...covered].sort()
  const transitions = [...new Set(paths.flatMap((p) => p.steps.map((s) => s.transition)))].sort()
  return { input, paths, transitions, edges }
}

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
    case "expired":
      return `expired attempt=${o.attempt}`
    case "paused":
    case "resumed":
      return `${o.kind} reason=${o.reason}`
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

// ------------------------------------------------------------------ checking every path

/**
 * Options of {@link check}: what to generate paths for (an {@link Input}, or the task's own
 * options through {@link inputOf}), the task to play them with, and the test layer's options.
 *
 * @category models
 * @since 0.1.0
 */
export interface CheckOptions<R = never> extends PlayOptions<R> {
  readonly input?: Input
  /**
   * Options of the fresh test layer each path is played on. Default `slowRunWarning: false`:
   * the gate runs are held while the clock moves.
   */
  readonly layer?: TestScheduler.Options
}

/**
 * What {@link check} covered.
 *
 * @category models
 * @since 0.1.0
 */
export interface Report {
  readonly input: Input
  readonly paths: number
  readonly steps: number
  /** The machine transitions the paths took (every one reachable for the input). */
  readonly transitions: ReadonlyArray<string>
  /** The edges between (state, counters) classes the paths took (every reachable one). */
  readonly edges: number
}

/**
 * Generates every path for a task and plays each one on a fresh `TestScheduler` layer, stopping
 * at the first {@link PathMismatch}. The task's job requirements `R` come from the caller.
 *
 * **Example** (A payment task with a fake gateway)
 *
 * ```ts
 * import { Context, Effect, Layer } from "effect"
 * import { Schedule } from "@tickwork/runtime"
 * import { LifecyclePaths } from "@tickwork/runtime/testing"
 *
 * // The app's service, and a fake whose answers the test controls.
 * class Gateway extends Context.Service<Gateway, { readonly charge: Effect.Effect<void, string> }>()("Gateway") {}
 * let down = false
 * const fake = Gateway.of({ charge: Effect.suspend(() => (down ? Effect.fail("503") : Effect.void)) })
 *
 * const report = await Effect.runPromise(
 *   LifecyclePaths.check({
 *     task: {
 *       schedule: Schedule.once("1 minute"),
 *       retry: { maxRetries: 3, base: "30 seconds" },
 *       job: (outcome) => {
 *         down = outcome === "fail" // the path decides; the job's own code does the rest
 *         return Gateway.use((g) => g.charge)
 *       },
 *     },
 *   }).pipe(Effect.provide(Layer.succeed(Gateway, fake))),
 * )
 * report.paths // every path walked against a real scheduler
 * ```
 *
 * @category runners
 * @since 0.1.0
 */
export const check = <R = never>(
  options: CheckOptions<R>,
): Effect.Effect<Report, PathMismatch, R> =>
  Effect.gen(function* () {
    const input =
      options.input ??
      (options.task?.schedule === undefined
        ? undefined
        : inputOf(options.task as TaskUnderTest<R> & TaskShape))
    if (input === undefined) {
      return yield* Effect.die(new Error("check needs an input, or a task with a schedule"))
    }
    const plan = generate(input)
    let steps = 0
    for (const path of plan.paths) {
      const result = yield* play(path, options).pipe(
        Effect.scoped,
        // Gates hold the workers while the clock moves to a slot (hours, for a cron task): not
        // slow runs worth a warning, unless the caller's layer asks for them.
        Effect.provide(TestScheduler.layer({ slowRunWarning: false, ...options.layer })),
        Effect.catchTag("InvalidOption", (e) => Effect.die(e)),
      )
      steps += result.steps
    }
    return {
      input,
      paths: plan.paths.length,
      steps,
      transitions: plan.transitions,
      edges: plan.edges.length,
    }
  })
