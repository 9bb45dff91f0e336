/**
 * @internal
 * A finished run's decision, as a pure function of its row and its {@link Redecision}: load row
 * → `Rules.settle` → row update, with its ledger row and the events of the slots it dropped.
 * Completion makes it once on the row as claimed; the commit makes it again, from the same data,
 * on the row as it is in its transaction when the row changed while it ran or has a breaker.
 * Both import this module: the data flows one way (completion → commit → here), and nothing
 * here reads a clock, a store or an environment.
 */
import { Errors, type Random, type Results, Rules, Schedule, type Task } from "@tickwork/core"
import { Ledger } from "@tickwork/runtime"
import { Result } from "effect"
import * as Events from "./events.ts"
import type { Decided, EventEntry, KeptRun, Redecision, RunEntry, TaskRow } from "./model.ts"
import * as KeptResult from "./result.ts"
import * as Rows from "./rows.ts"

/** A failure, rendered for the ledger and storable (SPEC §6.3); `null` for a success. */
export const renderOutcome = (outcome: Task.Outcome): string | null => {
  switch (outcome.kind) {
    case "succeeded":
      return null
    case "failed":
      return storable(render(outcome.error))
    case "defect":
      return storable(`defect: ${render(outcome.defect)}`)
    case "interrupted":
      return "interrupted"
    case "timed-out":
      return `timed out after ${outcome.afterMs} ms`
  }
}

/** A lone surrogate (half of a UTF-16 pair with no other half). */
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * `text` with each character no store keeps as U+FFFD: PostgreSQL's `text` refuses NUL (U+0000;
 * the commit would fail, and fail again at every retry, so the run's outcome would never be
 * recorded) and a lone surrogate comes back as U+FFFD from either store anyway.
 */
const storable = (text: string): string =>
  text.replaceAll("\u0000", "\uFFFD").replace(LONE, "\uFFFD")

const render = (u: unknown): string => {
  if (typeof u === "object" && u !== null) {
    const tag = (u as { _tag?: unknown })._tag
    const message = (u as { message?: unknown }).message
    if (typeof message === "string" && message !== "") {
      return typeof tag === "string" ? `${tag}: ${message}` : message
    }
    if (typeof tag === "string") return tag
  }
  return Errors.show(u)
}

/**
 * A random source that records its draws into `draws`: the first decision's, kept on the
 * change for the commit to replay.
 */
export const recording = (random: Random.Random, draws: Array<number>): Random.Random => ({
  next: () => {
    const v = random.next()
    draws.push(v)
    return v
  },
})

/**
 * A random source that replays `draws`, then draws from `random` (absent: 0.5, the middle of
 * the jitter range): a second decision on a changed row takes the first one's jitter.
 */
export const replaying = (
  draws: ReadonlyArray<number>,
  random: Random.Random | undefined,
): Random.Random => {
  let k = 0
  return {
    next: () => (k < draws.length ? (draws[k++] as number) : (random?.next() ?? 0.5)),
  }
}

/**
 * What became of a succeeded run's value, when its handler keeps one (SPEC §19.3): the worker
 * encoded it already (`KeptResult.Encoded`); the rule's verdict is only written here.
 */
const keptOf = (outcome: Task.Outcome): Results.Kept | undefined =>
  outcome.kind === "succeeded" && outcome.value instanceof KeptResult.Encoded
    ? outcome.value.kept
    : undefined

/**
 * The decision for a run described by `r` on `row` (as claimed, or as it is when the commit
 * re-reads it). `draws` is the jitter source; `breakerOpens` answers from the breaker's stored
 * state (`undefined`: no breaker, or not known yet).
 */
export const decide = (
  row: TaskRow,
  r: Redecision,
  draws: Random.Random,
  breakerOpens: (() => boolean) | undefined,
): Decided & { readonly run: RunEntry } => {
  if (row.kept !== undefined) return manualEnd(row, row.kept, r)
  const { outcome, finishedAt, startedAt, runNumber } = r
  const error = renderOutcome(outcome)
  const kept = keptOf(outcome)
  const view = Rows.view(row, r.windowMs, runNumber)
  const settled = Rules.settle(view, outcome, finishedAt, { random: draws, breakerOpens })
  const record = Rules.record(
    {
      id: row.id as Task.TaskId,
      generation: row.generation,
      slot: row.slot,
      scheduledFor: row.runAt,
      startedAt,
      attempt: row.attempt,
      runNumber,
      tags: row.tags,
    },
    outcome,
    finishedAt,
    settled,
  )
  const events: Array<EventEntry> = []
  if (settled.dropped !== undefined) {
    events.push(Events.missed(Ledger.missed(record, settled.dropped), row, r.owner))
  }
  const update = Rows.settled(row, settled, runNumber, finishedAt, error, r.seq)
  // A schedule change that waited for this slot took effect: the new schedule is stored.
  const restart = row.restart
  const schedule =
    settled.consumed && restart !== undefined && settled.scheduleError === undefined
      ? // Stryker disable next-line LogicalOperator: equivalent, a consumed slot whose schedule goes on has nextSlot === slot; with no next slot the task is final
        Schedule.encode(restart, { first: settled.nextSlot ?? settled.slot, plan: settled.plan })
      : undefined
  return {
    update:
      schedule !== undefined && Result.isSuccess(schedule)
        ? { ...update, schedule: schedule.success }
        : update,
    continuation: settled.continuation,
    run: {
      taskId: row.id,
      generation: row.generation,
      slot: row.slot,
      attempt: row.attempt,
      runAt: row.runAt,
      startedAt,
      finishedAt,
      outcome: outcome.kind,
      error,
      fence: row.fence,
      owner: r.owner,
      delivery: row.deliveries,
      state: settled.state,
      nextRunAt: settled.nextSlot ?? null,
      result: kept?.kind === "kept" ? kept.json : null,
      resultError: kept?.kind === "refused" ? `${kept.error._tag}: ${kept.error.message}` : null,
    },
    events,
    slot: { ended: settled.slotEnded, failed: outcome.kind !== "succeeded" },
  }
}

/**
 * The end of a manual run (SPEC §19.1), whatever its outcome: core's `Rules.manualEnded` puts
 * the kept run back as it was (slot, due time, attempt, claims, push order), `scheduled`, or
 * `paused` when a pause was asked for while it ran. Neither the failure policy nor a breaker
 * sees it (no `slot` for the breaker to count); a failure is still the row's `lastError`.
 */
const manualEnd = (
  row: TaskRow,
  kept: KeptRun,
  r: Redecision,
): Decided & { readonly run: RunEntry } => {
  const { outcome, finishedAt, startedAt, runNumber } = r
  const error = renderOutcome(outcome)
  const result = keptOf(outcome)
  const ended = Rules.manualEnded(kept, row.pausedReason !== null)
  const back = ended.pending
  return {
    update: {
      state: ended.state,
      slot: back.slot,
      runAt: back.dueAt,
      claimableAt: back.dueAt,
      attempt: back.attempt,
      runNumber,
      consecutiveFailures: row.consecutiveFailures,
      deliveries: back.deliveries,
      leaseOwner: null,
      finishedAt: null,
      lastError: error ?? row.lastError,
      seq: back.seq,
      updatedAt: finishedAt,
      pausedReason: ended.state === "paused" ? row.pausedReason : null,
      resumeFrom: back.resumeFrom,
      kept: null,
    },
    continuation: "next",
    run: {
      taskId: row.id,
      generation: row.generation,
      slot: row.slot,
      attempt: row.attempt,
      runAt: row.runAt,
      startedAt,
      finishedAt,
      outcome: outcome.kind,
      error,
      fence: row.fence,
      owner: r.owner,
      delivery: row.deliveries,
      state: ended.state,
      nextRunAt: back.dueAt,
      result: result?.kind === "kept" ? result.json : null,
      resultError:
        result?.kind === "refused" ? `${result.error._tag}: ${result.error.message}` : null,
      manual: true,
    },
    events: [],
  }
}
