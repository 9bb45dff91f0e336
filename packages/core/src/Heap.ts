/**
 * The timer heap: a 4-ary min-heap of small numeric keys held as a struct of typed arrays.
 *
 * An entry is `(slot, order, task, generation)`:
 * - `slot`: when the run is due, epoch ms;
 * - `order`: the tie-breaker within a slot, `priorityRank * 2^51 + seq` (SPEC §4), so one float
 *   comparison orders priority first (rank 0 = high) and then push order;
 * - `task`: the task's index in the kernel's table;
 * - `generation`: the task's generation when the entry was pushed.
 *
 * Job objects never enter the heap: comparisons touch two `Float64Array`s only, and an entry costs
 * 24 bytes. A cancelled task's entry stays where it is and is dropped when it surfaces (lazy
 * deletion); the owner counts such dead entries and calls {@link TimerHeap.compact} when they pass
 * half of the heap, so memory stays proportional to the live tasks.
 *
 * Ground rules:
 * 1. Heap order: no entry is smaller than its parent under (slot, order).
 * 2. `order` values are unique (seq is never reused), so the order is total and the pop sequence
 *    is deterministic (SPEC §14.6).
 *
 * @since 0.1.0
 */
import { InvariantViolation } from "./Errors.ts"

/** Each level multiplies the width by 4: half the depth of a binary heap, fewer cache misses. */
const ARITY = 4
const MIN_CAPACITY = 64

/**
 * The multiplier that puts the priority rank above any sequence number in {@link TimerHeap}'s
 * `order` key. Sequence numbers must stay below it (2^51 ≈ 2.2e15 pushes).
 *
 * @category models
 * @since 0.1.0
 */
export const RANK_STRIDE = 2 ** 51

/**
 * A due run's sort key (SPEC §4): its slot (when it is due, epoch ms), its priority rank
 * (0 = high) and its push sequence number.
 *
 * @category models
 * @since 0.3.0
 */
export interface RunKey {
  readonly slot: number
  readonly rank: number
  readonly seq: number
}

/**
 * SPEC §4's order of due runs, stated once: earlier slot first; equal slots, higher priority
 * (lower rank) first; equal priority, the earlier push first. Negative when `a` runs first. The
 * heap compares the same key packed as `(slot, rank * RANK_STRIDE + seq)`; a store that keeps
 * runs elsewhere (the durable store's rows) sorts with this.
 *
 * @category combinators
 * @since 0.3.0
 */
export const compare = (a: RunKey, b: RunKey): number =>
  a.slot - b.slot || a.rank - b.rank || a.seq - b.seq

/**
 * A 4-ary min-heap of `(slot, order, task, generation)` keys on typed arrays.
 *
 * **Example** (Push and pop)
 *
 * ```ts
 * import { Heap } from "@tickwork/core"
 * const h = new Heap.TimerHeap()
 * h.push(20, 0, 7, 1)
 * h.push(10, 1, 8, 1)
 * h.topTask() // 8
 * h.pop()
 * h.topSlot() // 20
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export class TimerHeap {
  /** Due instant of each entry, epoch ms. Only this class writes the arrays. */
  private slots: Float64Array
  /** `priorityRank * RANK_STRIDE + seq`: smaller runs first among equal slots. */
  private orders: Float64Array
  /** Kernel task index of each entry. */
  private tasks: Uint32Array
  /** Task generation at push time; an entry whose generation is stale is dead. */
  private gens: Uint32Array
  /** Number of entries, dead ones included. */
  size = 0

  constructor(capacity = MIN_CAPACITY) {
    const n = Math.max(MIN_CAPACITY, capacity)
    this.slots = new Float64Array(n)
    this.orders = new Float64Array(n)
    this.tasks = new Uint32Array(n)
    this.gens = new Uint32Array(n)
  }

  /** Allocated entries (for memory accounting). */
  get capacity(): number {
    return this.slots.length
  }

  /** Bytes held by the arrays: 24 per allocated entry. */
  get byteLength(): number {
    return this.capacity * 24
  }

  /** Adds an entry. O(log n); amortised O(1) growth. */
  push(slot: number, order: number, task: number, gen: number): void {
    if (this.size === this.slots.length) this.resize(this.size * 2)
    const slots = this.slots
    const orders = this.orders
    const tasks = this.tasks
    const gens = this.gens
    let i = this.size++
    // Sift up with a hole: parents move down until the new key fits.
    while (i > 0) {
      const p = ((i - 1) / ARITY) | 0
      const ps = slots[p] as number
      if (ps < slot || (ps === slot && (orders[p] as number) < order)) break
      slots[i] = ps
      orders[i] = orders[p] as number
      tasks[i] = tasks[p] as number
      gens[i] = gens[p] as number
      i = p
    }
    slots[i] = slot
    orders[i] = order
    tasks[i] = task
    gens[i] = gen
  }

  /** Slot of the smallest entry, or `Infinity` when empty. O(1). */
  topSlot(): number {
    return this.size === 0 ? Number.POSITIVE_INFINITY : (this.slots[0] as number)
  }

  /** Order key of the smallest entry. Precondition: not empty. O(1). */
  topOrder(): number {
    return this.orders[0] as number
  }

  /** Task index of the smallest entry. Precondition: not empty. O(1). */
  topTask(): number {
    return this.tasks[0] as number
  }

  /** Generation of the smallest entry. Precondition: not empty. O(1). */
  topGen(): number {
    return this.gens[0] as number
  }

  /** Removes the smallest entry (read it with the `top*` getters first). O(log n). */
  pop(): void {
    const last = --this.size
    if (last <= 0) return
    this.siftDown(
      0,
      this.slots[last] as number,
      this.orders[last] as number,
      this.tasks[last] as number,
      this.gens[last] as number,
      last,
    )
  }

  /**
   * Keeps only the entries for which `live(task, gen, order)` holds and restores heap order bottom-up
   * (Floyd): O(n), not the O(n log n) of re-pushing. Shrinks the arrays when they are at most a
   * quarter full. Returns how many entries were dropped.
   */
  compact(live: (task: number, gen: number, order: number) => boolean): number {
    const { slots, orders, tasks, gens } = this
    let kept = 0
    for (let i = 0; i < this.size; i++) {
      const t = tasks[i] as number
      const g = gens[i] as number
      if (!live(t, g, orders[i] as number)) continue
      slots[kept] = slots[i] as number
      orders[kept] = orders[i] as number
      tasks[kept] = t
      gens[kept] = g
      kept++
    }
    const dropped = this.size - kept
    this.size = kept
    this.heapify()
    if (this.capacity > MIN_CAPACITY && kept * 4 <= this.capacity) {
      this.resize(Math.max(MIN_CAPACITY, kept * 2))
    }
    return dropped
  }

  /**
   * Moves the slot of every entry for which `moves(task, gen)` holds by `delta` ms and restores
   * heap order (Floyd): O(n). Order keys are kept, so ties still go to the earlier push.
   */
  shift(delta: number, moves: (task: number, gen: number) => boolean): void {
    const { slots, tasks, gens } = this
    for (let i = 0; i < this.size; i++) {
      if (moves(tasks[i] as number, gens[i] as number)) slots[i] = (slots[i] as number) + delta
    }
    this.heapify()
  }

  /** Restores heap order over the first `size` entries, bottom-up. O(n). */
  private heapify(): void {
    const { slots, orders, tasks, gens } = this
    const n = this.size
    for (let i = Math.floor((n - 2) / ARITY); i >= 0; i--) {
      this.siftDown(
        i,
        slots[i] as number,
        orders[i] as number,
        tasks[i] as number,
        gens[i] as number,
        n,
      )
    }
  }

  /** Calls `f` for every entry, in storage order (not sorted). O(n). */
  forEach(f: (slot: number, order: number, task: number, gen: number) => void): void {
    for (let i = 0; i < this.size; i++) {
      f(
        this.slots[i] as number,
        this.orders[i] as number,
        this.tasks[i] as number,
        this.gens[i] as number,
      )
    }
  }

  /** Throws {@link InvariantViolation} unless every entry is no smaller than its parent. O(n). */
  verify(): void {
    for (let i = 0; i < this.size; i++) {
      const s = this.slots[i] as number
      // Checked for the root too: a NaN root compares false with everything below it.
      if (!Number.isSafeInteger(s)) {
        throw new InvariantViolation({ message: `heap slot ${s} at ${i} is not a safe integer` })
      }
      if (i === 0) continue
      const p = ((i - 1) / ARITY) | 0
      const ps = this.slots[p] as number
      if (s < ps || (s === ps && (this.orders[i] as number) < (this.orders[p] as number))) {
        throw new InvariantViolation({
          message: `heap order broken at ${i}: (${s}, ${this.orders[i]}) < parent ${p} (${ps}, ${this.orders[p]})`,
        })
      }
    }
  }

  /** Places `(slot, order, task, gen)` in the hole at `i`, moving smaller children up. */
  private siftDown(
    i: number,
    slot: number,
    order: number,
    task: number,
    gen: number,
    size: number,
  ): void {
    const slots = this.slots
    const orders = this.orders
    const tasks = this.tasks
    const gens = this.gens
    for (;;) {
      const first = i * ARITY + 1
      if (first >= size) break
      let c = first
      let cs = slots[first] as number
      let co = orders[first] as number
      const end = Math.min(first + ARITY, size)
      for (let j = first + 1; j < end; j++) {
        const js = slots[j] as number
        if (js < cs || (js === cs && (orders[j] as number) < co)) {
          c = j
          cs = js
          co = orders[j] as number
        }
      }
      if (slot < cs || (slot === cs && order < co)) break
      slots[i] = cs
      orders[i] = co
      tasks[i] = tasks[c] as number
      gens[i] = gens[c] as number
      i = c
    }
    slots[i] = slot
    orders[i] = order
    tasks[i] = task
    gens[i] = gen
  }

  private resize(capacity: number): void {
    const n = this.size
    const slots = new Float64Array(capacity)
    const orders = new Float64Array(capacity)
    const tasks = new Uint32Array(capacity)
    const gens = new Uint32Array(capacity)
    slots.set(this.slots.subarray(0, n))
    orders.set(this.orders.subarray(0, n))
    tasks.set(this.tasks.subarray(0, n))
    gens.set(this.gens.subarray(0, n))
    this.slots = slots
    this.orders = orders
    this.tasks = tasks
    this.gens = gens
  }
}
