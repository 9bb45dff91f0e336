/**
 * The occurrence ledger: a bounded, queryable record of every occurrence of every task —
 * including the ones that did not run, and why.
 *
 * | kind | when |
 * |---|---|
 * | `ran` | a run ended; its outcome, and whether the task continues (`next`) or is final |
 * | `retried` | a run failed and a retry of the same slot is scheduled (`nextSlot`) |
 * | `coalesced` | missed grid slots merged into one run (policy `coalesce`) |
 * | `skipped` | missed grid slots dropped (policy `skip`) |
 * | `cancelled` | the task was cancelled while scheduled or running |
 *
 * A `coalesced`/`skipped` record covers a range of grid slots (`first`…`last`, `count` of them)
 * and says whether they passed while the task was late to start (`late`: the clock jumped, or
 * every worker was busy), while its previous run was still running (`overlap`), or both.
 *
 * @since 0.1.0
 */
import type { MissedRun, Task } from "@tickwork/core"

/**
 * An occurrence that ran.
 *
 * @category models
 * @since 0.1.0
 */
export interface Ran extends Task.RunRecord {
  readonly kind: "ran" | "retried"
}

/**
 * Missed grid slots that did not get a run of their own.
 *
 * @category models
 * @since 0.1.0
 */
export interface Missed {
  readonly kind: "coalesced" | "skipped"
  readonly id: Task.TaskId
  readonly generation: number
  readonly first: number
  readonly last: number
  readonly count: number
  /** `false` when a cron range was too long to count exactly (`count` is then a lower bound). */
  readonly exact: boolean
  readonly cause: "late" | "overlap" | "late-and-overlap"
  /** The slot of the run that takes their place (coalesce), or the next slot (skip). */
  readonly nextSlot: number | undefined
  /** When the decision was made (the run's `finishedAt`), epoch ms. */
  readonly at: number
}

/**
 * A task cancelled while scheduled or running.
 *
 * @category models
 * @since 0.1.0
 */
export interface Cancelled {
  readonly kind: "cancelled"
  readonly id: Task.TaskId
  readonly generation: number
  /** The state it was cancelled from. */
  readonly from: "scheduled" | "running"
  /** The pending slot (from `scheduled`) or the running run's slot. */
  readonly scheduledFor: number
  /** Whether its running fiber was interrupted (`cancel(id, { interrupt: true })`). */
  readonly interrupted: boolean
  readonly at: number
}

/**
 * Any ledger record.
 *
 * @category models
 * @since 0.1.0
 */
export type Occurrence = Ran | Missed | Cancelled

/**
 * The `ran` (or `retried`) record of a finished run. It takes over `record` (the kernel makes a
 * fresh one per run) instead of copying it: one allocation less on the hot path.
 *
 * @category constructors
 * @since 0.1.0
 */
export const ran = (record: Task.RunRecord): Ran => {
  const r = record as { -readonly [K in keyof Ran]: Ran[K] }
  r.kind = record.continuation === "retry" ? "retried" : "ran"
  return r
}

/**
 * The `coalesced` or `skipped` record of the grid slots a run's missed-run policy dropped.
 *
 * @category constructors
 * @since 0.1.0
 */
export const missed = (record: Task.RunRecord, dropped: MissedRun.Dropped): Missed => {
  const late = dropped.first <= record.startedAt
  const overlap = dropped.last > record.startedAt
  return {
    // Coalesce runs the latest missed slot, which is already due; skip moves past `now`.
    kind:
      record.nextSlot !== undefined && record.nextSlot <= record.finishedAt
        ? "coalesced"
        : "skipped",
    id: record.id,
    generation: record.generation,
    first: dropped.first,
    last: dropped.last,
    count: dropped.count,
    exact: dropped.exact,
    cause: late && overlap ? "late-and-overlap" : late ? "late" : "overlap",
    nextSlot: record.nextSlot,
    at: record.finishedAt,
  }
}

/**
 * The `coalesced` record of the grid slots that passed while a run's slot waited and that the
 * coalesce policy merged into it before it started (`record.merged`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const merged = (record: Task.RunRecord, slots: MissedRun.Dropped): Missed => ({
  kind: "coalesced",
  id: record.id,
  generation: record.generation,
  first: slots.first,
  last: slots.last,
  count: slots.count,
  exact: slots.exact,
  cause: "late",
  nextSlot: record.scheduledFor,
  at: record.startedAt,
})

/**
 * The records that one run's `RunRecord` stands for, in order: slots merged into it before it
 * started, the run itself, then missed slots its policy dropped or merged when it ended.
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromRun = (record: Task.RunRecord): ReadonlyArray<Occurrence> => [
  ...(record.merged === undefined ? [] : [merged(record, record.merged)]),
  ran(record),
  ...(record.dropped === undefined ? [] : [missed(record, record.dropped)]),
]

/**
 * Per-task bounded history: the last `perTask` records of each task, kept for the live tasks and
 * for at most `finalTasks` final ones (oldest dropped first). `perTask = 0` keeps nothing.
 * Appending is O(1) amortised.
 *
 * @category models
 * @since 0.1.0
 */
export class Store {
  /** A task's records: one occurrence alone (most tasks), or a list once there are more. */
  private readonly byId = new Map<string, Occurrence | Array<Occurrence>>()
  /** Final tasks, oldest first, as (id, generation) pairs from `finalsHead` on. */
  private finalIds: Array<string> = []
  private finalGens: Array<number> = []
  private finalsHead = 0
  private readonly perTask: number
  private readonly finalTasks: number

  constructor(perTask: number, finalTasks: number) {
    this.perTask = perTask
    this.finalTasks = finalTasks
  }

  /** Adds a record; `final` says its task is now final. */
  add(occurrence: Occurrence, final: boolean): void {
    if (this.perTask === 0) return
    const id = occurrence.id
    const held = this.byId.get(id)
    if (held === undefined || generationOf(held) !== occurrence.generation) {
      // A new task, or a reused id starting a new history.
      this.byId.set(id, occurrence)
    } else if (Array.isArray(held)) {
      if (held.length >= this.perTask) held.splice(0, held.length - this.perTask + 1)
      held.push(occurrence)
    } else {
      this.byId.set(id, this.perTask === 1 ? occurrence : [held, occurrence])
    }
    if (final) this.retire(id, occurrence.generation)
  }

  /** The records of a task, oldest first. */
  get(id: string): ReadonlyArray<Occurrence> {
    const held = this.byId.get(id)
    return held === undefined ? [] : Array.isArray(held) ? [...held] : [held]
  }

  /** Tasks with a history. */
  get size(): number {
    return this.byId.size
  }

  private retire(id: string, generation: number): void {
    this.finalIds.push(id)
    this.finalGens.push(generation)
    while (this.finalIds.length - this.finalsHead > this.finalTasks) {
      const old = this.finalIds[this.finalsHead] as string
      const gen = this.finalGens[this.finalsHead] as number
      this.finalsHead++
      // Keep it if the id has been reused since: that history belongs to the newer task.
      const held = this.byId.get(old)
      if (held !== undefined && generationOf(held) === gen) this.byId.delete(old)
    }
    if (this.finalsHead > 1024 && this.finalsHead * 2 > this.finalIds.length) {
      this.finalIds = this.finalIds.slice(this.finalsHead)
      this.finalGens = this.finalGens.slice(this.finalsHead)
      this.finalsHead = 0
    }
  }
}

const generationOf = (held: Occurrence | Array<Occurrence>): number =>
  Array.isArray(held) ? (held[0] as Occurrence).generation : held.generation
