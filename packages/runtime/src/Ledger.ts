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
export interface Ran extends Task.RunRecord {}

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
  readonly from: "scheduled" | "running" | "paused"
  /** The pending slot (from `scheduled`) or the running run's slot. */
  readonly scheduledFor: number
  /** Whether its running fiber was interrupted (`cancel(id, { interrupt: true })`). */
  readonly interrupted: boolean
  readonly at: number
}

/**
 * Any record of a task's ledger: its runs, slots missed by policy, a cancel, and the kernel's
 * control occurrences — slots skipped while paused, held by a breaker or past the catch-up
 * window, an expired one-shot, a pause and a resume (SPEC §3, §7, §15).
 *
 * @category models
 * @since 0.1.0
 */
export type Occurrence =
  | Ran
  | Missed
  | Cancelled
  | Task.Skipped
  | Task.Expired
  | Task.Paused
  | Task.Resumed

/**
 * Everything the occurrence stream carries: the ledger's records and circuit-breaker
 * transitions (which belong to a breaker, not to one task's ledger).
 *
 * @category models
 * @since 0.2.0
 */
export type StreamItem = Occurrence | Task.BreakerChanged

/**
 * The `ran` (or `retried`) record of a finished run. It takes over `record` (the kernel makes a
 * fresh one per run) instead of copying it: one allocation less on the hot path.
 *
 * @category constructors
 * @since 0.1.0
 */
export const ran = (record: Task.RunRecord): Ran => record

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
 * for at most `finalTasks` final ones (oldest dropped first), and at most `capacity` records in
 * all (the oldest record of all dropped first), so memory stays bounded however many tasks there
 * are. `perTask = 0` keeps nothing.
 *
 * Histories are indexed by the kernel's table row of the task (`Run.index`, `Kernel.rowOf`) and
 * tagged with its generation, not hashed by id: adding a record is an array write, and
 * retiring a final task's history is a ring-buffer step. A row's history is replaced when the
 * row is given to a new task. O(1) per record (O(perTask) when the capacity drops one).
 *
 * @category models
 * @since 0.1.0
 */
export class Store {
  /** A row's records: one occurrence alone (most tasks), or a list once there are more. */
  private byRow: Array<Occurrence | Array<Occurrence> | undefined> = []
  /** Final tasks, oldest first: (row, generation) from `head` to `tail` in a power-of-two ring. */
  private finalRows = new Uint32Array(64)
  private finalGens = new Float64Array(64)
  private head = 0
  private tail = 0
  /**
   * Every record added, oldest first, with its row: a ring of at most `capacity` entries. An
   * entry whose record was dropped meanwhile (per-task cap, retention) stays until it leaves the
   * ring, so the records held are always a subset of the ring: at most `capacity`.
   */
  private added: Array<Occurrence | undefined> = []
  private addedRows: Array<number> = []
  private addedHead = 0
  private readonly perTask: number
  private readonly finalTasks: number
  private readonly capacity: number

  constructor(perTask: number, finalTasks: number, capacity = Number.POSITIVE_INFINITY) {
    this.perTask = perTask
    this.finalTasks = finalTasks
    this.capacity = capacity
  }

  /** Whether records are kept at all. */
  get enabled(): boolean {
    return this.perTask > 0 && this.capacity > 0
  }

  /** Adds a record of the task in table row `row`; `final` says the task is now final. */
  add(row: number, occurrence: Occurrence, final: boolean): void {
    if (this.perTask === 0 || this.capacity === 0 || row < 0) return
    const held = this.byRow[row]
    if (held === undefined || generationOf(held) !== occurrence.generation) {
      // A new task, or a row given to a new task: a new history.
      this.byRow[row] = occurrence
    } else if (Array.isArray(held)) {
      if (held.length >= this.perTask) held.splice(0, held.length - this.perTask + 1)
      held.push(occurrence)
    } else {
      this.byRow[row] = this.perTask === 1 ? occurrence : [held, occurrence]
    }
    if (this.capacity !== Number.POSITIVE_INFINITY) this.bound(row, occurrence)
    if (final) this.retire(row, occurrence.generation)
  }

  /** Records `occurrence` in the ring and drops the oldest record of all past `capacity`. */
  private bound(row: number, occurrence: Occurrence): void {
    this.added.push(occurrence)
    this.addedRows.push(row)
    if (this.added.length - this.addedHead <= this.capacity) return
    const k = this.addedHead++
    const oldest = this.added[k] as Occurrence
    const oldRow = this.addedRows[k] as number
    this.added[k] = undefined
    const held = this.byRow[oldRow]
    if (held === oldest) this.byRow[oldRow] = undefined
    else if (Array.isArray(held) && held[0] === oldest) {
      held.shift()
      if (held.length === 0) this.byRow[oldRow] = undefined
    }
    // Compact the ring's consumed head now and then: amortised O(1).
    if (this.addedHead > 1024 && this.addedHead * 2 > this.added.length) {
      this.added = this.added.slice(this.addedHead)
      this.addedRows = this.addedRows.slice(this.addedHead)
      this.addedHead = 0
    }
  }

  /** The records of the task in `row` with `generation`, oldest first. */
  get(row: number, generation: number): ReadonlyArray<Occurrence> {
    const held = row < 0 ? undefined : this.byRow[row]
    if (held === undefined || generationOf(held) !== generation) return []
    return Array.isArray(held) ? [...held] : [held]
  }

  private retire(row: number, generation: number): void {
    if (this.tail - this.head > this.finalRows.length - 1) this.grow()
    const mask = this.finalRows.length - 1
    this.finalRows[this.tail & mask] = row
    this.finalGens[this.tail & mask] = generation
    this.tail++
    while (this.tail - this.head > this.finalTasks) {
      const k = this.head & mask
      const old = this.finalRows[k] as number
      const held = this.byRow[old]
      // Keep it if the row holds a newer task's history by now.
      if (held !== undefined && generationOf(held) === this.finalGens[k])
        this.byRow[old] = undefined
      this.head++
    }
  }

  private grow(): void {
    const size = this.finalRows.length * 2
    const rows = new Uint32Array(size)
    const gens = new Float64Array(size)
    const oldMask = this.finalRows.length - 1
    for (let t = this.head; t < this.tail; t++) {
      rows[t & (size - 1)] = this.finalRows[t & oldMask] as number
      gens[t & (size - 1)] = this.finalGens[t & oldMask] as number
    }
    this.finalRows = rows
    this.finalGens = gens
  }
}

const generationOf = (held: Occurrence | Array<Occurrence>): number =>
  Array.isArray(held) ? (held[0] as Occurrence).generation : held.generation
