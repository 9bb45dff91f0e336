/**
 * THE task machine (SPEC §5): the one definition of a task's states and transitions, written
 * with XState's `setup()`, and the transition table compiled from it for the kernel's hot path.
 *
 * ```text
 *             START              SUCCEED, no next slot
 *  scheduled ───────▶ running ─────────────────────────▶ done
 *   ▲ ▲  │  │           │ │ │   FAIL, no retries, one-off
 *   │ │  │  │           │ │ └────────────────────────────▶ failed ◀── EXPIRE (one-shot past
 *   │ │  │  │ CANCEL    │ │ CANCEL                              its deadline) ── scheduled
 *   │ │  │  └───────────┼─┴────────────────────────────▶ cancelled ◀── CANCEL ── paused
 *   │ │  │ PAUSE        │ SUCCEED/FAIL with a pause requested (PAUSE while running),
 *   │ │  ▼              │ FAIL when the failure policy or the circuit breaker stops it
 *   │ └ paused ◀────────┘
 *   │   RESUME
 *   └────────────────── SUCCEED with a next slot | FAIL with retries left | FAIL, recurring
 * ```
 *
 * Not drawn: the manual runs (`TRIGGER`, `MANUAL_END`, `RETRY`), and a durable store's
 * `HAND_BACK` (running → scheduled, or paused when a pause was requested) and `UNREADABLE`
 * (running → failed); see {@link TaskEvent}.
 *
 * The machine is pure: its context holds the counters its guards read, its events carry the
 * facts only the kernel can compute (the schedule's next slot, whether the task's circuit breaker
 * opens), and the things it asks the outside world to do — push the next slot, push a retry, push
 * the slot a resumed task continues with — are actions (`scheduleNext`, `scheduleRetry`,
 * `scheduleResume`) that the kernel executes. A `paused` task reached through `scheduleNext` or
 * `scheduleRetry` holds that run instead of pushing it. XState is the source of truth; the kernel advances
 * tasks through {@link compiled}, read from the machine's own definition (targets, guard order,
 * actions) and tested against XState for every state × event pair.
 *
 * @since 0.1.0
 */
import { type AnyTransitionDefinition, assign, setup } from "xstate"

/**
 * A task's lifecycle state.
 *
 * @category models
 * @since 0.1.0
 */
export type TaskState = "scheduled" | "running" | "paused" | "done" | "failed" | "cancelled"

/**
 * The states in table order: a state's index is its number in the kernel's `Uint8Array`.
 *
 * @category models
 * @since 0.1.0
 */
export const states: ReadonlyArray<TaskState> = [
  "scheduled",
  "running",
  "paused",
  "done",
  "failed",
  "cancelled",
]

/**
 * Whether a state is final (`done`, `failed`, `cancelled`).
 *
 * @category getters
 * @since 0.1.0
 */
export const isFinal = (state: TaskState): boolean =>
  state === "done" || state === "failed" || state === "cancelled"

/**
 * The counters the machine's guards read.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskContext {
  /** 1-based attempt of the current slot: 1 for the first run, 2 for its first retry, … */
  attempt: number
  /** Retries allowed per slot. */
  maxRetries: number
  /** Runs started so far, retries included. */
  runNumber: number
  /** Slots in a row whose retries were all used up (reset by a success). */
  consecutiveFailures: number
  /** `pauseAfterConsecutiveFailures`: a recurring task is paused at this many; 0 = never. */
  pauseAfter: number
  /**
   * A pause was asked for while the task was running: the run finishes and reports, then the task
   * is `paused`. Absent means `false`.
   */
  pauseRequested?: boolean
}

/**
 * What creates a task machine.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskInput {
  readonly maxRetries?: number
  readonly pauseAfter?: number
}

/**
 * The events of SPEC §5. `nextSlot` is the schedule's next slot after this run, or `undefined`
 * when there is none (a one-off, or a schedule that has ended). `breakerOpens` says that the
 * task's circuit breaker opens when this run's slot fails (its retries used up), so the task is
 * held; the machine reads it only for a failed slot. `EXPIRE` is a one-shot's run found past its
 * catch-up window (a deadline, SPEC §3): the task ends `failed` without running.
 *
 * The manual runs of SPEC §19: `TRIGGER` asks a `scheduled` task for one extra run now, its
 * pending run kept aside (`scheduleManual`); `MANUAL_END` is that run's end, whatever its
 * outcome: the kept run is pushed back (`scheduleKept`), or held when a pause was requested;
 * `RETRY` gives a `failed` task one more attempt of its failed slot, due now (`scheduleNow`).
 * `failed` is final for everything else: only an explicit retry brings it back.
 *
 * Two events only a durable store sends ({@link storeEvents}): `HAND_BACK` is a claimed run
 * returned with no outcome (a closing scheduler, a lost session, recovery after a crash): the
 * run did not happen, so its run number is given back and its pending slot or retry stays as it
 * was, `scheduled` again, or held in `paused` when a pause was requested while it was claimed.
 * `UNREADABLE` is a claimed run whose stored task cannot be read back into these terms (a row
 * edited by hand): the task ends `failed` without a run.
 *
 * @category models
 * @since 0.1.0
 */
export type TaskEvent =
  | { readonly type: "START" }
  | { readonly type: "SUCCEED"; readonly nextSlot?: number | undefined }
  | {
      readonly type: "FAIL"
      readonly nextSlot?: number | undefined
      readonly breakerOpens?: boolean | undefined
    }
  | { readonly type: "CANCEL" }
  | { readonly type: "PAUSE" }
  | { readonly type: "RESUME" }
  | { readonly type: "EXPIRE" }
  | { readonly type: "TRIGGER" }
  | { readonly type: "MANUAL_END" }
  | { readonly type: "RETRY" }
  | { readonly type: "HAND_BACK" }
  | { readonly type: "UNREADABLE" }

/**
 * The event types in table order.
 *
 * @category models
 * @since 0.1.0
 */
export const events: ReadonlyArray<TaskEvent["type"]> = [
  "START",
  "SUCCEED",
  "FAIL",
  "CANCEL",
  "PAUSE",
  "RESUME",
  "EXPIRE",
  "TRIGGER",
  "MANUAL_END",
  "RETRY",
  "HAND_BACK",
  "UNREADABLE",
]

/**
 * The events only a durable store sends: an in-memory scheduler's runs always end with an
 * outcome, and its tasks are always readable (see {@link TaskEvent}).
 *
 * @category models
 * @since 0.6.0
 */
export const storeEvents: ReadonlyArray<TaskEvent["type"]> = ["HAND_BACK", "UNREADABLE"]

/**
 * The context updates of the machine, written once and used both by XState's `assign` and by
 * the compiled table. Each mutates the context it is given.
 *
 * @category models
 * @since 0.1.0
 */
export const ops = {
  startRun: (c: TaskContext): void => {
    c.runNumber += 1
  },
  /** A run handed back did not happen: the number it was given is given back. */
  unstartRun: (c: TaskContext): void => {
    c.runNumber -= 1
  },
  retry: (c: TaskContext): void => {
    c.attempt += 1
  },
  slotSucceeded: (c: TaskContext): void => {
    c.attempt = 1
    c.consecutiveFailures = 0
  },
  slotFailed: (c: TaskContext): void => {
    c.attempt = 1
    c.consecutiveFailures += 1
  },
  /**
   * The task's last slot succeeded (it ends `done`): no next slot, so `attempt` stays the one
   * that ran (SPEC §6.9: a finished task shows the attempt that ran last).
   */
  lastSlotSucceeded: (c: TaskContext): void => {
    c.consecutiveFailures = 0
  },
  /** The task's last slot failed (it ends `failed`): `attempt` stays the one that ran (§6.9). */
  lastSlotFailed: (c: TaskContext): void => {
    c.consecutiveFailures += 1
  },
  requestPause: (c: TaskContext): void => {
    c.pauseRequested = true
  },
  withdrawPause: (c: TaskContext): void => {
    c.pauseRequested = false
  },
  /** Entering `paused`: the request, if any, is now the state. */
  hold: (c: TaskContext): void => {
    c.pauseRequested = false
  },
  /** A resumed task starts a fresh count for its failure policy. */
  resumed: (c: TaskContext): void => {
    c.consecutiveFailures = 0
  },
  /**
   * A failed task retried by hand (SPEC §19.2): one more attempt of its failed slot and no
   * automatic retry after it, so a failure of that attempt ends it `failed` again. The kernel
   * sets the attempt's number (the failed slot's last attempt + 1) after the step.
   */
  retriedByHand: (c: TaskContext): void => {
    c.attempt = c.maxRetries + 1
    c.consecutiveFailures = 0
  },
} as const

/**
 * The guards of the machine, written once and used by XState and by the compiled table.
 *
 * @category models
 * @since 0.1.0
 */
export const guards = {
  retriesLeft: ({ context }: { context: TaskContext }): boolean =>
    context.attempt <= context.maxRetries,
  /** A retry is due, but a pause was requested during the run: the retry is held, never dropped. */
  retryHeld: ({ context }: { context: TaskContext }): boolean =>
    context.pauseRequested === true && context.attempt <= context.maxRetries,
  pausedByFailures: ({ context }: { context: TaskContext }): boolean =>
    context.pauseAfter > 0 && context.consecutiveFailures + 1 >= context.pauseAfter,
  hasNextSlot: ({ event }: { event: TaskEvent }): boolean =>
    "nextSlot" in event && event.nextSlot !== undefined,
  /** A next slot exists and a pause was requested during the run. */
  pausing: ({ context, event }: { context: TaskContext; event: TaskEvent }): boolean =>
    context.pauseRequested === true && "nextSlot" in event && event.nextSlot !== undefined,
  /**
   * A recurring task's slot failed for good and something stops it: a requested pause, the
   * failure policy (`pauseAfter` slots in a row) or its circuit breaker opening.
   */
  stopsAfterFailure: ({ context, event }: { context: TaskContext; event: TaskEvent }): boolean =>
    "nextSlot" in event &&
    event.nextSlot !== undefined &&
    (context.pauseRequested === true ||
      (context.pauseAfter > 0 && context.consecutiveFailures + 1 >= context.pauseAfter) ||
      ("breakerOpens" in event && event.breakerOpens === true)),
  notPauseRequested: ({ context }: { context: TaskContext }): boolean =>
    context.pauseRequested !== true,
  pauseRequested: ({ context }: { context: TaskContext }): boolean =>
    context.pauseRequested === true,
} as const

/** A copy of `context` with `op` applied: XState's `assign` must not mutate. */
const applied = (context: TaskContext, op: (c: TaskContext) => void): TaskContext => {
  const next = { ...context }
  op(next)
  return next
}

/**
 * The task machine. Effects for the kernel are the actions `scheduleNext` (push the event's
 * `nextSlot`), `scheduleRetry` (push `failedAt + backoff`) and `scheduleResume` (push the slot a
 * resumed task continues with, SPEC §15); they do nothing inside XState. Entering `paused` through
 * `scheduleNext` or `scheduleRetry` means the run is computed and held, not pushed.
 *
 * **Example** (One run of a recurring task, purely)
 *
 * ```ts
 * import { initialTransition, transition } from "xstate"
 * import { Lifecycle } from "@tickwork/core"
 * const [s0] = initialTransition(Lifecycle.machine, {})
 * const [s1] = transition(Lifecycle.machine, s0, { type: "START" })
 * const [s2] = transition(Lifecycle.machine, s1, { type: "SUCCEED", nextSlot: 10 })
 * s2.value // "scheduled"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const machine = setup({
  types: {
    context: {} as TaskContext,
    events: {} as TaskEvent,
    input: {} as TaskInput,
  },
  guards,
  actions: {
    startRun: assign(({ context }) => applied(context, ops.startRun)),
    unstartRun: assign(({ context }) => applied(context, ops.unstartRun)),
    retry: assign(({ context }) => applied(context, ops.retry)),
    slotSucceeded: assign(({ context }) => applied(context, ops.slotSucceeded)),
    slotFailed: assign(({ context }) => applied(context, ops.slotFailed)),
    lastSlotSucceeded: assign(({ context }) => applied(context, ops.lastSlotSucceeded)),
    lastSlotFailed: assign(({ context }) => applied(context, ops.lastSlotFailed)),
    requestPause: assign(({ context }) => applied(context, ops.requestPause)),
    withdrawPause: assign(({ context }) => applied(context, ops.withdrawPause)),
    hold: assign(({ context }) => applied(context, ops.hold)),
    resumed: assign(({ context }) => applied(context, ops.resumed)),
    retriedByHand: assign(({ context }) => applied(context, ops.retriedByHand)),
    scheduleNext: () => {},
    scheduleRetry: () => {},
    scheduleResume: () => {},
    scheduleManual: () => {},
    scheduleKept: () => {},
    scheduleNow: () => {},
  },
}).createMachine({
  id: "task",
  initial: "scheduled",
  context: ({ input }) => ({
    attempt: 1,
    maxRetries: input?.maxRetries ?? 0,
    runNumber: 0,
    consecutiveFailures: 0,
    pauseAfter: input?.pauseAfter ?? 0,
    pauseRequested: false,
  }),
  states: {
    scheduled: {
      on: {
        START: { target: "running", actions: "startRun" },
        CANCEL: { target: "cancelled" },
        PAUSE: { target: "paused" },
        EXPIRE: { target: "failed" },
        TRIGGER: { actions: "scheduleManual" },
      },
    },
    running: {
      on: {
        SUCCEED: [
          {
            guard: "pausing",
            target: "paused",
            actions: ["slotSucceeded", "hold", "scheduleNext"],
          },
          { guard: "hasNextSlot", target: "scheduled", actions: ["slotSucceeded", "scheduleNext"] },
          { target: "done", actions: "lastSlotSucceeded" },
        ],
        FAIL: [
          { guard: "retryHeld", target: "paused", actions: ["retry", "hold", "scheduleRetry"] },
          { guard: "retriesLeft", target: "scheduled", actions: ["retry", "scheduleRetry"] },
          {
            guard: "stopsAfterFailure",
            target: "paused",
            actions: ["slotFailed", "hold", "scheduleNext"],
          },
          { guard: "hasNextSlot", target: "scheduled", actions: ["slotFailed", "scheduleNext"] },
          { target: "failed", actions: "lastSlotFailed" },
        ],
        CANCEL: { target: "cancelled" },
        PAUSE: { guard: "notPauseRequested", actions: "requestPause" },
        RESUME: { guard: "pauseRequested", actions: "withdrawPause" },
        MANUAL_END: [
          { guard: "pauseRequested", target: "paused", actions: ["hold", "scheduleKept"] },
          { target: "scheduled", actions: "scheduleKept" },
        ],
        HAND_BACK: [
          { guard: "pauseRequested", target: "paused", actions: ["unstartRun", "hold"] },
          { target: "scheduled", actions: "unstartRun" },
        ],
        UNREADABLE: { target: "failed" },
      },
    },
    paused: {
      on: {
        RESUME: { target: "scheduled", actions: ["resumed", "scheduleResume"] },
        CANCEL: { target: "cancelled" },
      },
    },
    done: { type: "final" },
    // Final for every event but RETRY (SPEC §19.2), so not an XState final node: a final node
    // would stop the actor and ignore the retry.
    failed: {
      on: { RETRY: { target: "scheduled", actions: ["retriedByHand", "scheduleNow"] } },
    },
    cancelled: { type: "final" },
  },
})

/**
 * What a compiled edge asks the kernel to do after the transition.
 *
 * @category models
 * @since 0.1.0
 */
export type Effect =
  | "none"
  | "scheduleNext"
  | "scheduleRetry"
  | "scheduleResume"
  | "scheduleManual"
  | "scheduleKept"
  | "scheduleNow"

/**
 * One edge of the compiled table, in the machine's guard order.
 *
 * @category models
 * @since 0.1.0
 */
export interface Edge {
  readonly guard: ((args: { context: TaskContext; event: TaskEvent }) => boolean) | undefined
  /** Index into {@link states}. */
  readonly target: number
  readonly ops: ReadonlyArray<(c: TaskContext) => void>
  readonly effect: Effect
}

type ActionRef = string | { readonly type: string }

const effectNames: ReadonlySet<string> = new Set([
  "scheduleNext",
  "scheduleRetry",
  "scheduleResume",
  "scheduleManual",
  "scheduleKept",
  "scheduleNow",
])

/**
 * Reads the transition table from the machine's definition: for every state and event, the
 * candidate edges in order, with the machine's own guard functions and the shared {@link ops}.
 * Flat machines only (ours is). Throws if the definition names an action or guard it cannot map,
 * so a change to the machine cannot silently diverge from the kernel.
 *
 * @category constructors
 * @since 0.1.0
 */
export const compile = (m: typeof machine = machine): ReadonlyArray<ReadonlyArray<Edge>> => {
  const implementations = m.implementations.guards as unknown as Record<string, Edge["guard"]>
  const table: Array<ReadonlyArray<Edge>> = []
  for (const state of states) {
    const node = m.root.states[state]
    if (node === undefined) throw new Error(`machine has no state ${state}`)
    const transitions = node.transitions as Map<string, Array<AnyTransitionDefinition>>
    for (const event of events) {
      const defs = transitions.get(event) ?? []
      table.push(
        defs.map((d): Edge => {
          const g = d.guard as ActionRef | undefined
          const guardName = g === undefined ? undefined : typeof g === "string" ? g : g.type
          const guard = guardName === undefined ? undefined : implementations[guardName]
          if (guardName !== undefined && guard === undefined)
            throw new Error(`unknown guard ${guardName}`)
          const targetKey = d.target?.[0]?.key ?? state
          const target = states.indexOf(targetKey as TaskState)
          if (target < 0) throw new Error(`unknown target ${targetKey}`)
          const names = (d.actions as ReadonlyArray<ActionRef>).map((a) =>
            typeof a === "string" ? a : a.type,
          )
          let effect: Effect = "none"
          const edgeOps: Array<(c: TaskContext) => void> = []
          for (const name of names) {
            // Stryker disable next-line StringLiteral: equivalent, every name in `effectNames` starts with "schedule"
            if (name.startsWith("schedule") && effectNames.has(name)) effect = name as Effect
            else if (name in ops) edgeOps.push(ops[name as keyof typeof ops])
            else throw new Error(`unknown action ${name}`)
          }
          return { guard, target, ops: edgeOps, effect }
        }),
      )
    }
  }
  return table
}

/**
 * The compiled table of {@link machine}: `compiled[state * events.length + event]` is the list
 * of candidate edges. A lookup and a guard or two: ~0.1 µs instead of XState's ~30 µs.
 *
 * @category models
 * @since 0.1.0
 */
export const compiled: ReadonlyArray<ReadonlyArray<Edge>> = compile()

/**
 * Takes the first edge whose guard holds, applying its ops to `context` in place. Returns the edge,
 * or `undefined` when the state ignores the event (as XState does). O(edges).
 *
 * @category combinators
 * @since 0.1.0
 */
export const step = (
  state: number,
  event: number,
  args: { context: TaskContext; event: TaskEvent },
): Edge | undefined => {
  const edges = compiled[state * EVENT_COUNT + event] as ReadonlyArray<Edge>
  for (let i = 0; i < edges.length; i++) {
    const edge = edges[i] as Edge
    if (edge.guard !== undefined && !edge.guard(args)) continue
    for (let j = 0; j < edge.ops.length; j++)
      (edge.ops[j] as (c: TaskContext) => void)(args.context)
    return edge
  }
  return undefined
}

const EVENT_COUNT = events.length

/** State indices, for the kernel's typed arrays. @internal */
export const SCHEDULED = 0
/** @internal */
export const RUNNING = 1
/** @internal */
export const PAUSED = 2
/** @internal */
export const DONE = 3
/** @internal */
export const FAILED = 4
/** @internal */
export const CANCELLED = 5
/** Event indices. @internal */
export const START = 0
/** @internal */
export const SUCCEED = 1
/** @internal */
export const FAIL = 2
/** @internal */
export const CANCEL = 3
/** @internal */
export const PAUSE = 4
/** @internal */
export const RESUME = 5
/** @internal */
export const EXPIRE = 6
/** @internal */
export const TRIGGER = 7
/** @internal */
export const MANUAL_END = 8
/** @internal */
export const RETRY = 9
/** @internal */
export const HAND_BACK = 10
/** @internal */
export const UNREADABLE = 11
