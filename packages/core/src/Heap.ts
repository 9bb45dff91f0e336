/**
 * The timer heap: a 4-ary min-heap of small numeric keys held as a struct of typed arrays.
 *
 * An entry is `(slot, order, task)`:
 * - `slot`: when the run is due, epoch ms;
 * - `order`: the tie-breaker within a slot, `priorityRank * 2^51 + seq` (SPEC §4), so one float
 *   comparison orders priority first (rank 0 = high) and then push order. It is unique per push,
 *   so the owner tells a live entry from a dead one by comparing it with the order it recorded
 *   for the task at its latest push;
 * - `task`: the task's index in the kernel's table.
 *
 * Job objects never enter the heap, and an entry costs 20 bytes: `(slot, order)` side by side in
 * one `Float64Array` (16 bytes) and the task in a `Uint32Array`. The keys of a node's four
 * children are then 64 contiguous bytes (at most two cache lines, instead of up to four in
 * separate slot and order arrays), and the task is read only for the child that moves up.
 * A cancelled task's entry stays where it is and is dropped when it surfaces (lazy deletion); the
 * owner counts such dead entries and calls {@link TimerHeap.compact} when they pass half of the
 * heap, so memory stays proportional to the live tasks.
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
 * A 4-ary min-heap of `(slot, order, task)` keys on typed arrays.
 *
 * **Example** (Push and pop)
 *
 * ```ts
 * import { Heap } from "@tickwork/core"
 * const h = new Heap.TimerHeap()
 * h.push(20, 0, 7)
 * h.push(10, 1, 8)
 * h.topTask() // 8
 * h.pop()
 * h.topSlot() // 20
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export class TimerHeap {
  /**
   * Entry keys: `keys[2p]` is the slot (epoch ms) of entry p, `keys[2p + 1]` its order
   * (`priorityRank * RANK_STRIDE + seq`). Only this class writes the arrays.
   */
  private keys: Float64Array
  /** Kernel task index of each entry. */
  private tasks: Uint32Array
  /** Number of entries, dead ones included. */
  size = 0

  constructor(capacity = MIN_CAPACITY) {
    const n = Math.max(MIN_CAPACITY, capacity)
    this.keys = new Float64Array(n * 2)
    this.tasks = new Uint32Array(n)
  }

  /** Allocated entries (for memory accounting). */
  get capacity(): number {
    return this.tasks.length
  }

  /** Bytes held by the arrays: 20 per allocated entry. */
  get byteLength(): number {
    return this.keys.byteLength + this.tasks.byteLength
  }

  /** Adds an entry. O(log n); amortised O(1) growth. */
  push(slot: number, order: number, task: number): void {
    if (this.size === this.capacity) this.resize(this.size * 2)
    const keys = this.keys
    const tasks = this.tasks
    let p = this.size++
    // Sift up with a hole: parents move down until the new key fits.
    while (p > 0) {
      const q = (p - 1) >> 2
      const qs = keys[2 * q] as number
      if (qs < slot || (qs === slot && (keys[2 * q + 1] as number) < order)) break
      keys[2 * p] = qs
      keys[2 * p + 1] = keys[2 * q + 1] as number
      tasks[p] = tasks[q] as number
      p = q
    }
    keys[2 * p] = slot
    keys[2 * p + 1] = order
    tasks[p] = task
  }

  /** Slot of the smallest entry, or `Infinity` when empty. O(1). */
  topSlot(): number {
    return this.size === 0 ? Number.POSITIVE_INFINITY : (this.keys[0] as number)
  }

  /** Order key of the smallest entry. Precondition: not empty. O(1). */
  topOrder(): number {
    return this.keys[1] as number
  }

  /** Task index of the smallest entry. Precondition: not empty. O(1). */
  topTask(): number {
    return this.tasks[0] as number
  }

  /** Removes the smallest entry (read it with the `top*` getters first). O(log n). */
  pop(): void {
    const last = --this.size
    if (last <= 0) return
    this.siftDown(
      0,
      this.keys[2 * last] as number,
      this.keys[2 * last + 1] as number,
      this.tasks[last] as number,
      last,
    )
  }

  /**
   * Keeps only the entries for which `live(task, order)` holds and restores heap order bottom-up
   * (Floyd): O(n), not the O(n log n) of re-pushing. Shrinks the arrays when they are at most a
   * quarter full. Returns how many entries were dropped.
   */
  compact(live: (task: number, order: number) => boolean): number {
    const { keys, tasks } = this
    const end = this.size
    let kept = 0
    for (let p = 0; p < end; p++) {
      const t = tasks[p] as number
      const o = keys[2 * p + 1] as number
      if (!live(t, o)) continue
      keys[2 * kept] = keys[2 * p] as number
      keys[2 * kept + 1] = o
      tasks[kept] = t
      kept++
    }
    const dropped = end - kept
    this.size = kept
    this.heapify()
    if (this.capacity > MIN_CAPACITY && kept * 4 <= this.capacity) {
      this.resize(Math.max(MIN_CAPACITY, kept * 2))
    }
    return dropped
  }

  /**
   * Moves the slot of every entry for which `moves(task, order)` holds by `delta` ms and restores
   * heap order (Floyd): O(n). Order keys are kept, so ties still go to the earlier push.
   */
  shift(delta: number, moves: (task: number, order: number) => boolean): void {
    const { keys, tasks } = this
    for (let p = 0; p < this.size; p++) {
      if (moves(tasks[p] as number, keys[2 * p + 1] as number)) {
        keys[2 * p] = (keys[2 * p] as number) + delta
      }
    }
    this.heapify()
  }

  /** Restores heap order over the first `size` entries, bottom-up. O(n). */
  private heapify(): void {
    const { keys, tasks } = this
    const end = this.size
    for (let p = (end - 2) >> 2; p >= 0; p--) {
      this.siftDown(p, keys[2 * p] as number, keys[2 * p + 1] as number, tasks[p] as number, end)
    }
  }

  /** Calls `f` for every entry, in storage order (not sorted). O(n). */
  forEach(f: (slot: number, order: number, task: number) => void): void {
    for (let p = 0; p < this.size; p++) {
      f(this.keys[2 * p] as number, this.keys[2 * p + 1] as number, this.tasks[p] as number)
    }
  }

  /** Throws {@link InvariantViolation} unless every entry is no smaller than its parent. O(n). */
  verify(): void {
    const keys = this.keys
    for (let i = 0; i < this.size; i++) {
      const s = keys[2 * i] as number
      // Checked for the root too: a NaN root compares false with everything below it.
      if (!Number.isSafeInteger(s)) {
        throw new InvariantViolation({ message: `heap slot ${s} at ${i} is not a safe integer` })
      }
      if (i === 0) continue
      const q = ((i - 1) / ARITY) | 0
      const ps = keys[2 * q] as number
      const o = keys[2 * i + 1] as number
      const po = keys[2 * q + 1] as number
      if (s < ps || (s === ps && o < po)) {
        throw new InvariantViolation({
          message: `heap order broken at ${i}: (${s}, ${o}) < parent ${q} (${ps}, ${po})`,
        })
      }
    }
  }

  /**
   * Places `(slot, order, task)` in the hole at entry `p`, moving smaller children up; `end` is
   * the number of entries.
   */
  private siftDown(p: number, slot: number, order: number, task: number, end: number): void {
    const keys = this.keys
    const tasks = this.tasks
    for (;;) {
      const first = p * ARITY + 1
      if (first >= end) break
      let c = first
      let cs = keys[2 * first] as number
      let co = keys[2 * first + 1] as number
      const stop = Math.min(first + ARITY, end)
      for (let j = first + 1; j < stop; j++) {
        const js = keys[2 * j] as number
        if (js < cs || (js === cs && (keys[2 * j + 1] as number) < co)) {
          c = j
          cs = js
          co = keys[2 * j + 1] as number
        }
      }
      if (slot < cs || (slot === cs && order < co)) break
      keys[2 * p] = cs
      keys[2 * p + 1] = co
      tasks[p] = tasks[c] as number
      p = c
    }
    keys[2 * p] = slot
    keys[2 * p + 1] = order
    tasks[p] = task
  }

  private resize(capacity: number): void {
    const end = this.size
    const keys = new Float64Array(capacity * 2)
    const tasks = new Uint32Array(capacity)
    keys.set(this.keys.subarray(0, 2 * end))
    tasks.set(this.tasks.subarray(0, end))
    this.keys = keys
    this.tasks = tasks
  }
}
