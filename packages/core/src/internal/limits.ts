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
 * 4. A cell's `letGo` lists the waiters it moved back to the heap and that were not taken yet:
 *    they count against its room, so a cell never lets more runs go than it has places for
 *    (several ends before one take would otherwise each let the same free places go). An entry
 *    whose heap entry died (cancel, pause, re-push) is stale and pruned when the room is short.
 * 5. State is bounded: a key's cell is dropped as soon as it has no running run, no waiter, no
 *    run let go and no start inside its rate window — at an end or a waiter's leaving, or, for a
 *    key with recent starts, by an expiry heap keyed by the instant its newest start leaves the
 *    window, swept at the kernel's next step at or after it (a take or a completion). Groups are
 *    declared, so theirs stay.
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
  // Stryker disable next-line ArrayDeclaration: equivalent, a placeholder start is read as NaN, which no window comparison counts, and a trim drops it
  starts: Array<number> = []
  /** The due runs waiting for this scope, by heap key; created at the first wait. */
  queue: TimerHeap | undefined = undefined
  /** When the rate window lets the head waiter go, epoch ms; +Infinity when not waiting on it. */
  opensAt = Number.POSITIVE_INFINITY
  /** Rows it let go back to the heap, not taken yet (ground rule 4); stale ones pruned lazily. */
  // Stryker disable next-line ArrayDeclaration: equivalent, a placeholder is stale (no row's letGoBy is this cell) and pruned at the cell's first release with a queue
  readonly letGo: Array<number> = []
  /** Whether it has an entry in the expiry heap (ground rule 5). */
  expiring = false

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
  // Stryker disable next-line ArrayDeclaration: equivalent, emptied before each use
  private readonly loads: Array<ScopeCell> = []
  /** Key cells with recent starts, by when the newest leaves the window (ground rule 5). */
  private readonly expiry = new ExpiryHeap()

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
    if (extra.letGoBy !== undefined) this.taken(i, extra)
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
      // Stryker disable next-line BlockStatement,ConditionalExpression,EqualityOperator,ArithmeticOperator: equivalent, only how many are kept changes, always at least the last rateMax, all rateOpensAt reads
      if (cell.starts.length >= 2 * max) {
        cell.starts.splice(0, cell.starts.length - max)
      }
      // A rate cell lets its waiters go one at a time, each after the last one's start.
      this.release(cell, startedAt)
    }
  }

  /** A run counted in `cells` ended at `now`: frees its place and lets waiters go. */
  ended(cells: ReadonlyArray<ScopeCell>, now: number): void {
    this.sweep(now)
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
      if (cell === undefined) continue
      this.release(cell, now)
      this.settle(cell, now)
    }
  }

  /**
   * A take at `now` (up to `limit`, `heap` its timer heap): drops expired key cells, then, when a
   * rate window opens by the time the heap's next run would start, lets its waiters go and
   * returns true (the caller looks at the heap again).
   *
   * The comparison is with the heap run's start, `max(slot, now, notBefore)`, not its slot: a
   * run due before the window opens but not started by then (the driver's first take is at the
   * opening, or another scope let it go then) competes with the waiters at the same instant, and
   * SPEC §4 puts the one due earliest first — which the heap decides once the waiters are back
   * in it with their own keys. A window opening at the very instant the run would start opens
   * first, for the same reason.
   */
  opened(now: number, limit: number, heap: TimerHeap): boolean {
    this.sweep(now)
    const at = this.at
    if (at > limit || at > this.startOfTop(heap, now)) return false
    this.open(Math.max(at, now))
    return true
  }

  /**
   * When the heap's top live run would start if taken at `now`, epoch ms; +Infinity when none.
   * Drops dead entries that surface, so a dead one's key never decides (ground rule 2).
   */
  private startOfTop(heap: TimerHeap, now: number): number {
    while (heap.size > 0 && !this.rows.isLive(heap.topTask(), heap.topOrder())) {
      heap.pop()
      this.rows.dead--
    }
    if (heap.size === 0) return Number.POSITIVE_INFINITY
    const slot = heap.topSlot()
    const notBefore = this.rows.t.extra(heap.topTask())?.notBefore ?? -1
    return Math.max(slot, now, notBefore)
  }

  /** Rate windows that opened by `at` let their waiters go (at `at` at the earliest). */
  open(at: number): void {
    for (const cell of [...this.timed]) {
      if (cell.opensAt > at) continue
      cell.opensAt = Number.POSITIVE_INFINITY
      // Stryker disable next-line CallExpression: equivalent, a cell left in `timed` with opensAt +Infinity lowers no `at` and `open` skips it
      this.timed.delete(cell)
      this.release(cell, at)
      this.settle(cell, at)
    }
  }

  /** Drops the key cells whose windows passed by `now` and that hold nothing else. O(expired). */
  sweep(now: number): void {
    const expiry = this.expiry
    while (expiry.size > 0 && expiry.topAt() <= now) {
      const cell = expiry.pop()
      cell.expiring = false
      // A cell dropped and made again for the same key is another object: this one is gone.
      if (this.cells.get(cell.name) === cell) this.settle(cell, now)
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
    if (queue === undefined || queue.size === 0) return
    const rated = cell.limit.rateMax !== Number.POSITIVE_INFINITY
    let room = cell.limit.concurrency - cell.running - cell.letGo.length
    // A rate cell lets one run go at a time, the next after its start (see `started`).
    if ((room <= 0 || rated) && cell.letGo.length > 0) room += this.prune(cell)
    if (rated && cell.letGo.length > 0) return
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
      extra.letGoBy = cell
      extra.letGoOrder = order
      extra.letGoIndex = cell.letGo.length
      cell.letGo.push(i)
      room--
      // The rest wait for this one's start, which the window counts (ground rule 4).
      if (rated) break
    }
  }

  /** Row `i`, let go by a cell, was taken from the heap: it no longer counts against that cell. */
  private taken(i: number, extra: Extras): void {
    const cell = extra.letGoBy as ScopeCell
    extra.letGoBy = undefined
    const list = cell.letGo
    const k = extra.letGoIndex
    if (list[k] !== i) return
    const last = list.pop() as number
    if (k === list.length) return
    list[k] = last
    const moved = this.rows.t.extra(last)
    // Stryker disable next-line ConditionalExpression,EqualityOperator,OptionalChaining: equivalent, leaves only a stale let-go entry, which prune drops before it costs a place
    if (moved?.letGoBy === cell) moved.letGoIndex = k
  }

  /** Drops `cell`'s stale let-go entries (their heap entry died); returns how many. O(letGo). */
  private prune(cell: ScopeCell): number {
    const list = cell.letGo
    let kept = 0
    for (const i of list) {
      const extra = this.rows.t.extra(i)
      if (extra?.letGoBy !== cell || !this.rows.isLive(i, extra.letGoOrder)) continue
      extra.letGoIndex = kept
      list[kept++] = i
    }
    const dropped = list.length - kept
    list.length = kept
    return dropped
  }

  /**
   * Drops a key's cell that holds nothing (ground rule 5): no run, no waiter, no run let go, no
   * start inside its window; one whose newest start is still inside goes on the expiry heap.
   */
  private settle(cell: ScopeCell, now: number): void {
    if (cell.running > 0 || (cell.queue !== undefined && cell.queue.size > 0)) return
    if (!cell.name.startsWith("key:")) return
    if (cell.letGo.length > 0) this.prune(cell)
    if (cell.letGo.length > 0) return
    const last = cell.starts.at(-1)
    if (last !== undefined && last + cell.limit.ratePerMs > now) {
      if (!cell.expiring) {
        // Stryker disable next-line BooleanLiteral: equivalent, a duplicate expiry entry settles the cell once more, which finds it dropped or still needed
        cell.expiring = true
        this.expiry.push(last + cell.limit.ratePerMs, cell)
      }
      return
    }
    this.cells.delete(cell.name)
    this.timed.delete(cell)
  }

  /**
   * Moves every time flow control keeps by `delta` ms after the wall clock stepped (SPEC §2.6):
   * recent starts, window openings, key expiries and the queues' keys of delay-anchored runs
   * (`moves`, as in the timer heap), so a window still closes as long after its starts as it
   * did. Without it a step back held a rate-limited scope for the length of the step. O(cells +
   * queued).
   */
  shift(delta: number, moves: (i: number, order: number) => boolean): void {
    for (const cell of this.cells.values()) {
      const starts = cell.starts
      for (let k = 0; k < starts.length; k++) starts[k] = (starts[k] as number) + delta
      if (cell.opensAt !== Number.POSITIVE_INFINITY) cell.opensAt += delta
      cell.queue?.shift(delta, moves)
    }
    this.expiry.shift(delta)
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

  /**
   * What wait `w` waits for, in words with its scope's figures (SPEC §20.4; `explain`): a run of
   * the scope to end, or its rate window to open. O(queued in the scope).
   */
  waitsFor(row: number, w: Waiting): string {
    const cell = this.cells.get(w.scope)
    // A waiter let go and not yet taken: its cell holds it (ground rule 4), so this is defensive.
    if (cell === undefined) return `${w.scope} to let it go`
    const at = this.rows.t.slot(row)
    // Waiters before it in SPEC §4 order: the queue's own (slot, order) key.
    let ahead = 0
    cell.queue?.forEach((slot, order, i) => {
      if ((slot < at || (slot === at && order < w.order)) && this.rows.isLive(i, order)) ahead++
    })
    const queued = ahead === 0 ? "it is next" : `${ahead} waiting before it`
    if (w.cause === "concurrency") {
      return `a run of ${w.scope} to end (${cell.running} of ${cell.limit.concurrency} running; ${queued})`
    }
    return `${w.scope}'s rate window to open at ${w.until} (at most ${cell.limit.rateMax} per ${cell.limit.ratePerMs} ms; ${queued})`
  }

  /** Live waiters by cause. O(queued). */
  waitingCounts(): { concurrency: number; "rate-limited": number } {
    const out = { concurrency: 0, "rate-limited": 0 }
    this.forEach((_, order, i) => {
      if (!this.rows.isLive(i, order)) return
      // As `info` shows it: a rate waiter whose other scope filled since waits on that one.
      const w = waitingOf(this.rows, i)
      if (w !== undefined) out[w.cause]++
    })
    return out
  }
}

/**
 * A binary min-heap of key cells by expiry instant (epoch ms). An entry may be out of date (the
 * cell started again since): `sweep` settles it again, which pushes it anew when still needed.
 */
class ExpiryHeap {
  private readonly ats: Array<number> = []
  private readonly cells: Array<ScopeCell> = []

  get size(): number {
    return this.ats.length
  }

  topAt(): number {
    return this.ats[0] as number
  }

  push(at: number, cell: ScopeCell): void {
    const ats = this.ats
    const cells = this.cells
    let k = ats.length
    // Stryker disable next-line CallExpression: equivalent, the sift writes index k, the old length, last, which grows the array alike
    ats.push(at)
    // Stryker disable next-line CallExpression: equivalent, as above
    cells.push(cell)
    while (k > 0) {
      const parent = (k - 1) >> 1
      if ((ats[parent] as number) <= at) break
      ats[k] = ats[parent] as number
      cells[k] = cells[parent] as ScopeCell
      k = parent
    }
    ats[k] = at
    cells[k] = cell
  }

  /** Moves every entry by `delta` ms: the order of the entries stays. */
  shift(delta: number): void {
    const ats = this.ats
    for (let k = 0; k < ats.length; k++) ats[k] = (ats[k] as number) + delta
  }

  pop(): ScopeCell {
    const ats = this.ats
    const cells = this.cells
    const top = cells[0] as ScopeCell
    const at = ats.pop() as number
    const cell = cells.pop() as ScopeCell
    const n = ats.length
    if (n === 0) return top
    let k = 0
    for (;;) {
      let child = 2 * k + 1
      if (child >= n) break
      if (child + 1 < n && (ats[child + 1] as number) < (ats[child] as number)) child++
      if ((ats[child] as number) >= at) break
      ats[k] = ats[child] as number
      cells[k] = cells[child] as ScopeCell
      k = child
    }
    ats[k] = at
    cells[k] = cell
    return top
  }
}

/**
 * @internal Row `i`'s wait, when it is a `scheduled` row waiting on a limit now, as
 * `Rules.admit` would decide it now: a concurrency wait before a rate wait (SPEC §20.2). A
 * waiter stays in the queue it was put in until that scope lets it go, while another of its
 * scopes may fill meanwhile; its recorded wait is then out of date, and it shows a concurrency
 * wait on its first full scope (as a store deciding again at each claim records it). The other
 * way round, a concurrency waiter whose scope has room again but whose queue is held by that
 * scope's rate window (a run ended inside the window) shows a rate wait. A rate wait shows the
 * scope whose window opens last, the first of those opening together (as `Rules.admit`), though
 * it may be queued on another that was holding it when it was queued. When it runs is
 * unchanged: let go by its queue, it is admitted again and queued on the scope that holds it.
 */
export const waitingOf = <J>(rows: Rows<J>, i: number): Waiting | undefined => {
  const extra = rows.t.extra(i)
  const w = extra?.waiting
  if (w === undefined || rows.t.state(i) !== SCHEDULED || rows.t.ticket(i) !== w.order) {
    return undefined
  }
  const flow = rows.queues
  if (!(flow instanceof Flow) || extra?.scopes === undefined) return w
  for (const name of extra.scopes) {
    const cell = flow.cells.get(name)
    if (cell === undefined || cell.running < cell.limit.concurrency) continue
    if (w.cause === "concurrency" && w.scope === name) return w
    return { cause: "concurrency", scope: name, order: w.order, until: undefined, since: w.since }
  }
  // No scope is full. A concurrency waiter whose queue is held by its rate window alone (a run
  // ended inside the window: `release` made the cell timed) waits on a rate window now.
  if (w.cause === "concurrency") {
    const own = flow.cells.get(w.scope)
    if (own === undefined || own.opensAt === Number.POSITIVE_INFINITY) return w
  }
  // As `Rules.admit`: the scope whose window opens last, the first of those opening together.
  let scope = w.scope
  let until = Number.NEGATIVE_INFINITY
  for (const name of extra.scopes) {
    const cell = flow.cells.get(name)
    if (cell === undefined) continue
    const opens = Rules.rateOpensAt(cell.limit, cell.starts, Number.NEGATIVE_INFINITY)
    if (opens > until) {
      until = opens
      scope = name
    }
  }
  if (until === Number.NEGATIVE_INFINITY) return w
  if (w.cause === "rate-limited" && w.scope === scope && w.until === until) return w
  return { cause: "rate-limited", scope, order: w.order, until, since: w.since }
}
