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
 * | `updated` | the task was changed in place, by `update` or by `ensure` (the fields changed) |
 *
 * A `coalesced`/`skipped` record covers a range of grid slots (`first`…`last`, `count` of them)
 * and says whether they passed while the task was late to start (`late`: the clock jumped, or
 * every worker was busy), while its previous run was still running (`overlap`), or both.
 *
 * @since 0.1.0
 */
import { type Declared, type MissedRun, Results, Rules, Task } from "@tickwork/core"
import {
  type Columns,
  copyPosition,
  makeColumns,
  OBJECT,
  readRun,
  writeRun,
} from "./internal/ledgerColumns.js"

/**
 * An occurrence that ran.
 *
 * @category models
 * @since 0.1.0
 */
export interface Ran extends Task.RunRecord {
  /**
   * Why the run's value was not kept, for a task with `keepResult` (SPEC §19.3): its JSON passed
   * `maxResultBytes`, or JSON cannot write it. The run's outcome is still `succeeded`.
   */
  readonly resultError?: Results.ResultTooLarge | Results.ResultEncodeError | undefined
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
  readonly from: "scheduled" | "running" | "paused"
  /** The pending slot (from `scheduled`) or the running run's slot. */
  readonly scheduledFor: number
  /** Whether its running fiber was interrupted (`cancel(id, { interrupt: true })`). */
  readonly interrupted: boolean
  readonly at: number
}

/**
 * A live task changed in place (SPEC §15, §18): by `update` (the fields it was given) or by
 * `ensure` (the fields that differed from the declaration). Id, generation and ledger are kept.
 *
 * @category models
 * @since 0.5.0
 */
export interface Updated extends Declared.Change {
  readonly kind: "updated"
  readonly id: Task.TaskId
  readonly generation: number
  readonly at: number
}

/**
 * Any record of a task's ledger: its runs, slots missed by policy, a cancel, and the kernel's
 * control occurrences — slots skipped while paused, held by a breaker or past the catch-up
 * window, an expired one-shot, a pause and a resume (SPEC §3, §7, §15) — an update, and a
 * schedule deduplicated into the task or replacing it (SPEC §20.3).
 *
 * @category models
 * @since 0.1.0
 */
export type Occurrence =
  | Ran
  | Missed
  | Cancelled
  | Updated
  | Task.Skipped
  | Task.Expired
  | Task.Paused
  | Task.Resumed
  | Task.Deduplicated

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
 * tagged with its generation, not hashed by id; a row's history is replaced when the row is
 * given to a new task.
 *
 * Records live in one ring of columns, oldest first, each linked to the previous and next record
 * of its task. The common record — a run of a task with a generated id that succeeded with no
 * value and dropped or merged no slot — is kept as numbers only and rebuilt as an object when
 * read: a ledger of objects made every run allocate a record that outlived the young
 * generation, which cost about a tenth of a run's time in a burst. Other records are kept as they are. The
 * ring grows (to `capacity`) only while more than a quarter of it is held, and is compacted
 * otherwise, so its size follows the records held, not the records ever added. O(1) per record
 * (amortised; O(records of a task) when its history is dropped), O(records returned) per read.
 *
 * @category models
 * @since 0.1.0
 */
export class Store {
  private readonly perTask: number
  private readonly finalTasks: number
  private readonly capacity: number

  // ------------------------------------------------------------ the ring, oldest record at head
  /** The ring's arrays; `ring.size` positions. */
  private ring: Columns<Occurrence>
  private head = 0
  private used = 0
  /** Records held (not dropped): at most `used`. */
  private held = 0

  /** The arrays of the ring before its last same-size compaction, for the next one to reuse. */
  private spare: Columns<Occurrence> | undefined = undefined
  /** Where each position went in a compaction, reused while the ring keeps its size. */
  private moved = new Int32Array(0)

  // ------------------------------------------------------------ per table row (grown on use)
  /**
   * Four numbers per table row, side by side so a record touches one cache line of them: the
   * generation of the row's history (as int32: generations are uint32), its oldest and newest
   * record (meaningful only while it holds some), and how many records it holds (0: none).
   * One flat array, grown with the task table when tasks are accepted ({@link reserveRows}),
   * so a run reads its row in one load: runs visit rows in slot order, not row order, and an
   * array of per-page chunks cost three cold loads a row (the chunk list, the chunk, its bytes)
   * — ~0.6 µs of a run at a million tasks.
   */
  private rowData = new Int32Array(0)

  /** Final tasks, oldest first: (row, generation) from `finalHead` to `finalTail` in a power-of-two ring. */
  private finalRows = new Uint32Array(64)
  private finalGens = new Float64Array(64)
  private finalHead = 0
  private finalTail = 0

  /**
   * Earlier generations' records (SPEC §27.4), by `"row/generation"`, in the order their rows
   * went to a later generation: when a final task's id is scheduled again, its history moves
   * here instead of being dropped. Bounded as the ring is: each holds at most `perTask`
   * records; it leaves when the final-task ring evicts its task; and with the ring's records it
   * stays within `capacity` in all (the earliest moved leaves first).
   */
  private readonly earlier = new Map<string, ReadonlyArray<Occurrence>>()
  /** Records held in {@link earlier}. */
  private earlierRecords = 0

  /** `initialSize`: the ring's first size, in records; it grows by doubling as records are held. */
  constructor(perTask: number, finalTasks: number, capacity: number, initialSize = 1024) {
    this.perTask = perTask
    this.finalTasks = finalTasks
    this.capacity = capacity
    const size = Math.min(capacity, initialSize)
    // Stryker disable next-line MethodExpression: equivalent, a ring of one position grows as records are held
    this.ring = makeColumns<Occurrence>(Math.max(1, size))
  }

  /** Whether records are kept at all. */
  get enabled(): boolean {
    return this.perTask > 0 && this.capacity > 0
  }

  /** Adds a record of the task in table row `row`; `final` says the task is now final. */
  add(row: number, occurrence: Occurrence, final: boolean): void {
    if (!this.enabled || row < 0) return
    const p = this.append(row, occurrence.generation)
    this.ring.how[p] = OBJECT
    this.ring.objects[p] = occurrence
    if (final) this.retire(row, occurrence.generation)
  }

  /**
   * Adds the `ran` record of a finished run of the task in table row `row`; `named` says the task
   * has a caller-given id. Kept as columns when it can be rebuilt from them exactly, else as a
   * copy of `record` (which may be the kernel's reused buffer).
   *
   * A succeeded run's value is kept only when `keepResult` (the task's bound, in bytes of JSON)
   * is given and the core's rule keeps it (SPEC §19.3); otherwise the record is kept as if the
   * run returned nothing, so values never make the ledger outgrow its record count's bound.
   */
  addRun(row: number, record: Task.RunRecord, named: boolean, keepResult?: number): void {
    const outcome = record.outcome
    if (outcome.kind === "succeeded" && outcome !== Task.succeeded) {
      const kept =
        keepResult === undefined
          ? undefined
          : Results.keepValue(record.id, outcome.value, keepResult)
      if (kept?.kind === "kept") {
        this.add(row, Rules.copyRecord(record), record.continuation === "final")
        return
      }
      if (kept?.kind === "refused") {
        const copy: Ran = {
          ...Rules.copyRecord(record),
          outcome: Task.succeeded,
          resultError: kept.error,
        }
        this.add(row, copy, record.continuation === "final")
        return
      }
      // Not kept: the same record as a run that returned nothing (columns when it can be).
      // Stryker disable next-line LogicalOperator: equivalent, the same record is rebuilt, and the same test follows
      if (!this.enabled || row < 0) return
      record = Rules.record(record, Task.succeeded, record.finishedAt, {
        state: record.state,
        continuation: record.continuation,
        nextSlot: record.nextSlot,
        dropped: record.dropped,
        pausedReason: record.pausedReason,
      })
    }
    if (
      named ||
      record.outcome !== Task.succeeded ||
      // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: equivalent, a retried run has failed, and columns rebuild the kind from the continuation
      record.kind !== "ran" ||
      record.dropped !== undefined ||
      record.merged !== undefined ||
      record.pausedReason !== undefined ||
      // The columns do not keep the mark of a manual run (SPEC §19.1).
      record.manual === true
    ) {
      this.add(row, Rules.copyRecord(record), record.continuation === "final")
      return
    }
    if (!this.enabled || row < 0) return
    const p = this.append(row, record.generation)
    writeRun(this.ring, p, record)
    if (record.continuation === "final") this.retire(row, record.generation)
  }

  /** The records of the task in `row` with `generation` (the current or an earlier one), oldest first. */
  get(row: number, generation: number): ReadonlyArray<Occurrence> {
    const c = this.rowData
    const r = row * ROW
    if (row < 0 || r >= c.length || c[r + COUNT] === 0 || c[r + GEN] !== (generation | 0))
      return this.earlier.get(`${row}/${generation}`) ?? []
    const out: Array<Occurrence> = []
    for (let p = c[r + OLDEST] as number; p >= 0; p = this.ring.next[p] as number) {
      out.push(this.read(p))
    }
    return out
  }

  /** The record at ring position `p`. */
  private read(p: number): Occurrence {
    const ring = this.ring
    return ring.how[p] === OBJECT ? (ring.objects[p] as Occurrence) : readRun(ring, p)
  }

  /**
   * Takes the next ring position for a record of `row` at `generation` and links it as the
   * task's newest; drops the task's oldest past `perTask`, and the row's history when the row
   * holds another task now.
   */
  private append(row: number, generation: number): number {
    const r = row * ROW
    if (r >= this.rowData.length) {
      // Stryker disable next-line ArithmeticOperator: equivalent, reserveRows doubles the table itself
      const doubled = (this.rowData.length / ROW) * 2
      this.reserveRows(Math.max(row + 1, doubled))
    }
    const data = this.rowData
    if (data[r + COUNT] !== 0 && data[r + GEN] !== (generation | 0)) {
      this.keepEarlier(row, (data[r + GEN] as number) >>> 0)
    }
    // Stryker disable next-line LogicalOperator: equivalent, trimEarlier checks the same bound itself
    if (this.earlierRecords > 0 && this.held + 1 + this.earlierRecords > this.capacity)
      this.trimEarlier(1)
    if (this.used === this.ring.size) this.makeRoom()
    // After making room: a compaction replaces the ring.
    const ring = this.ring
    const p = (this.head + this.used) % ring.size
    this.used++
    this.held++
    ring.dropped[p] = 0
    ring.rows[p] = row
    ring.gens[p] = generation
    ring.next[p] = -1
    const count = data[r + COUNT] as number
    if (count === 0) {
      ring.prev[p] = -1
      data[r + OLDEST] = p
      // Stryker disable next-line ArithmeticOperator: equivalent, GEN is 0
      data[r + GEN] = generation
    } else {
      const newest = data[r + NEWEST] as number
      ring.prev[p] = newest
      ring.next[newest] = p
    }
    data[r + NEWEST] = p
    data[r + COUNT] = count + 1
    if (count + 1 > this.perTask) this.dropOldest(row)
    return p
  }

  /** Moves the records of `row`'s task, at `generation`, out of the ring: its row goes to a later one. */
  private keepEarlier(row: number, generation: number): void {
    const records = this.get(row, generation)
    this.dropHistory(row)
    const key = `${row}/${generation}`
    this.earlier.set(key, records)
    this.earlierRecords += records.length
    this.trimEarlier()
  }

  /**
   * Drops the earliest moved generations while they, the ring's records and `coming` more pass
   * `capacity`, or while more than `finalTasks` are kept.
   */
  private trimEarlier(coming = 0): void {
    for (const [k, held] of this.earlier) {
      if (
        this.earlierRecords + this.held + coming <= this.capacity &&
        this.earlier.size <= this.finalTasks
      )
        break
      this.earlier.delete(k)
      this.earlierRecords -= held.length
    }
  }

  /** Forgets the earlier generation `generation` of `row`, if kept. */
  private forgetEarlier(row: number, generation: number): void {
    const key = `${row}/${generation}`
    const held = this.earlier.get(key)
    if (held === undefined) return
    this.earlier.delete(key)
    this.earlierRecords -= held.length
  }

  /** Drops the oldest record of `row`'s task. */
  private dropOldest(row: number): void {
    const c = this.rowData
    const r = row * ROW
    const p = c[r + OLDEST] as number
    const after = this.ring.next[p] as number
    this.drop(p)
    c[r + COUNT] = (c[r + COUNT] as number) - 1
    // Stryker disable next-line UnaryOperator: equivalent, a row's NEWEST is read only while it holds records
    if (after < 0) c[r + NEWEST] = -1
    else this.ring.prev[after] = -1
    c[r + OLDEST] = after
  }

  /** Drops every record of `row`'s task. */
  private dropHistory(row: number): void {
    const c = this.rowData
    const r = row * ROW
    for (let p = c[r + OLDEST] as number; p >= 0; p = this.ring.next[p] as number) this.drop(p)
    c[r + COUNT] = 0
    // Stryker disable next-line UnaryOperator: equivalent, a row's OLDEST is read only while it holds records
    c[r + OLDEST] = -1
    // Stryker disable next-line UnaryOperator: equivalent, a row's NEWEST is read only while it holds records
    c[r + NEWEST] = -1
  }

  private drop(p: number): void {
    this.ring.dropped[p] = 1
    this.ring.objects[p] = undefined
    this.held--
  }

  /**
   * Frees a ring position: grows the ring while more than a quarter of it is held (up to
   * `capacity`), compacts it when at most three quarters are, and otherwise drops the oldest
   * record of all. A compaction copies the records held and frees at least a quarter of the
   * ring (three quarters below `capacity`): O(1) amortised per record.
   */
  private makeRoom(): void {
    const ring = this.ring
    if (ring.size < this.capacity && this.held * 4 > ring.size) {
      this.rebuild(Math.min(this.capacity, ring.size * 2))
    } else if (this.held * 4 <= ring.size * 3) {
      this.rebuild(ring.size)
    } else {
      const p = this.head
      if (ring.dropped[p] === 0) this.dropOldest(ring.rows[p] as number)
      this.head = (p + 1) % ring.size
      this.used--
    }
  }

  /**
   * Copies the records held, oldest first, into a ring of `size` positions. O(used). A
   * compaction at the same size reuses the arrays the previous one left behind: a ring cycling
   * at its size (a steady stream of runs) then allocates nothing, where fresh arrays cost ~80
   * bytes a position each time (5 MB for 64k positions, plus a JS array the collector had to
   * promote), and that churn set off full collections.
   */
  private rebuild(size: number): void {
    const old = this.ring
    const spare = this.spare
    const ring = spare !== undefined && spare.size === size ? spare : makeColumns<Occurrence>(size)
    let moved = this.moved
    if (moved.length !== old.size) {
      moved = new Int32Array(old.size)
      this.moved = moved
    }
    // Stryker disable next-line UnaryOperator,CallExpression: equivalent, only held positions' entries are read, each written first
    moved.fill(-1)
    let q = 0
    for (let k = 0; k < this.used; k++) {
      const p = (this.head + k) % old.size
      if (old.dropped[p] === 1) continue
      moved[p] = q
      copyPosition(old, p, ring, q)
      q++
    }
    // Links point to held records only (a dropped record is unlinked first), so every one moved.
    for (let k = 0; k < this.used; k++) {
      const p = (this.head + k) % old.size
      if (old.dropped[p] === 1) continue
      const at = moved[p] as number
      const before = old.prev[p] as number
      const after = old.next[p] as number
      ring.prev[at] = before < 0 ? -1 : (moved[before] as number)
      ring.next[at] = after < 0 ? -1 : (moved[after] as number)
      const r = (old.rows[p] as number) * ROW
      if (before < 0) this.rowData[r + OLDEST] = at
      if (after < 0) this.rowData[r + NEWEST] = at
    }
    // The old arrays hold no objects for the collector to keep, whether reused or not.
    // Stryker disable next-line CallExpression: equivalent, it frees memory only (positions are written before read)
    old.objects.fill(undefined)
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, a spare is used only at its own size
    this.spare = old.size === size ? old : undefined
    this.ring = ring
    this.head = 0
    this.used = q
  }

  /**
   * Makes room for the numbers of table rows below `rows` (the scheduler calls it with the task
   * table's size as tasks are accepted). Grows by doubling and writes every new page once, so
   * the copy and the page faults happen while tasks are accepted, in row order, not on the runs
   * after a large schedule (which visit rows in slot order). O(1) amortised per row.
   */
  reserveRows(rows: number): void {
    const have = this.rowData.length / ROW
    // Stryker disable next-line LogicalOperator: equivalent, a larger table only (a disabled ledger appends nothing)
    if (rows <= have || !this.enabled) return
    // Stryker disable next-line ArithmeticOperator: equivalent, the table still grows to at least `rows`
    const size = Math.max(rows, have * 2)
    const grown = new Int32Array(size * ROW)
    grown.set(this.rowData)
    // Zeros already; the writes fault the pages in now.
    // Stryker disable next-line CallExpression: equivalent, the array is zeros already
    grown.fill(0, this.rowData.length)
    this.rowData = grown
  }

  /** Notes that `row`'s task is final; past `finalTasks` of them, drops the oldest one's history. */
  private retire(row: number, generation: number): void {
    if (this.finalTail - this.finalHead > this.finalRows.length - 1) this.growFinal()
    const mask = this.finalRows.length - 1
    this.finalRows[this.finalTail & mask] = row
    this.finalGens[this.finalTail & mask] = generation
    this.finalTail++
    while (this.finalTail - this.finalHead > this.finalTasks) {
      const k = this.finalHead & mask
      const old = this.finalRows[k] as number
      // Keep it if the row holds a newer task's history by now.
      const c = this.rowData
      const r = old * ROW
      if (c[r + COUNT] !== 0 && c[r + GEN] === ((this.finalGens[k] as number) | 0)) {
        this.dropHistory(old)
      } else this.forgetEarlier(old, this.finalGens[k] as number)
      this.finalHead++
    }
  }

  private growFinal(): void {
    const size = this.finalRows.length * 2
    const rows = new Uint32Array(size)
    const gens = new Float64Array(size)
    const oldMask = this.finalRows.length - 1
    for (let t = this.finalHead; t < this.finalTail; t++) {
      rows[t & (size - 1)] = this.finalRows[t & oldMask] as number
      gens[t & (size - 1)] = this.finalGens[t & oldMask] as number
    }
    this.finalRows = rows
    this.finalGens = gens
  }
}

/** The numbers per table row in `rowData`, and their offsets. */
const ROW = 4
const GEN = 0
const OLDEST = 1
const NEWEST = 2
const COUNT = 3
