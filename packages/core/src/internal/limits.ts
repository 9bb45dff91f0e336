/**
 * @internal
 * The kernel's flow control (SPEC §20): a cell per scope (a group, or one key) counting its
 * running runs and recent starts, and a waiting queue of the due runs its limit holds back.
 * Whether a run may start is `Rules.admit`'s decision; this module keeps the counts it reads
 * and moves rows between the timer heap and the queues.
 *
 * Ground rules:
 * 1. A waiting run is out of the timer heap, so it never blocks the runs of other scopes; its
 *    queue keeps its heap key (slot, order), and it goes back to the heap with that same key,
 *    so the waiters of a scope leave in SPEC §4 order.
 * 2. A queue entry is live exactly when a heap entry with its key would be (`Rows.isLive`): a
 *    cancel, pause or re-push makes it dead in place, and it is dropped when it surfaces or at a
 *    compaction. `Rows.dead` counts dead entries of the heap and the queues alike.
 * 3. A cell's `running` is the runs started under it and not completed; the run carries the
 *    cells it counted in, so a completion releases them even when its row changed meanwhile.
 */
import { TimerHeap } from "../Heap.ts"
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import type { Extras, Waiting } from "./records.ts"
import type { Rows } from "./rows.ts"

const { SCHEDULED } = Lifecycle
/** Waiting queues start small: most scopes are keys with a waiter or two. */
const QUEUE_CAPACITY = 4

/** @internal One scope's counts and waiting queue; a `Rules.ScopeLoad` as it stands. */
export class ScopeCell implements Rules.ScopeLoad {
  readonly name: string
  readonly limit: Rules.ResolvedLimit
  running = 0
  /** Start times, ascending; trimmed to the last `rateMax` (none kept without a rate limit). */
  starts: Array<number> = []
  /** The due runs waiting for this scope, by heap key; created at the first wait. */
  queue: TimerHeap | undefined = undefined
  /** When the rate window lets the head waiter go, epoch ms; +Infinity when not waiting on it. */
  opensAt = Number.POSITIVE_INFINITY

  constructor(name: string, limit: Rules.ResolvedLimit) {
    this.name = name
    this.limit = limit
  }
}

/** @internal See the module doc. */
export class Flow<J> {
  readonly limits: Rules.ResolvedLimits
  /** Cells by scope name; a key's cell is dropped when nothing holds it (see {@link settle}). */
  readonly cells = new Map<string, ScopeCell>()
  /** Cells whose head waiter waits on the rate window. */
  private readonly timed = new Set<ScopeCell>()
  private readonly rows: Rows<J>
  /** Reused list of a row's cells, valid within one call. */
  private readonly loads: Array<ScopeCell> = []

  constructor(rows: Rows<J>, limits: Rules.ResolvedLimits) {
    this.rows = rows
    this.limits = limits
    rows.queues = this
  }

  /** The earliest instant a rate window lets a waiter go, epoch ms; +Infinity when none waits. O(cells waiting). */
  get at(): number {
    let at = Number.POSITIVE_INFINITY
    for (const cell of this.timed) if (cell.opensAt < at) at = cell.opensAt
    return at
  }

  /** Entries in the queues, live and dead. */
  size = 0

  private cell(name: string): ScopeCell {
    let cell = this.cells.get(name)
    if (cell === undefined) {
      cell = new ScopeCell(name, Rules.limitOf(this.limits, name) as Rules.ResolvedLimit)
      this.cells.set(name, cell)
    }
    return cell
  }

  /**
   * Admission of row `i`'s due run (heap key `slot`, `order`) at `at`, its would-be start: the
   * cells it counts in when it may start (the caller starts it and calls {@link started}), or
   * `undefined` when it waits: it is then queued on the scope that holds it, with its cause.
   */
  admit(
    i: number,
    extra: Extras,
    scopes: ReadonlyArray<string>,
    slot: number,
    order: number,
    at: number,
  ): ReadonlyArray<ScopeCell> | undefined {
    const loads = this.loads
    loads.length = 0
    for (const name of scopes) loads.push(this.cell(name))
    const decision = Rules.admit(loads, at)
    if (decision._tag === "Start") return loads.slice()
    const cell = loads[decision.scope] as ScopeCell
    if (cell.queue === undefined) cell.queue = new TimerHeap(QUEUE_CAPACITY)
    cell.queue.push(slot, order, i)
    this.size++
    const until = decision.cause === "rate-limited" ? decision.until : undefined
    extra.waiting = { cause: decision.cause, scope: cell.name, order, until, since: at }
    if (until !== undefined && until < cell.opensAt) {
      cell.opensAt = until
      this.timed.add(cell)
    }
    // The scopes it did not wait on may have room a waiter of theirs can use (it may have been
    // let go from one of them just now, only to wait here).
    for (const other of loads) if (other !== cell) this.release(other, at)
    return undefined
  }

  /** Counts a run started at `startedAt` in `cells`. */
  started(cells: ReadonlyArray<ScopeCell>, startedAt: number): void {
    for (const cell of cells) {
      cell.running++
      const max = cell.limit.rateMax
      if (max === Number.POSITIVE_INFINITY) continue
      cell.starts.push(startedAt)
      // Trimmed in batches: amortised O(1) a start, at most 2 × rateMax times kept.
      if (cell.starts.length >= 2 * max) cell.starts.splice(0, cell.starts.length - max)
      // A rate cell lets its waiters go one at a time, each after the last one's start.
      this.release(cell, startedAt)
    }
  }

  /** A run counted in `cells` ended at `now`: frees its place and lets waiters go. */
  ended(cells: ReadonlyArray<ScopeCell>, now: number): void {
    for (const cell of cells) {
      cell.running--
      this.release(cell, now)
      this.settle(cell, now)
    }
  }

  /** A row of `scopes` left `scheduled` at `now`: their waiters may use the place it had. */
  leaving(scopes: ReadonlyArray<string>, now: number): void {
    for (const name of scopes) {
      const cell = this.cells.get(name)
      if (cell !== undefined) this.release(cell, now)
    }
  }

  /** Rate windows that opened by `at` let their waiters go (at `at` at the earliest). */
  open(at: number): void {
    for (const cell of [...this.timed]) {
      if (cell.opensAt > at) continue
      cell.opensAt = Number.POSITIVE_INFINITY
      this.timed.delete(cell)
      this.release(cell, at)
    }
  }

  /**
   * Moves as many of `cell`'s live waiters back to the heap as its limits let start at `at`
   * (their own keys, so SPEC §4 orders them there); a waiter held by the rate window makes the
   * cell timed instead. A waiter let go may still wait on another scope: it is queued there
   * when taken, and this cell is asked again then.
   */
  release(cell: ScopeCell, at: number): void {
    const queue = cell.queue
    if (queue === undefined) return
    let room = cell.limit.concurrency - cell.running
    while (room > 0 && queue.size > 0) {
      const i = queue.topTask()
      const order = queue.topOrder()
      const slot = queue.topSlot()
      if (!this.rows.isLive(i, order)) {
        queue.pop()
        this.size--
        this.rows.dead--
        continue
      }
      const opens = Rules.rateOpensAt(cell.limit, cell.starts, at)
      if (opens > at) {
        if (opens < cell.opensAt) cell.opensAt = opens
        this.timed.add(cell)
        return
      }
      queue.pop()
      this.size--
      const extra = this.rows.t.extra(i) as Extras
      // A stepping driver opens a window ahead of its clock: the run must not start before it.
      if (at > slot && at > extra.notBefore) extra.notBefore = at
      this.rows.heap.push(slot, order, i)
      room--
      // Counted as started for the window: the rest wait for the next opening. Its start
      // replaces this guess when it is taken.
      if (cell.limit.rateMax !== Number.POSITIVE_INFINITY) break
    }
  }

  /** Drops a key's cell that holds nothing: no run, no waiter, no start inside its window. */
  private settle(cell: ScopeCell, now: number): void {
    if (cell.running > 0 || (cell.queue !== undefined && cell.queue.size > 0)) return
    if (!cell.name.startsWith("key:")) return
    const last = cell.starts.at(-1)
    if (last !== undefined && last + cell.limit.ratePerMs > now) return
    this.cells.delete(cell.name)
    this.timed.delete(cell)
  }

  /** Drops dead queue entries (see ground rule 2); returns how many. O(queued). */
  compact(): number {
    let dropped = 0
    for (const cell of this.cells.values()) {
      if (cell.queue === undefined) continue
      dropped += cell.queue.compact((i, order) => this.rows.isLive(i, order))
    }
    this.size -= dropped
    return dropped
  }

  /** Calls `f` for every queue entry, live or dead. */
  forEach(f: (slot: number, order: number, i: number) => void): void {
    for (const cell of this.cells.values()) cell.queue?.forEach(f)
  }

  /** Live waiters by cause. O(queued). */
  waitingCounts(): { concurrency: number; "rate-limited": number } {
    const out = { concurrency: 0, "rate-limited": 0 }
    this.forEach((_, order, i) => {
      if (!this.rows.isLive(i, order)) return
      const w = this.rows.t.extra(i)?.waiting
      if (w !== undefined) out[w.cause]++
    })
    return out
  }
}

/** @internal Row `i`'s wait, when it is a `scheduled` row waiting on a limit now. */
export const waitingOf = <J>(rows: Rows<J>, i: number): Waiting | undefined => {
  const w = rows.t.extra(i)?.waiting
  return w !== undefined && rows.t.state(i) === SCHEDULED && rows.t.ticket(i) === w.order
    ? w
    : undefined
}
