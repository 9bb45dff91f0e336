/**
 * @internal
 * Ledger events: the one constructor of an {@link EventEntry}. Every event names its task
 * (id, generation), the slots it concerns and the claim it happened under (fence, owner).
 */
import type { Breaker, Declared, MissedRun } from "@tickwork/core"
import type { Ledger } from "@tickwork/runtime"
import type { EventEntry, EventKind } from "./model.ts"

/** What an event is about: a task at a fence (a row as stored, or the parts of one). */
export interface Subject {
  readonly id: string
  readonly generation: number
  readonly slot: number
  readonly fence: number | null
}

/**
 * The event of `kind` about `subject` at `at`, recorded by `owner`. The slots default to the
 * subject's own slot, one of them.
 */
export const make = (
  kind: EventKind,
  subject: Subject,
  at: number,
  owner: string | null,
  fields: {
    readonly slots?: Pick<MissedRun.Dropped, "first" | "last" | "count"> | undefined
    readonly cause?: string | null | undefined
    readonly detail?: string | null | undefined
    readonly origin?: string | undefined
  } = {},
): EventEntry => ({
  taskId: subject.id,
  generation: subject.generation,
  kind,
  firstSlot: fields.slots?.first ?? subject.slot,
  lastSlot: fields.slots?.last ?? subject.slot,
  count: fields.slots?.count ?? 1,
  cause: fields.cause ?? null,
  at,
  fence: subject.fence,
  owner,
  detail: fields.detail ?? null,
  // Only controls asked for by a named tool carry the key: every other event keeps its shape.
  ...(fields.origin === undefined ? {} : { origin: fields.origin }),
})

/**
 * A live task changed in place (SPEC §15, §18.1), as core's `Declared.changeOf` recorded it: the
 * cause, and the fields in `detail` (comma-separated). Its slot is the task's slot after the
 * change (`slot`: a new schedule's next slot); when the change moved it, `detail` ends with the
 * slot before (`; slot before <epoch ms>`), so the ledger shows where the task goes and whence.
 */
export const updated = (
  subject: Subject,
  at: number,
  owner: string | null,
  change: Declared.Change,
  slot: number,
): EventEntry =>
  make("updated", subject, at, owner, {
    slots: { first: slot, last: slot, count: 1 },
    detail: `${change.fields.join(", ")}${slot === subject.slot ? "" : `; slot before ${subject.slot}`}`,
    cause: change.cause,
  })

const lowerBound = (slots: MissedRun.Dropped): string | null =>
  slots.exact ? null : "count is a lower bound"

/** Slots a run's missed-run policy dropped or merged, as the runtime's ledger names them. */
export const missed = (m: Ledger.Missed, subject: Subject, owner: string): EventEntry =>
  make(m.kind, subject, m.at, owner, {
    slots: m,
    cause: m.cause,
    detail: m.exact ? null : "count is a lower bound",
  })

/** Slots skipped at claim time because they were older than the catch-up window. */
export const window = (
  skipped: MissedRun.Dropped,
  subject: Subject,
  owner: string,
  at: number,
  windowMs: number,
): EventEntry =>
  make("skipped", subject, at, owner, {
    slots: skipped,
    cause: "window",
    detail: `older than the catch-up window of ${windowMs} ms${skipped.exact ? "" : "; count is a lower bound"}`,
  })

/** Slots merged at claim time into the run of a later slot (policy `coalesce`). */
export const coalesced = (
  merged: MissedRun.Dropped,
  subject: Subject,
  owner: string,
  at: number,
  into: number,
): EventEntry =>
  make("coalesced", subject, at, owner, {
    slots: merged,
    cause: "late",
    detail: `merged into the run of slot ${into}${merged.exact ? "" : "; count is a lower bound"}`,
  })

/**
 * Slots that passed while a task was paused (cause `paused`) or held by its breaker (cause
 * `breaker`), skipped when it resumed (SPEC §7, §15).
 */
export const paused = (
  skipped: MissedRun.Dropped,
  subject: Subject,
  at: number,
  nextSlot: number,
  cause: "paused" | "breaker" = "paused",
  origin?: string | undefined,
): EventEntry =>
  make("skipped", subject, at, null, {
    slots: skipped,
    cause,
    origin,
    detail: `passed while ${cause === "paused" ? "paused" : "held by its breaker"}; resumed at slot ${nextSlot}${lowerBound(skipped) === null ? "" : "; count is a lower bound"}`,
  })

/** A circuit breaker's transition `from` → `to`, caused by (or letting through) `subject`. */
export const breaker = (
  name: string,
  from: Breaker.BreakerState,
  to: Breaker.BreakerState,
  subject: Subject | undefined,
  at: number,
  owner: string | null,
  detail: string,
): EventEntry => ({
  ...make("breaker", subject ?? { id: "", generation: 0, slot: at, fence: null }, at, owner, {
    cause: to,
    detail: `${from} -> ${to}: ${detail}`,
  }),
  breaker: name,
})
