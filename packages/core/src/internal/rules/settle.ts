/**
 * @internal
 * A run's outcome → the next state, slot or retry time and what to record, the failure
 * policy pausing included (SPEC §5, §7). One algorithm (the settle step and its records), so
 * one module. Re-exported by `Rules.ts`.
 */
import type { ScheduleError } from "../../Errors.ts"
import * as Lifecycle from "../../Lifecycle.ts"
import type { Dropped, Next } from "../../MissedRun.ts"
import type * as Random from "../../Random.ts"
import * as Retry from "../../Retry.ts"
import * as Schedule from "../../Schedule.ts"
import type {
  Continuation,
  Outcome,
  PauseReason,
  RunInfo,
  RunRecord,
  TaskId,
  TaskState,
} from "../../Task.ts"
import { succeeded as succeededOutcome } from "../../Task.ts"
import { MAX_MS } from "../../Time.ts"
import type { Row } from "./row.ts"

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
  // Stryker disable BooleanLiteral,StringLiteral: equivalent, reset() sets each field before a read
  type: "SUCCEED" | "FAIL" = "SUCCEED"
  private row: Row | undefined = undefined
  private finishedAt = 0
  private opens: (() => boolean) | undefined = undefined
  computed = false
  next: Next | undefined = undefined
  plan: Schedule.Plan | undefined = undefined
  error: ScheduleError | undefined = undefined
  breakerAsked = false
  /** Valid only when {@link breakerAsked}. */
  breakerAnswer = false
  // Stryker restore BooleanLiteral,StringLiteral

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
// Stryker disable BooleanLiteral,StringLiteral: equivalent, settleInto sets every field before it is read
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
// Stryker restore BooleanLiteral,StringLiteral

/**
 * A new {@link Scratch}.
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeScratch = (): Scratch => ({
  // Stryker disable next-line ObjectLiteral: equivalent, settleInto sets every field before the machine reads it
  context: {
    attempt: 1,
    maxRetries: 0,
    runNumber: 0,
    consecutiveFailures: 0,
    pauseAfter: 0,
    // Stryker disable next-line BooleanLiteral: equivalent, settleInto sets it first
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
    // Stryker disable next-line StringLiteral: equivalent, the machine's step is chosen by its event index (FAIL, SUCCEED), not by this name
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
    edge.ops.includes(Lifecycle.ops.slotFailed) ||
    edge.ops.includes(Lifecycle.ops.slotSucceeded) ||
    edge.ops.includes(Lifecycle.ops.lastSlotFailed) ||
    edge.ops.includes(Lifecycle.ops.lastSlotSucceeded)
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
  // A manual run (SPEC §19.1) says so; every other record keeps the common shape.
  const m: RunRecord = run.manual === true ? { ...r, manual: true } : r
  return settled.pausedReason === undefined ? m : { ...m, pausedReason: settled.pausedReason }
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
  /**
   * The task's id, read from {@link RecordBuffer.of} when read: a generated id is a string made
   * from the row and generation, and most records are kept as numbers (the runtime's ledger)
   * without ever reading it — formatting it per run cost a string and ~3% of a burst's time.
   */
  readonly id: TaskId
  /** The run this record is of (not enumerable: not a field of the record). */
  of: { readonly id: TaskId }
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
export const makeRecordBuffer = (): RecordBuffer => {
  const buffer = {
    // Stryker disable StringLiteral: equivalent, recordInto writes every field before a record is read
    kind: "ran",
    get id(): TaskId {
      return (this as unknown as RecordBuffer).of.id
    },
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
  } as unknown as RecordBuffer
  // Stryker restore StringLiteral
  // Not enumerable: a spread, `toEqual` or JSON of the buffer sees the record's fields only.
  Object.defineProperty(buffer, "of", { value: noRun, writable: true, enumerable: false })
  return buffer
}

/** What an unfilled {@link RecordBuffer} is of. */
const noRun: { readonly id: TaskId } = { id: "" as TaskId }

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
  into.of = run
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
