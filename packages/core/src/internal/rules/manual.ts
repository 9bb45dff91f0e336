/**
 * @internal
 * SPEC §19: which manual runs a task's state allows. Written once and used by the kernel and by
 * the durable store alike, so a `trigger` or `retry` is refused for the same states, with the
 * same message, in memory and on disk.
 */
import { ManualRunRefused, show } from "../../Errors.ts"
import type { PauseReason } from "../../Task.ts"
import { type Resume, resume } from "./resume.ts"
import { NO_WINDOW, type Row } from "./row.ts"

/**
 * What was asked: `trigger` (one extra run now, the pending run kept) or `retry` (one more
 * attempt of a failed task's failed slot, due now; or, given a slot, of one failed slot of a
 * recurring task, SPEC §19.7).
 *
 * @category models
 * @since 0.4.0
 */
export type ManualAction = "trigger" | "retry"

/** What to say instead, by state, for a refused trigger. */
const triggerAdvice: Readonly<Record<string, string>> = {
  running:
    "a task never runs twice at once (SPEC §6.6): trigger it again when the run has finished",
  paused: "resume it first, or update it",
  failed: "retry it instead",
  done: "it will never run again: schedule it anew",
  cancelled: "it will never run again: schedule it anew",
  unknown: "no task has this id",
}

/** What to say instead, by state, for a refused retry. */
const retryAdvice: Readonly<Record<string, string>> = {
  scheduled: "only a failed task can be retried: trigger it to run it now",
  running: "only a failed task can be retried; it is running now",
  paused: "only a failed task can be retried: resume it instead",
  done: "it succeeded: only a failed task can be retried",
  cancelled: "it was cancelled: only a failed task can be retried",
  unknown: "no task has this id",
}

/**
 * What a ledger holds about one slot of a task (SPEC §19.7): its run with the highest attempt,
 * which is its latest (a slot's attempts only grow). A store reads it from its ledger of the
 * task's current generation.
 *
 * @category models
 * @since 0.6.0
 */
export interface SlotRuns {
  /** The highest attempt of the slot that ran, 1-based. */
  readonly lastAttempt: number
  /** Whether that attempt failed (any outcome but `succeeded`). */
  readonly failed: boolean
}

/**
 * The facts, besides the task's state, that a retry of one slot (SPEC §19.7) is decided on.
 *
 * @category models
 * @since 0.6.0
 */
export interface SlotRetry {
  /** The slot asked for, epoch ms. */
  readonly slot: number
  /** Whether the task is recurring: a one-shot's one slot is retried by `retry(id)` alone. */
  readonly recurring: boolean
  /** The slot of its pending run (a pending retry's slot, not its due time) when `scheduled`. */
  readonly pendingSlot: number | undefined
  /** What its ledger holds about `slot`; `undefined` when none of its runs is there. */
  readonly runs: SlotRuns | undefined
}

/** What to say instead, by state, for a refused retry of one slot. */
const slotAdvice: Readonly<Record<string, string>> = {
  running: "a task never runs twice at once (SPEC §6.6): retry the slot when the run has finished",
  paused: "resume it first",
  failed: "retry it without a slot: its failed slot is the one retried",
  done: "it will never run again: schedule it anew",
  cancelled: "it will never run again: schedule it anew",
  unknown: "no task has this id",
}

/** Why a `scheduled` task may not retry slot `r.slot` now, or `undefined`. */
const slotProblem = (r: SlotRetry, pending: boolean): string | undefined => {
  const slot = r.slot
  if (!r.recurring)
    return "a one-shot has one slot: retry it without a slot once it has failed (SPEC §19.2)"
  if (pending) return "a manual run of it is already waiting to start"
  if (r.pendingSlot === slot) return `slot ${slot} is its pending run (a retry of it is due)`
  if (r.runs === undefined)
    return `its ledger has no run of slot ${slot} (it never ran, or retention dropped it)`
  if (!r.runs.failed)
    return `its last run of slot ${slot} (attempt ${r.runs.lastAttempt}) succeeded: only a failed slot can be retried`
  return undefined
}

/** The refusal of a retry of one slot (SPEC §19.7), or `undefined`. */
const slotRefusal = (
  id: string,
  state: string,
  pending: boolean,
  r: SlotRetry,
): ManualRunRefused | undefined => {
  const problem =
    state === "scheduled" ? slotProblem(r, pending) : `it is ${state}; ${slotAdvice[state] ?? ""}`
  if (problem === undefined) return undefined
  return new ManualRunRefused({
    action: "retry",
    id,
    state,
    slot: r.slot,
    message: `cannot retry slot ${r.slot} of ${show(id)}: ${problem}`,
  })
}

/**
 * The refusal of a manual run, or `undefined` when the state allows it:
 * `trigger` needs a `scheduled` task with no manual run already pending (`pending`); `retry`
 * needs a `failed` task (SPEC §19.4). Pure; `state` is a task state or `"unknown"`.
 *
 * A `retry` given `slot` (SPEC §19.7) is a retry of that one slot of a recurring task instead:
 * it needs a `scheduled` recurring task with no manual run pending, whose pending run is not a
 * retry of that slot, and whose ledger's latest run of the slot (`slot.runs`) failed. Then
 * {@link slotRetried} gives its run.
 *
 * **Example** (A running task is not triggered)
 *
 * ```ts
 * import { Rules } from "@tickwork/core"
 * Rules.manualRefusal("trigger", "report", "running")?.message
 * // 'cannot trigger "report": it is running; a task never runs twice at once …'
 * Rules.manualRefusal("retry", "report", "failed") // undefined: allowed
 * ```
 *
 * @category rules
 * @since 0.4.0
 */
export const manualRefusal = (
  action: ManualAction,
  id: string,
  state: string,
  pending = false,
  slot?: SlotRetry,
): ManualRunRefused | undefined => {
  if (action === "retry" && slot !== undefined) return slotRefusal(id, state, pending, slot)
  if (action === "trigger") {
    if (state === "scheduled" && !pending) return undefined
    const advice =
      state === "scheduled"
        ? "a manual run of it is already waiting to start"
        : (triggerAdvice[state] ?? "")
    return new ManualRunRefused({
      action,
      id,
      state,
      message: `cannot trigger ${show(id)}: it is ${state}; ${advice}`,
    })
  }
  if (state === "failed") return undefined
  return new ManualRunRefused({
    action,
    id,
    state,
    message: `cannot retry ${show(id)}: it is ${state}; ${retryAdvice[state] ?? ""}`,
  })
}

/**
 * What a retry by hand (SPEC §19.2) gives a `failed` task: the attempt it runs — its failed
 * slot's last attempt that ran + 1 (`lastRan`, 0 when none ran), or the attempt it never ran
 * (`pending`: an expired one-shot's) — and its window: a one-shot's deadline is dropped, since
 * its only slot is the one being retried; a recurring task keeps its window, which never stops
 * a retry (it applies to a slot's first attempt). Pure; `windowMs` in ms or `NO_WINDOW`.
 *
 * **Example** (A one-shot that used its two attempts)
 *
 * ```ts
 * import { Rules } from "@tickwork/core"
 * Rules.retried(2, 1, false, 5_000) // { attempt: 3, windowMs: Rules.NO_WINDOW }
 * ```
 *
 * @category rules
 * @since 0.4.0
 */
export const retried = (
  lastRan: number,
  pending: number,
  recurring: boolean,
  windowMs: number,
): { readonly attempt: number; readonly windowMs: number } => ({
  attempt: Math.max(lastRan + 1, pending),
  windowMs: recurring ? windowMs : NO_WINDOW,
})

/**
 * A retry of one failed slot at `now` (SPEC §19.7; the caller checked {@link manualRefusal}
 * with the slot first): the manual run — slot `slot`, due `now`, its ledger's last attempt + 1.
 * Like a trigger's ({@link triggered}), it runs with the task's pending run set aside, and
 * {@link manualEnded} puts that back when it ends. Pure.
 *
 * **Example** (Slot 9's second attempt, now)
 *
 * ```ts
 * import { Rules } from "@tickwork/core"
 * Rules.slotRetried(9, { lastAttempt: 1, failed: true }, 50) // { slot: 9, dueAt: 50, attempt: 2 }
 * ```
 *
 * @category rules
 * @since 0.6.0
 */
export const slotRetried = (slot: number, runs: SlotRuns, now: number): PendingRun => ({
  slot,
  dueAt: now,
  attempt: runs.lastAttempt + 1,
})

/**
 * A task's pending run as a trigger sets it aside (SPEC §19.1): its slot, when that attempt is
 * due (epoch ms) and its 1-based attempt. A store may carry more fields of its own with it
 * (`P`); they are put back untouched.
 *
 * @category models
 * @since 0.5.0
 */
export interface PendingRun {
  readonly slot: number
  readonly dueAt: number
  readonly attempt: number
}

/**
 * A trigger at `now` (SPEC §19.1) of a task whose pending run is `pending` (the caller checked
 * {@link manualRefusal} first): the manual run — slot and due time `now`, attempt 1 — and the
 * pending run kept, as it was, to be put back by {@link manualEnded}. Pure.
 *
 * **Example** (A daily task's 09:00 slot kept while it runs now)
 *
 * ```ts
 * import { Rules } from "@tickwork/core"
 * Rules.triggered({ slot: 9, dueAt: 9, attempt: 1 }, 5)
 * // { run: { slot: 5, dueAt: 5, attempt: 1 }, kept: { slot: 9, dueAt: 9, attempt: 1 } }
 * ```
 *
 * @category rules
 * @since 0.5.0
 */
export const triggered = <P extends PendingRun>(
  pending: P,
  now: number,
): { readonly run: PendingRun; readonly kept: P } => ({
  run: { slot: now, dueAt: now, attempt: 1 },
  kept: pending,
})

/**
 * The end of a manual run (SPEC §19.1, §19.5 `MANUAL_END`), whatever its outcome: the kept run
 * is the task's pending run again, as it was, and the task is `scheduled`, or `paused` when a
 * pause was asked for while it ran (`pauseRequested`). No slot moves, no retry is spent, and
 * neither the failure policy nor a breaker counts the run. Pure.
 *
 * @category rules
 * @since 0.5.0
 */
export const manualEnded = <P extends PendingRun>(
  kept: P,
  pauseRequested: boolean,
): { readonly state: "scheduled" | "paused"; readonly pending: P } => ({
  state: pauseRequested ? "paused" : "scheduled",
  pending: kept,
})

/**
 * Whether a pause for `reason` drops a manual run waiting to start (SPEC §19.1): a pause by hand
 * (`manual`) does — the pending run it set aside is the task's again; a breaker's hold does not —
 * the manual run waits with the task and runs when the breaker lets it go. (A failure policy
 * pauses a task only as its own run ends, when no manual run can be waiting.) Pure.
 *
 * @category rules
 * @since 0.6.0
 */
export const pauseDropsManual = (reason: PauseReason): boolean => reason === "manual"

/**
 * RESUME of a paused task whose manual run waits (SPEC §19.1): {@link resume} applies to the
 * pending run set aside (`kept`), not to the manual run — the grid slots that passed since the
 * kept run's slot are its skips, and it continues where `resume` says (its attempt as it was) —
 * while the manual run stays due as it is (`row`'s slot, due time and attempt), and runs first.
 * The failure policy's count starts afresh as for any resume. Pure.
 *
 * For instance, a task every 100 ms held by its breaker at 50 while a trigger's run (due at 50)
 * waits with slot 100 set aside, resumed at 350: slots 100..300 are skipped, the kept run
 * continues at slot 400, and the manual run is still due at 50, so it runs at once.
 *
 * @category rules
 * @since 0.6.0
 */
export const resumeManual = <P extends PendingRun>(
  row: Row,
  kept: P,
  now: number,
): ManualResume<P> => {
  const r = resume({ ...row, slot: kept.slot, dueAt: kept.dueAt, attempt: kept.attempt }, now)
  return { resume: r, kept: { ...kept, slot: r.slot, dueAt: r.dueAt }, dueAt: row.dueAt }
}

/**
 * What {@link resumeManual} decides.
 *
 * @category models
 * @since 0.6.0
 */
export interface ManualResume<P extends PendingRun> {
  /** The resume of the kept run: its skips, where it continues, the failure count. */
  readonly resume: Resume
  /** The kept run moved as `resume` says (slot, due time); its attempt and other fields as they were. */
  readonly kept: P
  /** When the task's next run, the waiting manual run, is due (epoch ms): as it was. */
  readonly dueAt: number
}
