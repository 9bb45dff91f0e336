/**
 * @internal
 * SPEC §19: which manual runs a task's state allows. Written once and used by the kernel and by
 * the durable store alike, so a `trigger` or `retry` is refused for the same states, with the
 * same message, in memory and on disk.
 */
import { ManualRunRefused, show } from "../../Errors.ts"
import { NO_WINDOW } from "./row.ts"

/**
 * What was asked: `trigger` (one extra run now, the pending run kept) or `retry` (one more
 * attempt of a failed task's failed slot, due now).
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
 * The refusal of a manual run, or `undefined` when the state allows it:
 * `trigger` needs a `scheduled` task with no manual run already pending (`pending`); `retry`
 * needs a `failed` task (SPEC §19.4). Pure; `state` is a task state or `"unknown"`.
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
): ManualRunRefused | undefined => {
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
