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
   * Tree entry keys: `keys[2p]` is the slot (epoch ms) of entry p, `keys[2p + 1]` its order
   * (`priorityRank * RANK_STRIDE + seq`). Only this class writes the arrays.
   */
  private keys: Float64Array
  /** Kernel task index of each tree entry. */
  private tasks: Uint32Array
  /** Entries in the tree, dead ones included. */
  private n = 0

  // ---- the sorted run: entries taken out of the tree in one batch (see prepare) ----
  /**
   * Each entry packed into one unsigned 64-bit key `(slot, rank, seq, task)` relative to the
   * batch's minimums (see {@link RunCodec}), sorted ascending; `[runHead, runEnd)` are left.
   */
  private run: BigUint64Array = EMPTY_RUN
  /** The same keys as 32-bit halves, to pack and unpack them without BigInt arithmetic. */
  private runWords: Uint32Array = EMPTY_WORDS
  private runHead = 0
  private runEnd = 0
  private readonly codec = new RunCodec()
  /** The run's head, unpacked (valid while `runHead < runEnd`). */
  private headSlot = 0
  private headOrder = 0
  private headTask = 0
  /** Whether the smallest entry is the run's head rather than the tree's root. */
  private fromRun = false
  /** Tree pops since a batch was last tried. */
  private pops = 0
  /** A batch is tried only after this many tree pops and with at least this many entries. */
  private readonly batchAfter: number

  /**
   * @param capacity entries to allocate at first.
   * @param batchAfter tree pops before {@link prepare} may take a batch (also the smallest tree
   *   it does so for); tests lower it to exercise batches on small heaps.
   */
  constructor(capacity = MIN_CAPACITY, batchAfter = BATCH_AFTER) {
    const n = Math.max(MIN_CAPACITY, capacity)
    this.keys = new Float64Array(n * 2)
    this.tasks = new Uint32Array(n)
    this.batchAfter = Math.max(1, batchAfter)
  }

  /** Number of entries, dead ones included. O(1). */
  get size(): number {
    return this.n + (this.runEnd - this.runHead)
  }

  /** Entries waiting in the sorted run taken out by {@link prepare} (also counted in `size`). O(1). */
  get sorted(): number {
    return this.runEnd - this.runHead
  }

  /** Allocated entries (for memory accounting): the tree's and the sorted run's. */
  get capacity(): number {
    return this.tasks.length + Math.ceil((this.run.length * 8) / ENTRY_BYTES)
  }

  /** Bytes held by the arrays: 20 per allocated tree entry, 8 per sorted-run entry. */
  get byteLength(): number {
    return this.keys.byteLength + this.tasks.byteLength + this.run.byteLength
  }

  /** Adds an entry. O(log n); amortised O(1) growth. */
  push(slot: number, order: number, task: number): void {
    this.ensureRoom(this.n + 1)
    const keys = this.keys
    const tasks = this.tasks
    let p = this.n++
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
    this.pickTop()
  }

  /** Slot of the smallest entry, or `Infinity` when empty. O(1). */
  topSlot(): number {
    if (this.fromRun) return this.headSlot
    return this.n === 0 ? Number.POSITIVE_INFINITY : (this.keys[0] as number)
  }

  /** Order key of the smallest entry. Precondition: not empty. O(1). */
  topOrder(): number {
    return this.fromRun ? this.headOrder : (this.keys[1] as number)
  }

  /** Task index of the smallest entry. Precondition: not empty. O(1). */
  topTask(): number {
    return this.fromRun ? this.headTask : (this.tasks[0] as number)
  }

  /**
   * Removes the smallest entry (read it with the `top*` getters first). O(log n) from the tree,
   * O(1) from the sorted run.
   */
  pop(): void {
    if (this.fromRun) {
      if (++this.runHead < this.runEnd) this.unpackHead()
      else this.dropRun()
      this.pickTop()
      return
    }
    this.pops++
    const last = --this.n
    // The last entry fills the root's hole (with none left, it writes itself back in place).
    this.siftDown(
      0,
      this.keys[2 * last] as number,
      this.keys[2 * last + 1] as number,
      this.tasks[last] as number,
      last,
    )
    this.pickTop()
  }

  /**
   * Says that entries with slot `<= limit` are about to be taken one after another. When many
   * are (an eighth of the entries or more, estimated from a sample) and the tree has been popped
   * often since the last try, every entry with slot `<= limit` is moved out of the tree in one
   * pass, sorted natively as packed 64-bit keys, and then taken in O(1) each: ~60–90 ns an
   * entry instead of a pop's O(log n) cache misses (~300–400 ns at a million). The order in
   * which entries come out is unchanged. O(1) when it does not act; O(n + d log d) when it
   * does, for d entries taken out.
   */
  prepare(limit: number): void {
    if (this.pops < this.batchAfter || this.pops * 16 < this.n) return
    this.pops = 0
    if (this.runHead < this.runEnd || this.n < this.batchAfter) return
    if (!this.mostlyDue(limit)) return
    this.batch(limit)
  }

  /**
   * Keeps only the entries for which `live(task, order)` holds and restores heap order bottom-up
   * (Floyd): O(n), not the O(n log n) of re-pushing. Shrinks the arrays when they are at most a
   * quarter full. Returns how many entries were dropped.
   */
  compact(live: (task: number, order: number) => boolean): number {
    const { keys, tasks } = this
    const end = this.n
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
    let dropped = end - kept
    this.n = kept
    this.heapify()
    this.shrinkIfSparse()
    // Filtering keeps the run sorted (an empty run stays empty and is dropped).
    const run = this.run
    const codec = this.codec
    let to = this.runHead
    for (let j = this.runHead; j < this.runEnd; j++) {
      codec.unpack(this.runWords, j)
      if (!live(codec.task, codec.order)) continue
      run[to++] = run[j] as bigint
    }
    dropped += this.runEnd - to
    this.runEnd = to
    if (this.runHead < this.runEnd) this.unpackHead()
    else this.dropRun()
    this.pickTop()
    return dropped
  }

  /**
   * Moves the slot of every entry for which `moves(task, order)` holds by `delta` ms and restores
   * heap order (Floyd): O(n). Order keys are kept, so ties still go to the earlier push.
   */
  shift(delta: number, moves: (task: number, order: number) => boolean): void {
    this.mergeRun()
    const { keys, tasks } = this
    for (let p = 0; p < this.n; p++) {
      if (moves(tasks[p] as number, keys[2 * p + 1] as number)) {
        keys[2 * p] = (keys[2 * p] as number) + delta
      }
    }
    this.heapify()
  }

  /** Calls `f` for every entry, in storage order (not sorted). O(n). */
  forEach(f: (slot: number, order: number, task: number) => void): void {
    for (let p = 0; p < this.n; p++) {
      f(this.keys[2 * p] as number, this.keys[2 * p + 1] as number, this.tasks[p] as number)
    }
    const codec = this.codec
    for (let j = this.runHead; j < this.runEnd; j++) {
      codec.unpack(this.runWords, j)
      f(codec.slot, codec.order, codec.task)
    }
  }

  /**
   * Throws {@link InvariantViolation} unless every tree entry is no smaller than its parent, the
   * sorted run is sorted, and the top is the smaller of the two. O(n).
   */
  verify(): void {
    const keys = this.keys
    for (let i = 0; i < this.n; i++) {
      const s = keys[2 * i] as number
      // Checked for the root too: a NaN root compares false with everything below it.
      if (!Number.isSafeInteger(s)) {
        throw new InvariantViolation({ message: `heap slot ${s} at ${i} is not a safe integer` })
      }
      // The root (i = 0) is its own "parent" here (q = 0), which never fails the check.
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
    const codec = this.codec
    let prevSlot = Number.NEGATIVE_INFINITY
    let prevOrder = Number.NEGATIVE_INFINITY
    for (let j = this.runHead; j < this.runEnd; j++) {
      codec.unpack(this.runWords, j)
      if (codec.slot < prevSlot || (codec.slot === prevSlot && codec.order <= prevOrder)) {
        throw new InvariantViolation({ message: `sorted run out of order at ${j}` })
      }
      prevSlot = codec.slot
      prevOrder = codec.order
    }
    if (this.runHead < this.runEnd) {
      const rootFirst =
        this.n > 0 &&
        ((keys[0] as number) < this.headSlot ||
          ((keys[0] as number) === this.headSlot && (keys[1] as number) < this.headOrder))
      if (this.fromRun === rootFirst) {
        throw new InvariantViolation({ message: "heap top is not the smallest entry" })
      }
    } else if (this.fromRun) {
      throw new InvariantViolation({ message: "heap top points into an empty sorted run" })
    }
  }

  /** Whether at least an eighth of a sample of tree entries is due by `limit`. */
  private mostlyDue(limit: number): boolean {
    const keys = this.keys
    const n = this.n
    let due = 0
    for (let k = 0; k < SAMPLE; k++) {
      if ((keys[2 * Math.floor(((k + 0.5) * n) / SAMPLE)] as number) <= limit) due++
    }
    return due * 8 >= SAMPLE
  }

  /**
   * Moves every tree entry with slot `<= limit` into a new sorted run, unless there are too few
   * of them to pay for the pass or their keys do not fit 64 bits (then nothing changes).
   */
  private batch(limit: number): void {
    const { keys, tasks } = this
    const end = this.n
    let due = 0
    let minSlot = Number.POSITIVE_INFINITY
    let maxSlot = Number.NEGATIVE_INFINITY
    let minOrder = Number.POSITIVE_INFINITY
    let maxOrder = Number.NEGATIVE_INFINITY
    let maxTask = 0
    let whole = true
    for (let p = 0; p < end; p++) {
      const s = keys[2 * p] as number
      if (s > limit) continue
      // The kernel's slots are whole ms (verify checks it); a fraction would not pack exactly.
      if (Math.floor(s) !== s) whole = false
      const o = keys[2 * p + 1] as number
      const t = tasks[p] as number
      // Stryker disable EqualityOperator: equivalent, on a tie the bound is assigned the value it has
      if (s < minSlot) minSlot = s
      if (s > maxSlot) maxSlot = s
      if (o < minOrder) minOrder = o
      if (o > maxOrder) maxOrder = o
      if (t > maxTask) maxTask = t
      // Stryker restore EqualityOperator
      due++
    }
    if (due * 16 < end || !whole) return
    const codec = this.codec
    if (!codec.fit(keys, end, limit, minSlot, maxSlot, minOrder, maxOrder, maxTask)) return
    const run = new BigUint64Array(due)
    const words = new Uint32Array(run.buffer)
    let j = 0
    let kept = 0
    for (let p = 0; p < end; p++) {
      const s = keys[2 * p] as number
      const o = keys[2 * p + 1] as number
      const t = tasks[p] as number
      if (s <= limit) {
        codec.pack(words, j++, s, o, t)
      } else {
        keys[2 * kept] = s
        keys[2 * kept + 1] = o
        tasks[kept] = t
        kept++
      }
    }
    // Native sort of unsigned 64-bit keys: keys are unique (order keys are), so it is total.
    run.sort()
    this.run = run
    this.runWords = words
    this.runHead = 0
    this.runEnd = due
    this.n = kept
    this.heapify()
    this.shrinkIfSparse()
    this.unpackHead()
    this.pickTop()
  }

  /** Puts what is left of the sorted run back into the tree (before changing slots). */
  private mergeRun(): void {
    if (this.runHead === this.runEnd) return
    const codec = this.codec
    this.ensureRoom(this.n + this.runEnd - this.runHead)
    const { keys, tasks } = this
    for (let j = this.runHead; j < this.runEnd; j++) {
      codec.unpack(this.runWords, j)
      const p = this.n++
      keys[2 * p] = codec.slot
      keys[2 * p + 1] = codec.order
      tasks[p] = codec.task
    }
    this.dropRun()
    this.pickTop()
  }

  private unpackHead(): void {
    const codec = this.codec
    codec.unpack(this.runWords, this.runHead)
    this.headSlot = codec.slot
    this.headOrder = codec.order
    this.headTask = codec.task
  }

  private dropRun(): void {
    this.run = EMPTY_RUN
    this.runWords = EMPTY_WORDS
    this.runHead = 0
    this.runEnd = 0
  }

  /** Points the top at the smaller of the run's head and the tree's root. */
  private pickTop(): void {
    if (this.runHead === this.runEnd) {
      this.fromRun = false
      return
    }
    if (this.n === 0) {
      this.fromRun = true
      return
    }
    const rs = this.keys[0] as number
    this.fromRun =
      this.headSlot < rs || (this.headSlot === rs && this.headOrder < (this.keys[1] as number))
  }

  /** Restores heap order over the tree's entries, bottom-up. O(n). */
  private heapify(): void {
    const { keys, tasks } = this
    const end = this.n
    for (let p = (end - 2) >> 2; p >= 0; p--) {
      this.siftDown(p, keys[2 * p] as number, keys[2 * p + 1] as number, tasks[p] as number, end)
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

  /** Grows the tree's arrays to hold `entries`, at least doubling them (amortised O(1) a push). */
  private ensureRoom(entries: number): void {
    if (entries > this.tasks.length) this.resize(Math.max(entries, this.tasks.length * 2))
  }

  /**
   * Frees memory when at most a quarter of the tree's room is used: halves of it stay free for
   * pushes, and it never goes below the 64 entries a new heap starts with.
   */
  private shrinkIfSparse(): void {
    if (this.n * 4 <= this.tasks.length) this.resize(Math.max(MIN_CAPACITY, this.n * 2))
  }

  private resize(capacity: number): void {
    const end = this.n
    const keys = new Float64Array(capacity * 2)
    const tasks = new Uint32Array(capacity)
    keys.set(this.keys.subarray(0, 2 * end))
    tasks.set(this.tasks.subarray(0, end))
    this.keys = keys
    this.tasks = tasks
  }
}

const ENTRY_BYTES = 20
/** Tree pops (and tree entries) before a batch is tried: below this, pops stay in cache. */
const BATCH_AFTER = 4096
/** Tree entries looked at to estimate how many are due. */
const SAMPLE = 64
const EMPTY_RUN = new BigUint64Array(0)
const EMPTY_WORDS = new Uint32Array(0)
/** Index of the low 32-bit word of a 64-bit element in a `Uint32Array` over the same bytes. */
const LOW = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1
const HIGH = 1 - LOW
const INV_STRIDE = 1 / RANK_STRIDE

/** Bits needed to hold every integer in `[0, x]`. */
const bitsFor = (x: number): number => (x <= 0 ? 0 : Math.floor(Math.log2(x)) + 1)

/**
 * Packs a batch's entries into unsigned 64-bit keys that sort in SPEC §4 order:
 * `(slot − minSlot, rank − minRank, seq − minSeq, task)`, most significant first, each field as
 * wide as the batch needs. Unique order keys make the keys unique. Every field is an integer
 * below 2^53 and the first three together fit 53 bits, so packing needs no BigInt arithmetic:
 * the key is written and read as two 32-bit words. Fields are split with multiplications by
 * powers of two (exact) rather than divisions. {@link fit} says whether a batch fits.
 */
class RunCodec {
  private minSlot = 0
  private minRank = 0
  private minSeq = 0
  /** Whether the batch mixes priorities (else its rank field is empty). Set by {@link fit}. */
  // Stryker disable next-line BooleanLiteral: equivalent, fit sets it before pack reads it
  private ranked = false
  /** 2^width of the rank, seq and task fields, of the head's bits in the low word, and inverses. */
  private rankSpan = 1
  private seqSpan = 1
  private taskSpan = 1
  private split = 1
  private invRankSpan = 1
  private invSeqSpan = 1
  private invTaskSpan = 1
  private invSplit = 1
  /** Read by {@link unpack}. */
  slot = 0
  order = 0
  task = 0

  /**
   * Whether the batch's entries (slot `<= limit` among the first `end` of `keys`, with these
   * bounds) pack into 64 bits; fixes the field widths when they do. Slots must be integers.
   */
  fit(
    keys: Float64Array,
    end: number,
    limit: number,
    minSlot: number,
    maxSlot: number,
    minOrder: number,
    maxOrder: number,
    maxTask: number,
  ): boolean {
    if (!Number.isSafeInteger(minSlot) || !Number.isSafeInteger(maxSlot)) return false
    const minRank = Math.floor(minOrder * INV_STRIDE)
    const maxRank = Math.floor(maxOrder * INV_STRIDE)
    let minSeq = minOrder - minRank * RANK_STRIDE
    let maxSeq = maxOrder - maxRank * RANK_STRIDE
    if (minRank !== maxRank) {
      // Mixed priorities: the sequence numbers' range needs a pass of its own.
      minSeq = Number.POSITIVE_INFINITY
      maxSeq = Number.NEGATIVE_INFINITY
      for (let p = 0; p < end; p++) {
        if ((keys[2 * p] as number) > limit) continue
        const o = keys[2 * p + 1] as number
        const seq = o - Math.floor(o * INV_STRIDE) * RANK_STRIDE
        // Stryker disable EqualityOperator: equivalent, on a tie the bound is assigned the value it has
        if (seq < minSeq) minSeq = seq
        if (seq > maxSeq) maxSeq = seq
        // Stryker restore EqualityOperator
      }
    }
    const rankBits = bitsFor(maxRank - minRank)
    const seqBits = bitsFor(maxSeq - minSeq)
    const taskBits = bitsFor(maxTask)
    const head = bitsFor(maxSlot - minSlot) + rankBits + seqBits
    if (head > 53 || taskBits > 31 || head + taskBits > 64) return false
    this.minSlot = minSlot
    this.minRank = minRank
    this.minSeq = minSeq
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, with an empty rank field the rank read from the order is minRank anyway
    this.ranked = rankBits > 0
    this.rankSpan = 2 ** rankBits
    this.seqSpan = 2 ** seqBits
    this.taskSpan = 2 ** taskBits
    this.split = 2 ** (32 - taskBits)
    this.invRankSpan = 1 / this.rankSpan
    this.invSeqSpan = 1 / this.seqSpan
    this.invTaskSpan = 1 / this.taskSpan
    this.invSplit = 1 / this.split
    return true
  }

  pack(words: Uint32Array, j: number, slot: number, order: number, task: number): void {
    const rank = this.ranked ? Math.floor(order * INV_STRIDE) : this.minRank
    // head < 2^53: exact in a double.
    const head =
      ((slot - this.minSlot) * this.rankSpan + (rank - this.minRank)) * this.seqSpan +
      (order - rank * RANK_STRIDE - this.minSeq)
    const high = Math.floor(head * this.invSplit)
    words[2 * j + HIGH] = high
    words[2 * j + LOW] = (head - high * this.split) * this.taskSpan + task
  }

  unpack(words: Uint32Array, j: number): void {
    const low = words[2 * j + LOW] as number
    const lowHead = Math.floor(low * this.invTaskSpan)
    this.task = low - lowHead * this.taskSpan
    const head = (words[2 * j + HIGH] as number) * this.split + lowHead
    const rest = Math.floor(head * this.invSeqSpan)
    const slotPart = Math.floor(rest * this.invRankSpan)
    this.slot = this.minSlot + slotPart
    this.order =
      (this.minRank + (rest - slotPart * this.rankSpan)) * RANK_STRIDE +
      this.minSeq +
      (head - rest * this.seqSpan)
  }
}
