/**
 * @internal
 * The kernel's storage: the task table, the timer heap of its `scheduled` rows, caller ids, the
 * per-state counts, retention of final tasks and the occurrences not yet drained. Its methods
 * are the row-level steps every kernel operation is made of (allocate a row, push a run, kill
 * an entry, evict final tasks); they decide nothing about the lifecycle, which the kernel and
 * its rule modules apply.
 *
 * Ground rules (SPEC §14): 2 (counts sum to `accepted - removed`), 5 (one live heap entry per
 * `scheduled` row; `dead` counts the rest).
 */
import { RANK_STRIDE, TimerHeap } from "../Heap.ts"
import * as Lifecycle from "../Lifecycle.ts"
import * as Retry from "../Retry.ts"
import * as Rules from "../Rules.ts"
import type { Occurrence, TaskId } from "../Task.ts"
import { FinalRing, HAS_EXTRA, STALE, STATE_MASK } from "./finalRing.ts"
import type { TaskFilter } from "./kernelTypes.ts"
import { Extras, NO_TAGS, RowView } from "./records.ts"
import { formatId } from "./run.ts"
import { Table } from "./table.ts"

/** @internal The waiting queues of flow control (internal/limits), as the rows see them. */
export interface Queues {
  /** Entries in the queues, live and dead. */
  readonly size: number
  /** Drops the dead entries; returns how many. */
  compact(): number
  forEach(f: (slot: number, order: number, i: number) => void): void
}

const { SCHEDULED, DONE, FAILED, CANCELLED } = Lifecycle
const NO_WINDOW = Rules.NO_WINDOW
const STATE_COUNT = Lifecycle.states.length
const INITIAL_CAPACITY = 64

/** @internal The kernel's rows; see the module doc. Fields are written by the kernel's modules only. */
export class Rows<J> {
  /** Row fields (slot, generation, state, …) and refs (job, side object); see internal/table. */
  readonly t = new Table<J, Extras>(INITIAL_CAPACITY)
  /** Rows below `top` have been used; evicted ones are handed out again by `ring`. */
  top = 0
  /** Caller-supplied ids of tasks that are live or retained. */
  readonly ids = new Map<string, number>()

  readonly heap = new TimerHeap()
  /** Global push counter (SPEC §4): ties in slot and priority go to the earlier push. */
  seq = 0
  /** Heap and waiting-queue entries that are not live (cancelled or replaced tasks). */
  dead = 0
  /** The waiting queues of flow control (SPEC §20), when the kernel has limits. */
  queues: Queues | undefined = undefined

  /** Tasks per lifecycle state index. */
  readonly counts = new Float64Array(STATE_COUNT)
  accepted = 0
  removed = 0
  inFlight = 0

  // ---- retention ----
  readonly maxFinished: number
  readonly maxAgeMs: number
  /** Final tasks in the order they ended, and the rows freed by evicting them. */
  readonly ring = new FinalRing()

  /** Occurrences not yet drained by the driver, in order. */
  pendingOccurrences: Array<Occurrence> = []

  /** Reused arguments for guards and ops; valid only within one synchronous step. */
  // Stryker disable next-line ObjectLiteral: equivalent, `load` writes every field before a guard or op reads one
  readonly context: Lifecycle.TaskContext = {
    attempt: 1,
    maxRetries: 0,
    runNumber: 0,
    consecutiveFailures: 0,
    pauseAfter: 0,
    // Stryker disable next-line BooleanLiteral: equivalent, `load` writes every field before a guard or op reads one
    pauseRequested: false,
  }
  readonly args: { context: Lifecycle.TaskContext; event: Lifecycle.TaskEvent } = {
    context: this.context,
    // Stryker disable next-line ObjectLiteral,StringLiteral: equivalent, no edge stepped with these arguments reads its event
    event: { type: "CANCEL" },
  }
  /** Reused row view handed to the rules; valid only within one synchronous step. */
  private readonly view = new RowView()

  /** `maxFinished` tasks and `maxAgeMs` ms of retention, validated by the kernel. */
  constructor(maxFinished: number, maxAgeMs: number) {
    this.maxFinished = maxFinished
    this.maxAgeMs = maxAgeMs
  }

  /** Row of a live or retained task, or -1. */
  lookup(id: string): number {
    if (typeof id !== "string") return -1
    if (id.charCodeAt(0) === 35 /* # */) {
      const i = this.lookupGenerated(id)
      if (i >= 0) return i
    }
    // Caller ids may start with "#" too, as long as they are not of the generated form.
    const i = this.ids.get(id)
    return i === undefined ? -1 : i
  }

  /**
   * Row of a live or retained task with the generated id `id` (`#<index>.<generation>`), or -1.
   * Parsed digit by digit: no substrings, so a lookup allocates nothing.
   */
  lookupGenerated(id: string): number {
    const n = id.length
    let k = 1
    let i = 0
    let g = 0
    // A leading zero only as the whole number ("#0.1"), as formatId writes it.
    if (k >= n || (id.charCodeAt(k) === 48 && id.charCodeAt(k + 1) !== 46)) return -1
    for (; k < n; k++) {
      const c = id.charCodeAt(k)
      if (c === 46 /* . */) break
      if (c < 48 || c > 57 || i > 0xffffffff) return -1
      i = i * 10 + (c - 48)
    }
    if (k === 1 || k >= n - 1 || id.charCodeAt(k + 1) === 48) return -1
    for (k++; k < n; k++) {
      const c = id.charCodeAt(k)
      if (c < 48 || c > 57 || g > 0xffffffff) return -1
      g = g * 10 + (c - 48)
    }
    if (
      i >= this.top ||
      this.t.gen(i) !== g ||
      !this.present(i) ||
      this.t.extra(i)?.id !== undefined
    ) {
      return -1
    }
    return i
  }

  /** Loads row `i`'s machine context into the reused context object. */
  load(i: number, extra: Extras | undefined = this.t.extra(i)): Lifecycle.TaskContext {
    const ctx = this.context
    ctx.attempt = this.t.attempt(i)
    ctx.runNumber = this.t.runs(i)
    // Stryker disable next-line BlockStatement: equivalent, a row without a side object takes no edge whose guard reads these
    if (extra === undefined) {
      ctx.maxRetries = 0
      ctx.consecutiveFailures = 0
      ctx.pauseAfter = 0
      // Stryker disable next-line BooleanLiteral: equivalent, a row without a side object takes no edge whose guard reads it
      ctx.pauseRequested = false
    } else {
      ctx.maxRetries = extra.retry.maxRetries
      ctx.consecutiveFailures = extra.consecutiveFailures
      ctx.pauseAfter = extra.pauseAfter
      ctx.pauseRequested = extra.pauseRequest !== undefined
    }
    return ctx
  }

  bump(state: number, by: number): void {
    this.counts[state] = (this.counts[state] as number) + by
  }

  /** Whether row `i` (below `top`) holds a live or retained task, rather than an evicted one. */
  present(i: number): boolean {
    return this.t.state(i) < DONE || this.t.ticket(i) >= this.ring.head
  }

  allocate(): number {
    let i = this.ring.takeFree()
    if (i < 0) {
      i = this.top++
      if (i === this.t.capacity) this.t.grow(this.t.capacity * 2)
      // A row never used has generation 0, so its first task's is 1: written without a read, so
      // that a fresh page of the table is first touched by a write. A read first maps the shared
      // zero page and the write after it faults again to copy it: two page faults instead of one.
      this.t.setGen(i, 1)
      return i
    }
    return this.newGeneration(i)
  }

  /** Gives a retained final task's row to a new task with the same caller id. */
  replace(i: number): number {
    const t = this.t
    this.ring.markStale(t.ticket(i))
    this.bump(t.state(i), -1)
    this.removed++
    return this.newGeneration(i)
  }

  /** Bumps row `i`'s generation (the row goes to a new task), so the previous task's heap entries and generated id die. */
  newGeneration(i: number): number {
    let g = (this.t.gen(i) + 1) >>> 0
    if (g === 0) g = 1
    this.t.setGen(i, g)
    return i
  }

  /**
   * Evicts final tasks beyond the retention count or age, oldest first. O(1) amortised, and
   * without touching an evicted task's row unless it has a side object to drop.
   */
  expire(now: number): void {
    const ring = this.ring
    const counts = this.counts
    while (ring.retained > 0) {
      const flags = ring.oldestFlags()
      if ((flags & STALE) === 0) {
        const finals =
          (counts[DONE] as number) + (counts[FAILED] as number) + (counts[CANCELLED] as number)
        if (finals <= this.maxFinished && ring.oldestAt() + this.maxAgeMs > now) return
        this.bump(flags & STATE_MASK, -1)
        this.removed++
        if ((flags & HAS_EXTRA) !== 0) {
          const i = ring.oldestRow()
          const id = (this.t.extra(i) as Extras).id
          // Stryker disable next-line LogicalOperator: equivalent, a row evicted unstale is its caller id's row in `ids` (taking the id marks it stale)
          if (id !== undefined && this.ids.get(id) === i) this.ids.delete(id)
          // Stryker disable next-line CallExpression: equivalent but for memory, no query reads an evicted row and `accept` rewrites it
          this.t.setExtra(i, undefined)
        }
      }
      ring.head++
    }
  }

  idOf(i: number): TaskId {
    return (this.t.extra(i)?.id ?? formatId(i, this.t.gen(i))) as TaskId
  }

  emit(o: Occurrence): void {
    this.pendingOccurrences.push(o)
  }

  ensureExtra(i: number): Extras {
    let extra = this.t.extra(i)
    if (extra === undefined) {
      extra = new Extras()
      extra.gridSlot = this.t.slot(i)
      this.t.setExtra(i, extra)
    }
    return extra
  }

  /** A heap entry died in place (its task left `scheduled`); compacts past half dead. */
  kill(): void {
    this.dead++
    if (this.dead * 2 > this.entries) this.compact()
  }

  /** Entries of the heap and the waiting queues, live and dead. */
  get entries(): number {
    return this.heap.size + (this.queues === undefined ? 0 : this.queues.size)
  }

  forEachMatch(filter: TaskFilter, f: (i: number) => void): void {
    const state = filter.state === undefined ? -1 : Lifecycle.states.indexOf(filter.state)
    if (filter.state !== undefined && state < 0) return
    for (let i = 0; i < this.top; i++) {
      if (!this.present(i)) continue
      if (state >= 0 && this.t.state(i) !== state) continue
      const extra = this.t.extra(i)
      if (filter.kind !== undefined && (extra?.plan?.kind ?? "once") !== filter.kind) continue
      if (filter.tag !== undefined && !(extra?.tags ?? NO_TAGS).includes(filter.tag)) continue
      f(i)
    }
  }

  /** Row `i` as the rules read it, in the reused view (valid until the next call). */
  rowView(i: number, extra: Extras | undefined): Rules.Row {
    const v = this.view
    const slot = this.t.slot(i)
    v.dueAt = slot
    v.attempt = this.t.attempt(i)
    v.runNumber = this.t.runs(i)
    if (extra === undefined) {
      v.plan = undefined
      v.slot = slot
      v.consecutiveFailures = 0
      v.retry = Retry.none
      // Stryker disable next-line StringLiteral: equivalent, the policy is read only with a plan
      v.missedRuns = "catch-up"
      v.pauseAfter = 0
      v.windowMs = NO_WINDOW
      v.pauseRequest = undefined
      v.restart = undefined
      // Stryker disable next-line UnaryOperator: equivalent, `resumeFrom` is read only with a plan
      v.resumeFrom = -1
    } else {
      v.plan = extra.plan
      v.slot = extra.gridSlot
      v.consecutiveFailures = extra.consecutiveFailures
      v.retry = extra.retry
      v.missedRuns = extra.missedRuns
      v.pauseAfter = extra.pauseAfter
      v.windowMs = extra.windowMs
      v.pauseRequest = extra.pauseRequest
      v.restart = extra.restart
      v.resumeFrom = extra.resumeFrom
    }
    return v
  }

  compact(): void {
    this.heap.compact((i, order) => this.isLive(i, order))
    this.queues?.compact()
    this.dead = 0
  }

  /**
   * Whether the heap entry of row `i` with order key `order` is live: the row is `scheduled` and
   * this is its latest push. Order keys are unique per push and the row records its latest one,
   * so an entry of an earlier task in the row, or of this task before a pause, a change of
   * priority or a move, fails the comparison: no generation needs to be kept in the entry.
   */
  isLive(i: number, order: number): boolean {
    return this.t.state(i) === SCHEDULED && this.t.ticket(i) === order
  }

  /**
   * Pushes row `i`'s run at `slot`, with the next sequence number (SPEC §4), and records the
   * entry's order key in the row so that any older entry of the same task is dead. O(log n).
   */
  push(i: number, slot: number): void {
    const order = this.t.rank(i) * RANK_STRIDE + this.seq++
    this.heap.push(slot, order, i)
    this.t.setTicket(i, order)
  }
}
