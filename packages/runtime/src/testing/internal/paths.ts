/**
 * @internal
 * Generating lifecycle paths (public through `LifecyclePaths`): what a task's policies let the
 * task machine do ({@link Input}), and every path through the transitions it can take, found
 * with `xstate/graph` over (state, counters) classes.
 */
import { Lifecycle, type Retry, type Schedule, type Task, type Time } from "@tickwork/core"
import { initialTransition, type SnapshotFrom, transition } from "xstate"
import { adjacencyMapToArray, getAdjacencyMap, getShortestPaths } from "xstate/graph"

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
export const recurringOf = (schedule: Schedule.Schedule): Input["recurring"] => {
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
