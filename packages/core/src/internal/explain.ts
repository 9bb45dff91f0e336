/**
 * @internal
 * {@link explainRow}: a live task's next slots given its state (SPEC §15), read from the kernel's
 * rows without changing them.
 */
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import * as Schedule from "../Schedule.ts"
import type { PauseReason, TaskState } from "../Task.ts"
import type { Breakers } from "./breakers.ts"
import type { Explanation } from "./kernelTypes.ts"
import { type Flow, waitingOf } from "./limits.ts"
import type { Extras } from "./records.ts"
import type { Rows } from "./rows.ts"

const { SCHEDULED, RUNNING, DONE } = Lifecycle
const NO_WINDOW = Rules.NO_WINDOW

/**
 * @internal The explanation of row `i` at `now` with its next `count` slots (see
 * `Kernel.explain`); `undefined` for a final row.
 */
export const explainRow = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  flow: Flow<J> | undefined,
  i: number,
  now: number,
  count: number,
): Explanation | undefined => {
  const s = rows.t.state(i)
  if (s >= DONE) return undefined
  const extra = rows.t.extra(i)
  const plan = extra?.plan
  const notes: Array<string> = []
  const cell = extra?.breaker
  const windowMs = extra === undefined || extra.windowMs === NO_WINDOW ? undefined : extra.windowMs
  const attempt = rows.t.attempt(i)
  const slot = rows.t.slot(i)
  let pending: Explanation["pending"]
  let waiting: Explanation["waiting"]
  /** The first schedule slot to list, and whether the one after the pending retry follows it. */
  let from: number | undefined
  let after: number | undefined
  if (s === SCHEDULED) {
    if (attempt > 1) {
      // Stryker disable next-line OptionalChaining: equivalent, a retry row has a side object
      pending = { slot: extra?.gridSlot ?? slot, scheduledFor: slot, attempt }
      notes.push(
        // Stryker disable next-line OptionalChaining: equivalent, a retry row has a side object
        `retry ${attempt - 1} of slot ${extra?.gridSlot ?? slot} is due at ${slot}; its schedule goes on after it`,
      )
      // Stryker disable next-line OptionalChaining: equivalent, a retry row has a side object
      after = extra?.gridSlot ?? slot
    } else {
      pending = { slot, scheduledFor: slot, attempt }
      from = slot
    }
    const w = flow === undefined ? undefined : waitingOf(rows, i)
    if (w !== undefined) {
      const what = (flow as Flow<J>).waitsFor(i, w)
      waiting = { cause: w.cause, scope: w.scope, since: w.since, until: w.until, for: what }
      notes.push(`waiting (${w.cause}) on ${w.scope} since ${w.since}: it waits for ${what}`)
    }
  } else if (s === RUNNING) {
    notes.push(
      "running: the slot after this run is decided when it ends (its missed-run policy applies)",
    )
    if (extra?.pauseRequest !== undefined)
      notes.push(`it will be paused (${extra.pauseRequest}) when its run ends`)
    after = extra?.gridSlot ?? slot
  } else {
    const reason = (extra as Extras).pausedReason as PauseReason
    let at = now
    if (reason === "breaker" && cell !== undefined && cell.status.state === "open") {
      at = Math.max(now, cell.halfOpenAt)
      notes.push(
        `held by breaker ${cell.name} (open) until ${cell.halfOpenAt}; then one held task runs as its probe, and all resume when the probe's slot succeeds`,
      )
    } else if (reason === "breaker" && cell !== undefined) {
      notes.push(
        `held by breaker ${cell.name} (${cell.status.state}); it resumes when the breaker closes`,
      )
    } else {
      notes.push(
        reason === "manual"
          ? "paused by hand: it runs again only after resume(); the slots below are those it would take if resumed now"
          : "paused by its failure policy: it runs again only after resume(); the slots below are those it would take if resumed now",
      )
    }
    const r = Rules.resume(rows.rowView(i, extra), at)
    if (r.retry) {
      notes.push(`a held retry (attempt ${attempt}) runs first, due at ${r.dueAt}`)
      // Stryker disable next-line OptionalChaining: equivalent, a paused row has a side object
      after = extra?.gridSlot ?? slot
    } else from = r.dueAt
  }
  if (windowMs !== undefined) {
    if (plan === undefined) {
      const deadline = (extra as Extras).gridSlot + windowMs
      notes.push(
        deadline < now
          ? `past its deadline (${deadline}): it expires when taken and ends failed`
          : `its deadline is ${deadline}: past it, the run expires and the task ends failed`,
      )
    } else {
      notes.push(`window ${windowMs} ms: a slot not started within it is skipped`)
    }
  }
  const slots: Array<Schedule.PreviewSlot> = []
  const cron = plan?.kind === "cron" ? plan.cron : undefined
  let next =
    from ?? (after !== undefined && plan !== undefined ? following(plan, after) : undefined)
  if (after !== undefined && extra?.restart !== undefined) {
    next = undefined
    notes.push("a schedule change takes effect when this slot ends")
  }
  while (next !== undefined && slots.length < count) {
    slots.push({ slot: next, dst: cron === undefined ? undefined : Schedule.dstNote(cron, next) })
    next = plan === undefined ? undefined : following(plan, next)
  }
  return {
    id: rows.idOf(i),
    state: Lifecycle.states[s] as TaskState,
    kind: plan === undefined ? "once" : plan.kind,
    pausedReason: extra?.pausedReason ?? extra?.pauseRequest,
    pending,
    window: windowMs,
    deadline:
      windowMs !== undefined && plan === undefined
        ? (extra as Extras).gridSlot + windowMs
        : undefined,
    breaker: cell === undefined ? undefined : breakers.info(cell),
    waiting,
    slots,
    notes,
  }
}

/** The slot after `slot` if its run took no time: a schedule's own sequence, for previews. */
/** @internal The slot after `slot` if its run took no time. */
export const following = (plan: Schedule.Plan, slot: number): number | undefined => {
  // Stryker disable next-line StringLiteral: equivalent, a preview slot ends at its own slot, so no policy is read
  const next = Schedule.nextAfterRun(plan, "catch-up", slot, slot)
  return next !== undefined && "slot" in next ? next.slot : undefined
}
