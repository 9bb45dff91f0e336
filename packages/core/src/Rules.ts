/**
 * The kernel's decisions, as pure functions over one task's row. Every store of tasks calls
 * them — the in-memory {@link Kernel}'s table and the durable store's rows alike — so each rule
 * of SPEC §3, §5, §7 and §15 is written once:
 *
 * - {@link validate}: task options → an accepted task, or the typed error of the first bad field;
 * - {@link take}: a due run is taken → it starts, or it moves first (catch-up window, coalesce);
 * - {@link start}: the START step (the run's number);
 * - {@link settle}: a run's outcome → the next state, slot or retry time and what to record,
 *   the failure policy pausing included;
 * - {@link resume}: a paused task → the slot it continues with and the slots it skipped.
 *
 * A store's part is "load the row → decide → store the row". None of these functions reads a
 * clock or keeps state: `now` and the random source are arguments.
 *
 * @since 0.3.0
 */
import { InvalidOption, InvalidPriority, type ScheduleError, show, unknownKey } from "./Errors.ts"
import * as Lifecycle from "./Lifecycle.ts"
import type { Dropped, MissedRunPolicy, Next } from "./MissedRun.ts"
import * as MissedRun from "./MissedRun.ts"
import type * as Random from "./Random.ts"
import * as Retry from "./Retry.ts"
import * as Schedule from "./Schedule.ts"
import type {
  Continuation,
  Outcome,
  PauseReason,
  Priority,
  RunInfo,
  RunRecord,
  TaskId,
  TaskState,
} from "./Task.ts"
import { succeeded as succeededOutcome } from "./Task.ts"
import { type DurationInput, MAX_MS, toMillisWith } from "./Time.ts"

/**
 * A row's window when it has none (see {@link Row.windowMs}).
 *
 * @category models
 * @since 0.3.0
 */
export const NO_WINDOW = -1

const NO_TAGS: ReadonlyArray<string> = Object.freeze([])
/** Tags per task, and characters per tag. */
const MAX_TAGS = 32
const MAX_TAG_LENGTH = 64

/**
 * One task's rule-relevant state, as any store keeps it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Row {
  /** The recurring plan; `undefined` for a one-shot. */
  readonly plan: Schedule.Plan | undefined
  /** The grid slot being worked on (a retry keeps it), epoch ms. */
  readonly slot: number
  /** When the pending attempt is due: the slot, or a retry's `failedAt + backoff`, epoch ms. */
  readonly dueAt: number
  /** 1-based attempt of the slot. */
  readonly attempt: number
  /** Runs started so far (the running one included once it has started). */
  readonly runNumber: number
  /** Slots in a row that failed after all retries. */
  readonly consecutiveFailures: number
  readonly retry: Retry.Resolved
  readonly missedRuns: MissedRunPolicy
  /** `pauseAfterConsecutiveFailures`; 0 = never. */
  readonly pauseAfter: number
  /** The catch-up window, ms, or {@link NO_WINDOW}. */
  readonly windowMs: number
  /** A pause asked for while the row runs, applied when its run ends. */
  readonly pauseRequest?: PauseReason | undefined
  /** A schedule change waiting for the slot in progress (a run, a pending retry) to end. */
  readonly restart?: Schedule.Schedule | undefined
  /**
   * Set when a held retry of a grid task resumed: the grid slots before it were recorded as
   * skipped, so the slot after the retry is the first grid slot at or after it. Epoch ms, or -1.
   */
  readonly resumeFrom?: number | undefined
}

// ------------------------------------------------------------------------------ validate

/**
 * The keys of a task's options the rules know. A store with options of its own (the runtime's
 * `timeout`, a durable task's handler) extends this set.
 *
 * @category models
 * @since 0.3.0
 */
export const optionKeys: ReadonlySet<string> = new Set([
  "job",
  "schedule",
  "id",
  "priority",
  "retry",
  "missedRuns",
  "pauseAfterConsecutiveFailures",
  "window",
  "tags",
  "breaker",
])

/**
 * The options {@link validate} reads. The id and the breaker are the store's business (which
 * ids are live, which breakers are defined): they are only checked to be known keys here.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  readonly schedule: Schedule.Schedule
  readonly priority?: Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  readonly missedRuns?: MissedRunPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly window?: DurationInput | undefined
  readonly tags?: ReadonlyArray<string> | undefined
}

/**
 * A task the rules accepted at `now`: its policies resolved, its first slot and plan.
 *
 * @category models
 * @since 0.3.0
 */
export interface Accepted {
  readonly priority: Priority
  /** 0 = high, 1 = normal, 2 = low. */
  readonly rank: number
  readonly retry: Retry.Resolved
  readonly missedRuns: MissedRunPolicy
  readonly pauseAfter: number
  readonly tags: ReadonlyArray<string>
  /** ms, or {@link NO_WINDOW}. */
  readonly windowMs: number
  /** The first slot, epoch ms. */
  readonly first: number
  readonly plan: Schedule.Plan | undefined
}

/**
 * Validates a task's options at `now`: the typed error of the first bad field (an unknown key
 * included, SPEC §13), or the accepted task. Pure; O(1) but for cron (parsing) and custom (one
 * call of `next`).
 *
 * **Example** (An accepted fixed-rate task)
 *
 * ```ts
 * import { Rules, Schedule } from "@tickwork/core"
 * const a = Rules.validate({ schedule: Schedule.fixedRate(10, { delay: 5 }) }, 100)
 * "first" in a && a.first // 105
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const validate = (
  options: Options,
  now: number,
  keys: ReadonlySet<string> = optionKeys,
): Accepted | ScheduleError => {
  if (typeof options !== "object" || options === null) {
    return new InvalidOption({
      field: "options",
      value: options,
      message: `options must be an object, got ${show(options)}`,
    })
  }
  const unknown = unknownKey(options, keys)
  if (unknown !== undefined) return unknown
  const priority = options.priority ?? "normal"
  const rank = rankOf(priority)
  if (rank < 0) return badPriority(priority)
  const retry = Retry.resolve(options.retry)
  if (!("maxRetries" in retry)) return retry
  const missedRuns = options.missedRuns ?? "catch-up"
  if (!isPolicy(missedRuns)) return badPolicy(missedRuns)
  const pauseAfter = options.pauseAfterConsecutiveFailures ?? 0
  const badPause = checkPauseAfter(pauseAfter)
  if (badPause !== undefined) return badPause
  const tags = options.tags === undefined ? NO_TAGS : resolveTags(options.tags)
  if (!Array.isArray(tags)) return tags as InvalidOption
  const windowMs = options.window === undefined ? NO_WINDOW : resolveWindow(options.window)
  if (typeof windowMs !== "number") return windowMs
  const schedule = options.schedule
  let first: number
  let plan: Schedule.Plan | undefined
  const delay = schedule?._tag === "Once" ? schedule.delay : undefined
  if (
    typeof delay === "number" &&
    Number.isSafeInteger(delay) &&
    delay >= 0 &&
    now + delay <= MAX_MS
  ) {
    // The common case, without resolving.
    first = now + delay
    plan = undefined
  } else {
    const resolved = Schedule.resolve(schedule, now)
    if (!("first" in resolved)) return resolved
    first = resolved.first
    plan = resolved.plan
  }
  if (windowMs !== NO_WINDOW) {
    const bad = checkWindowFits(plan, options.window)
    if (bad !== undefined) return bad
  }
  return { priority, rank, retry, missedRuns, pauseAfter, tags, windowMs, first, plan }
}

/**
 * What {@link validateChanges} reads: any option but the id and the job. `window: null` removes
 * the window.
 *
 * @category models
 * @since 0.3.0
 */
export interface Changes {
  readonly schedule?: Schedule.Schedule | undefined
  readonly priority?: Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  readonly missedRuns?: MissedRunPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly window?: DurationInput | null | undefined
  readonly tags?: ReadonlyArray<string> | undefined
}

/**
 * Validated changes: each field is `undefined` when it does not change.
 *
 * @category models
 * @since 0.3.0
 */
export interface ValidChanges {
  readonly rank: number | undefined
  readonly retry: Retry.Resolved | undefined
  readonly missedRuns: MissedRunPolicy | undefined
  readonly pauseAfter: number | undefined
  readonly tags: ReadonlyArray<string> | undefined
  /** ms, or {@link NO_WINDOW} when the window is removed. */
  readonly windowMs: number | undefined
  /** The new schedule resolved at `now`. */
  readonly resolved: Schedule.Resolved | undefined
}

/**
 * Validates changes to a live task (SPEC §15) whose plan and window are `plan` and `windowMs`:
 * the typed error of the first bad change, or the changes resolved at `now`. Unknown keys are
 * the caller's to check (its set of keys differs). Pure.
 *
 * @category constructors
 * @since 0.3.0
 */
export const validateChanges = (
  changes: Changes,
  now: number,
  current: { readonly plan: Schedule.Plan | undefined; readonly windowMs: number },
): ValidChanges | ScheduleError => {
  let rank: number | undefined
  if (changes.priority !== undefined) {
    rank = rankOf(changes.priority)
    if (rank < 0) return badPriority(changes.priority)
  }
  let retry: Retry.Resolved | undefined
  if (changes.retry !== undefined) {
    const r = Retry.resolve(changes.retry)
    if (!("maxRetries" in r)) return r
    retry = r
  }
  if (changes.missedRuns !== undefined && !isPolicy(changes.missedRuns))
    return badPolicy(changes.missedRuns)
  if (changes.pauseAfterConsecutiveFailures !== undefined) {
    const bad = checkPauseAfter(changes.pauseAfterConsecutiveFailures)
    if (bad !== undefined) return bad
  }
  let tags: ReadonlyArray<string> | undefined
  if (changes.tags !== undefined) {
    const r = resolveTags(changes.tags)
    if (!Array.isArray(r)) return r as InvalidOption
    tags = r
  }
  let windowMs: number | undefined
  if (changes.window === null) windowMs = NO_WINDOW
  else if (changes.window !== undefined) {
    const w = resolveWindow(changes.window)
    if (typeof w !== "number") return w
    windowMs = w
  }
  let resolved: Schedule.Resolved | undefined
  if (changes.schedule !== undefined) {
    const r = Schedule.resolve(changes.schedule, now)
    if (!("first" in r)) return r
    resolved = r
  }
  const window = windowMs ?? current.windowMs
  if (window !== NO_WINDOW) {
    const bad = checkWindowFits(
      resolved === undefined ? current.plan : resolved.plan,
      changes.window ?? window,
    )
    if (bad !== undefined) return bad
  }
  return {
    rank,
    retry,
    missedRuns: changes.missedRuns,
    pauseAfter: changes.pauseAfterConsecutiveFailures,
    tags,
    windowMs,
    resolved,
  }
}

// ------------------------------------------------------------------------------ take

/**
 * What happens when a due run is taken (SPEC §3):
 * - `Start`: it starts now;
 * - `Expire`: a one-shot past its deadline (`slot + window`): it does not run, the task ends
 *   `failed`;
 * - `Skip`: grid slots more than the window late are skipped (cause `window`); the row moves to
 *   `slot`, the first grid slot inside the window, and is taken again in its turn;
 * - `Coalesce`: later grid slots passed while this one waited; one run stands for all of them,
 *   at `slot` (the latest), and the earlier ones are `merged` into it. The row moves to `slot` and
 *   is taken again in its turn, so runs due before it still go first (SPEC §4).
 *
 * @category models
 * @since 0.3.0
 */
export type Take =
  | { readonly _tag: "Start" }
  | { readonly _tag: "Expire"; readonly deadline: number }
  | { readonly _tag: "Skip"; readonly skipped: Dropped; readonly slot: number }
  | { readonly _tag: "Coalesce"; readonly merged: Dropped; readonly slot: number }

const START: Take = { _tag: "Start" }

/**
 * The decision for a due run of `row` taken at `now` (SPEC §3): the catch-up window, then the
 * `coalesce` policy for a late grid slot. `limit` is the latest instant the caller takes runs
 * for (a stepping driver's end time; `now` otherwise): a coalesced slot is never later than
 * `min(now, limit)`. `notBefore` is the earliest start of the run, or -1. Pure.
 *
 * **Example** (A coalescing task found 25 ms late)
 *
 * ```ts
 * import { Retry, Rules, Schedule } from "@tickwork/core"
 * const r = Schedule.resolve(Schedule.fixedRate(10), 0) as Schedule.Resolved
 * const row = {
 *   plan: r.plan, slot: 0, dueAt: 0, attempt: 1, runNumber: 0, consecutiveFailures: 0,
 *   retry: Retry.none, missedRuns: "coalesce", pauseAfter: 0, windowMs: Rules.NO_WINDOW,
 * } as const
 * Rules.take(row, 25) // { _tag: "Coalesce", slot: 20, merged: { first: 0, last: 10, count: 2, exact: true } }
 * ```
 *
 * @category combinators
 * @since 0.3.0
 */
export const take = (row: Row, now: number, limit: number = now, notBefore = -1): Take => {
  const plan = row.plan
  const grid = plan !== undefined && (plan.kind === "fixed-rate" || plan.kind === "cron")
  const due = row.dueAt
  if (row.windowMs !== NO_WINDOW) {
    const startAt = Math.max(due, now, notBefore)
    if (plan === undefined) {
      const deadline = row.slot + row.windowMs
      if (startAt > deadline) return { _tag: "Expire", deadline }
    } else if (grid && row.attempt === 1 && startAt - due > row.windowMs) {
      const cutoff = startAt - row.windowMs
      const last = plan.grid.atOrBefore(cutoff - 1) ?? due
      // A grid with no slot left inside the window waits at the end of time.
      const slot = plan.grid.after(cutoff - 1) ?? MAX_MS
      return { _tag: "Skip", skipped: MissedRun.range(plan.grid, due, last), slot }
    }
  }
  if (grid && due < now && row.missedRuns === "coalesce" && row.attempt === 1) {
    const latest = plan.grid.atOrBefore(Math.min(now, limit))
    if (latest !== undefined && latest > due) {
      // The slots from `due` up to the one before `latest` get no run of their own.
      const before = plan.grid.atOrBefore(latest - 1) ?? due
      return { _tag: "Coalesce", merged: MissedRun.range(plan.grid, due, before), slot: latest }
    }
  }
  return START
}

/**
 * The START step of a row (SPEC §5): the run's number. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const start = (row: Pick<Row, "attempt" | "runNumber">): { readonly runNumber: number } => {
  const context: Lifecycle.TaskContext = {
    attempt: row.attempt,
    maxRetries: 0,
    runNumber: row.runNumber,
    consecutiveFailures: 0,
    pauseAfter: 0,
  }
  Lifecycle.step(Lifecycle.SCHEDULED, Lifecycle.START, { context, event: START_EVENT })
  return { runNumber: context.runNumber }
}

const START_EVENT: Lifecycle.TaskEvent = { type: "START" }

/**
 * The EXPIRE step (SPEC §3): the state a one-shot ends in when {@link take} says `Expire` (its
 * run is not started). Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const expire = (): TaskState => {
  const context: Lifecycle.TaskContext = {
    attempt: 1,
    maxRetries: 0,
    runNumber: 0,
    consecutiveFailures: 0,
    pauseAfter: 0,
  }
  const edge = Lifecycle.step(Lifecycle.SCHEDULED, Lifecycle.EXPIRE, {
    context,
    event: EXPIRE_EVENT,
  }) as Lifecycle.Edge
  return Lifecycle.states[edge.target] as TaskState
}

const EXPIRE_EVENT: Lifecycle.TaskEvent = { type: "EXPIRE" }

/**
 * Whether a schedule change to a live task in `state` at `attempt` waits for the slot in
 * progress to end (SPEC §15): a running task, or one with a retry of its slot pending, finishes
 * that slot first and starts the new schedule when the slot ends, as if scheduled then (pass it
 * to {@link settle} as {@link Row.restart}); otherwise the new schedule starts now. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const scheduleChangeWaits = (state: TaskState, attempt: number): boolean =>
  state === "running" || attempt > 1

// ------------------------------------------------------------------------------ settle

/**
 * A finished run's consequences for its row (SPEC §5, §7): its next state and what it holds.
 *
 * @category models
 * @since 0.3.0
 */
export interface Settled {
  readonly state: TaskState
  readonly continuation: Continuation
  /**
   * When the next attempt is due: the schedule's next slot, or a retry's `failedAt + backoff`;
   * held, not due, when `state` is `paused`. `undefined` when the task ended.
   */
  readonly nextSlot: number | undefined
  /** The grid slot the row works on next (the next slot; a retry keeps its slot). */
  readonly slot: number
  /** Grid slots the missed-run policy dropped or merged when computing the next slot. */
  readonly dropped: Dropped | undefined
  readonly attempt: number
  readonly consecutiveFailures: number
  /** Why the run left the task `paused`. */
  readonly pausedReason: PauseReason | undefined
  /** The slot ended (succeeded, or failed with its retries used up): what a breaker counts. */
  readonly slotEnded: boolean
  /**
   * The schedule's next slot was computed: a waiting schedule change ({@link Row.restart}) and
   * {@link Row.resumeFrom} are used up, and {@link plan} is the plan from now on.
   */
  readonly consumed: boolean
  readonly plan: Schedule.Plan | undefined
  /** Set when the schedule could not give a next slot (a custom `next` threw, a bad change). */
  readonly scheduleError: ScheduleError | undefined
}

/**
 * What {@link settle} needs besides the row.
 *
 * @category models
 * @since 0.3.0
 */
export interface SettleContext {
  /** The jitter source for a retry's backoff. */
  readonly random: Random.Random
  /** Whether the task's circuit breaker opens when this slot fails; asked only then. */
  readonly breakerOpens?: (() => boolean) | undefined
}

/** The machine's completion event; its facts are computed only if a guard asks. */
class Completion {
  type: "SUCCEED" | "FAIL" = "SUCCEED"
  private row: Row | undefined = undefined
  private finishedAt = 0
  private opens: (() => boolean) | undefined = undefined
  computed = false
  next: Next | undefined = undefined
  plan: Schedule.Plan | undefined = undefined
  error: ScheduleError | undefined = undefined
  breakerAsked = false
  breakerAnswer = false

  reset(type: "SUCCEED" | "FAIL", row: Row, finishedAt: number, opens?: () => boolean): this {
    this.type = type
    this.row = row
    this.finishedAt = finishedAt
    this.opens = opens
    this.computed = false
    this.next = undefined
    this.plan = row.plan
    this.error = undefined
    this.breakerAsked = false
    this.breakerAnswer = false
    return this
  }

  get breakerOpens(): boolean {
    if (!this.breakerAsked) {
      this.breakerAsked = true
      this.breakerAnswer = this.opens === undefined ? false : this.opens()
    }
    return this.breakerAnswer
  }

  get nextSlot(): number | undefined {
    if (!this.computed) {
      this.computed = true
      this.compute()
    }
    return this.next?.slot
  }

  private compute(): void {
    const row = this.row as Row
    if (row.restart !== undefined) {
      // A schedule change that waited for its slot to end: the new schedule, as if scheduled now.
      const r = Schedule.resolve(row.restart, this.finishedAt)
      if (!("first" in r)) {
        this.error = r
        return
      }
      this.plan = r.plan
      this.next = { slot: r.first, dropped: undefined }
      return
    }
    const plan = row.plan
    if (plan === undefined) return
    let from = row.slot
    const resumeFrom = row.resumeFrom ?? -1
    if (resumeFrom >= 0 && (plan.kind === "fixed-rate" || plan.kind === "cron")) {
      // A held retry ran after a pause: the grid slots before the resume were recorded as
      // skipped, so the task goes on from the first grid slot at or after it.
      const skippedTo = plan.grid.atOrBefore(resumeFrom - 1)
      if (skippedTo !== undefined && skippedTo > from) from = skippedTo
    }
    const next = Schedule.nextAfterRun(plan, row.missedRuns, from, this.finishedAt)
    if (next !== undefined && !("slot" in next)) this.error = next
    else this.next = next
  }
}

/**
 * Reusable working memory for {@link settle}: a caller that settles many runs (the kernel) makes
 * one and passes it to every call, so a settle allocates only its result (and `settleInto`
 * nothing). Valid during one call.
 *
 * @category models
 * @since 0.3.0
 */
export interface Scratch {
  readonly context: Lifecycle.TaskContext
  /** @internal */
  readonly completion: Completion
  /** @internal The result of {@link settleInto}, overwritten by its next call. */
  readonly settled: SettledCell
}

/** A {@link Settled} that {@link settleInto} fills again on every call. */
class SettledCell implements Settled {
  state: TaskState = "scheduled"
  continuation: Continuation = "final"
  nextSlot: number | undefined = undefined
  slot = 0
  dropped: Dropped | undefined = undefined
  attempt = 1
  consecutiveFailures = 0
  pausedReason: PauseReason | undefined = undefined
  slotEnded = false
  consumed = false
  plan: Schedule.Plan | undefined = undefined
  scheduleError: ScheduleError | undefined = undefined
}

/**
 * A new {@link Scratch}.
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeScratch = (): Scratch => ({
  context: {
    attempt: 1,
    maxRetries: 0,
    runNumber: 0,
    consecutiveFailures: 0,
    pauseAfter: 0,
    pauseRequested: false,
  },
  completion: new Completion(),
  settled: new SettledCell(),
})

/**
 * Settles a finished run of `row` (as it was when the run started, START applied) with
 * `outcome` at `finishedAt` (SPEC §5, §7): the machine's step with the schedule's next slot
 * (computed only if the machine asks), a retry due at `finishedAt + backoff`, and the failure
 * policy or the breaker pausing a recurring task. Pure but for drawing jitter from `random`.
 *
 * **Example** (A one-off's failure with a retry left)
 *
 * ```ts
 * import { Random, Retry, Rules, Task } from "@tickwork/core"
 * const retry = Retry.resolve({ maxRetries: 1, base: 5 }) as Retry.Resolved
 * const row = {
 *   plan: undefined, slot: 0, dueAt: 0, attempt: 1, runNumber: 1, consecutiveFailures: 0,
 *   retry, missedRuns: "catch-up", pauseAfter: 0, windowMs: Rules.NO_WINDOW,
 * } as const
 * const s = Rules.settle(row, Task.failed("boom"), 3, { random: Random.seeded(0) })
 * s.state     // "scheduled"
 * s.nextSlot  // 8: a retry, due 5 ms after the failure
 * ```
 *
 * @category combinators
 * @since 0.3.0
 */
export const settle = (
  row: Row,
  outcome: Outcome,
  finishedAt: number,
  context: SettleContext,
  scratch: Scratch = makeScratch(),
): Settled => {
  const s = settleInto(row, outcome, finishedAt, context, scratch)
  return {
    state: s.state,
    continuation: s.continuation,
    nextSlot: s.nextSlot,
    slot: s.slot,
    dropped: s.dropped,
    attempt: s.attempt,
    consecutiveFailures: s.consecutiveFailures,
    pausedReason: s.pausedReason,
    slotEnded: s.slotEnded,
    consumed: s.consumed,
    plan: s.plan,
    scheduleError: s.scheduleError,
  }
}

/**
 * @internal
 * {@link settle} without allocating its result: the scratch's own object is filled and returned,
 * valid until the next call with the same scratch. For the kernel, which reads it within the
 * completion it settles.
 */
export const settleInto = (
  row: Row,
  outcome: Outcome,
  finishedAt: number,
  context: SettleContext,
  scratch: Scratch,
): Settled => {
  const failed = outcome.kind !== "succeeded"
  const ctx = scratch.context
  ctx.attempt = row.attempt
  ctx.maxRetries = row.retry.maxRetries
  ctx.runNumber = row.runNumber
  ctx.consecutiveFailures = row.consecutiveFailures
  ctx.pauseAfter = row.pauseAfter
  ctx.pauseRequested = row.pauseRequest !== undefined
  const completion = scratch.completion.reset(
    failed ? "FAIL" : "SUCCEED",
    row,
    finishedAt,
    context.breakerOpens,
  )
  const edge = Lifecycle.step(Lifecycle.RUNNING, failed ? Lifecycle.FAIL : Lifecycle.SUCCEED, {
    context: ctx,
    event: completion as unknown as Lifecycle.TaskEvent,
  }) as Lifecycle.Edge
  const state = Lifecycle.states[edge.target] as TaskState
  let nextSlot: number | undefined
  let slot = row.slot
  let continuation: Continuation = "final"
  let dropped: Dropped | undefined
  if (edge.effect === "scheduleNext") {
    const next = completion.next as Next
    nextSlot = next.slot
    slot = next.slot
    dropped = next.dropped
    continuation = "next"
  } else if (edge.effect === "scheduleRetry") {
    const delay = Retry.backoff(row.retry, ctx.attempt - 1, context.random)
    nextSlot = Math.min(finishedAt + delay, MAX_MS)
    continuation = "retry"
  }
  // Who stopped it, by the machine's guard order: a requested pause, then the failure policy,
  // then the breaker (asked only when the policy did not stop it).
  const pausedReason =
    state !== "paused"
      ? undefined
      : (row.pauseRequest ??
        (completion.breakerAsked && completion.breakerAnswer ? "breaker" : "failures"))
  const out = scratch.settled
  out.state = state
  out.continuation = continuation
  out.nextSlot = nextSlot
  out.slot = slot
  out.dropped = dropped
  out.attempt = ctx.attempt
  out.consecutiveFailures = ctx.consecutiveFailures
  out.pausedReason = pausedReason
  out.slotEnded =
    edge.ops.includes(Lifecycle.ops.slotFailed) || edge.ops.includes(Lifecycle.ops.slotSucceeded)
  out.consumed = completion.computed
  out.plan = completion.plan
  out.scheduleError = completion.error
  return out
}

/**
 * The record of a finished run (SPEC §6): its run info, outcome and what its row became.
 *
 * @category constructors
 * @since 0.3.0
 */
export const record = (
  run: RunInfo & { readonly merged?: Dropped | undefined },
  outcome: Outcome,
  finishedAt: number,
  settled: Pick<Settled, "state" | "continuation" | "nextSlot" | "dropped" | "pausedReason">,
): RunRecord => {
  const r: RunRecord = {
    kind: settled.continuation === "retry" ? "retried" : "ran",
    id: run.id,
    generation: run.generation,
    slot: run.slot,
    scheduledFor: run.scheduledFor,
    startedAt: run.startedAt,
    attempt: run.attempt,
    runNumber: run.runNumber,
    finishedAt,
    outcome,
    state: settled.state,
    continuation: settled.continuation,
    nextSlot: settled.nextSlot,
    dropped: settled.dropped,
    merged: run.merged,
  }
  return settled.pausedReason === undefined ? r : { ...r, pausedReason: settled.pausedReason }
}

/**
 * A run record filled in place by {@link Kernel.Kernel.complete} (its `into` argument) instead of
 * allocated: a caller that reads each record at once and keeps few of them saves ~200 bytes per
 * run. Its contents are valid until the next completion; {@link copyRecord} keeps one.
 *
 * @category models
 * @since 0.3.0
 */
export interface RecordBuffer {
  kind: "ran" | "retried"
  id: TaskId
  generation: number
  slot: number
  scheduledFor: number
  startedAt: number
  attempt: number
  runNumber: number
  finishedAt: number
  outcome: Outcome
  state: TaskState
  continuation: Continuation
  nextSlot: number | undefined
  dropped: Dropped | undefined
  merged: Dropped | undefined
}

/**
 * An empty {@link RecordBuffer}, with every field a record without a `pausedReason` has (a
 * record that pauses its task is never filled into one).
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeRecordBuffer = (): RecordBuffer => ({
  kind: "ran",
  id: "" as TaskId,
  generation: 0,
  slot: 0,
  scheduledFor: 0,
  startedAt: 0,
  attempt: 0,
  runNumber: 0,
  finishedAt: 0,
  outcome: succeededOutcome,
  state: "done",
  continuation: "final",
  nextSlot: undefined,
  dropped: undefined,
  merged: undefined,
})

/**
 * {@link record} written into `into` (which is returned). Precondition: `settled.pausedReason`
 * is undefined.
 *
 * @category constructors
 * @since 0.3.0
 */
export const recordInto = (
  into: RecordBuffer,
  run: RunInfo & { readonly merged?: Dropped | undefined },
  outcome: Outcome,
  finishedAt: number,
  settled: Pick<Settled, "state" | "continuation" | "nextSlot" | "dropped">,
): RunRecord => {
  into.kind = settled.continuation === "retry" ? "retried" : "ran"
  into.id = run.id
  into.generation = run.generation
  into.slot = run.slot
  into.scheduledFor = run.scheduledFor
  into.startedAt = run.startedAt
  into.attempt = run.attempt
  into.runNumber = run.runNumber
  into.finishedAt = finishedAt
  into.outcome = outcome
  into.state = settled.state
  into.continuation = settled.continuation
  into.nextSlot = settled.nextSlot
  into.dropped = settled.dropped
  into.merged = run.merged
  return into
}

/**
 * A record of its own with the same contents: what keeps a record that may be a
 * {@link RecordBuffer}. Same shape as {@link record} makes.
 *
 * @category constructors
 * @since 0.3.0
 */
export const copyRecord = (r: RunRecord): RunRecord =>
  record(r, r.outcome, r.finishedAt, {
    state: r.state,
    continuation: r.continuation,
    nextSlot: r.nextSlot,
    dropped: r.dropped,
    pausedReason: r.pausedReason,
  })

/**
 * The record of a run whose task was cancelled (or whose id was reused) while it ran: the run
 * changed nothing, its task is `state`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const finalRecord = (
  run: RunInfo & { readonly merged?: Dropped | undefined },
  outcome: Outcome,
  finishedAt: number,
  state: TaskState,
): RunRecord =>
  record(run, outcome, finishedAt, {
    state,
    continuation: "final",
    nextSlot: undefined,
    dropped: undefined,
    pausedReason: undefined,
  })

// ------------------------------------------------------------------------------ pause and resume

/**
 * Where a paused row continues if resumed at `now` (SPEC §15), and the grid slots that passed
 * while it was paused: a held retry keeps its due time; a one-shot its slot; a grid the first
 * slot `>= now`; fixed delay (and custom) `max(held slot, now)`. Pure.
 *
 * @category models
 * @since 0.3.0
 */
export interface Resume {
  /** When its next attempt is due. */
  readonly dueAt: number
  /** The grid slot it works on: unchanged for a held retry, else `dueAt`. */
  readonly slot: number
  readonly skipped: Dropped | undefined
  /** It continues with a held retry. */
  readonly retry: boolean
  /** The failure policy's count starts afresh. */
  readonly consecutiveFailures: number
  /**
   * `now` when a held retry resumes after grid slots were skipped (store it as
   * {@link Row.resumeFrom}: the slot after the retry is then the first grid slot at or after
   * it); -1 otherwise (keep the row's).
   */
  readonly resumeFrom: number
}

/**
 * The RESUME decision for a paused row at `now` (SPEC §15). See {@link Resume}. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const resume = (row: Row, now: number): Resume => {
  const held = row.dueAt
  const plan = row.plan
  const grid = plan !== undefined && (plan.kind === "fixed-rate" || plan.kind === "cron")
  const ctx: Lifecycle.TaskContext = {
    attempt: row.attempt,
    maxRetries: row.retry.maxRetries,
    runNumber: row.runNumber,
    consecutiveFailures: row.consecutiveFailures,
    pauseAfter: row.pauseAfter,
  }
  Lifecycle.step(Lifecycle.PAUSED, Lifecycle.RESUME, { context: ctx, event: RESUME_EVENT })
  const consecutiveFailures = ctx.consecutiveFailures
  if (row.attempt > 1) {
    // A held retry keeps its due time; the grid slots after its slot that passed are skipped.
    let skipped: Dropped | undefined
    if (grid) {
      const first = plan.grid.after(row.slot)
      const last = plan.grid.atOrBefore(now - 1)
      if (first !== undefined && last !== undefined && first <= last)
        skipped = MissedRun.range(plan.grid, first, last)
    }
    return {
      dueAt: held,
      slot: row.slot,
      skipped,
      retry: true,
      consecutiveFailures,
      resumeFrom: skipped === undefined ? -1 : now,
    }
  }
  if (plan === undefined || (grid && held >= now))
    return {
      dueAt: held,
      slot: held,
      skipped: undefined,
      retry: false,
      consecutiveFailures,
      resumeFrom: -1,
    }
  if (grid) {
    const last = plan.grid.atOrBefore(now - 1) ?? held
    // A grid with no slot left keeps its held slot: due at once, it then ends as usual.
    const slot = plan.grid.after(now - 1) ?? held
    return {
      dueAt: slot,
      slot,
      skipped: MissedRun.range(plan.grid, held, last),
      retry: false,
      consecutiveFailures,
      resumeFrom: -1,
    }
  }
  const slot = Math.max(held, now)
  return {
    dueAt: slot,
    slot,
    skipped: undefined,
    retry: false,
    consecutiveFailures,
    resumeFrom: -1,
  }
}

const RESUME_EVENT: Lifecycle.TaskEvent = { type: "RESUME" }

/**
 * The PAUSE decision for a row in `state` (SPEC §5, §15): `paused` at once when `scheduled`;
 * `requested` when `running` (the run finishes and reports, then the task is paused — pass the
 * request to {@link settle} as {@link Row.pauseRequest}); `ignored` otherwise (already paused, a
 * pause already requested, or final). Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const pause = (
  state: TaskState,
  pauseRequested = false,
): "paused" | "requested" | "ignored" => {
  const s = Lifecycle.states.indexOf(state)
  const edge = Lifecycle.step(s, Lifecycle.PAUSE, {
    context: {
      attempt: 1,
      maxRetries: 0,
      runNumber: 0,
      consecutiveFailures: 0,
      pauseAfter: 0,
      pauseRequested,
    },
    event: PAUSE_EVENT,
  })
  if (edge === undefined) return "ignored"
  return edge.target === Lifecycle.PAUSED ? "paused" : "requested"
}

const PAUSE_EVENT: Lifecycle.TaskEvent = { type: "PAUSE" }

// ------------------------------------------------------------------------------ validators

/**
 * The rank of a priority (0 = high, 1 = normal, 2 = low), or -1 for something else.
 *
 * @category getters
 * @since 0.3.0
 */
export const rankOf = (priority: Priority): number =>
  priority === "normal" ? 1 : priority === "high" ? 0 : priority === "low" ? 2 : -1

const badPriority = (priority: unknown): InvalidPriority =>
  new InvalidPriority({
    field: "priority",
    value: priority,
    message: `priority must be "high", "normal" or "low", got ${show(priority)}`,
  })

const isPolicy = (policy: unknown): policy is MissedRunPolicy =>
  policy === "catch-up" || policy === "coalesce" || policy === "skip"

const badPolicy = (policy: unknown): InvalidOption =>
  new InvalidOption({
    field: "missedRuns",
    value: policy,
    message: `missedRuns must be "catch-up", "coalesce" or "skip", got ${show(policy)}`,
  })

const checkPauseAfter = (pauseAfter: number): InvalidOption | undefined =>
  Number.isSafeInteger(pauseAfter) && pauseAfter >= 0
    ? undefined
    : new InvalidOption({
        field: "pauseAfterConsecutiveFailures",
        value: pauseAfter,
        message: `pauseAfterConsecutiveFailures must be a non-negative integer (0 = never), got ${show(pauseAfter)}`,
      })

/** Validated tags, duplicates dropped, in the order given; `NO_TAGS` for none. */
const resolveTags = (tags: ReadonlyArray<string>): ReadonlyArray<string> | InvalidOption => {
  if (!Array.isArray(tags)) {
    return new InvalidOption({
      field: "tags",
      value: tags,
      message: `tags must be an array of strings, got ${show(tags)}`,
    })
  }
  if (tags.length > MAX_TAGS) {
    return new InvalidOption({
      field: "tags",
      value: tags,
      message: `tags must hold at most ${MAX_TAGS} tags, got ${tags.length}`,
    })
  }
  for (let k = 0; k < tags.length; k++) {
    const tag: unknown = tags[k]
    if (typeof tag !== "string" || tag.length === 0 || tag.length > MAX_TAG_LENGTH) {
      return new InvalidOption({
        field: `tags[${k}]`,
        value: tag,
        message: `tags[${k}] must be a string of 1 to ${MAX_TAG_LENGTH} characters, got ${show(tag)}`,
      })
    }
  }
  return tags.length === 0 ? NO_TAGS : Object.freeze([...new Set(tags)])
}

const resolveWindow = (input: DurationInput): number | InvalidOption =>
  toMillisWith(
    input,
    (reason) =>
      new InvalidOption({
        field: "window",
        value: input,
        message: `window ${reason}, got ${show(input)}`,
      }),
  )

/** A window applies to grids (SPEC §3) and, as a deadline, to one-shots: not to the other kinds. */
const checkWindowFits = (
  plan: Schedule.Plan | undefined,
  window: unknown,
): InvalidOption | undefined =>
  plan === undefined || plan.kind === "fixed-rate" || plan.kind === "cron"
    ? undefined
    : new InvalidOption({
        field: "window",
        value: window,
        message: `window applies to fixed-rate, cron and one-shot schedules, not to a ${plan.kind} one`,
      })
