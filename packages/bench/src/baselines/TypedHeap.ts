/**
 * The ceiling: a bare 4-ary min-heap held as a struct of typed arrays (slot and seq as
 * Float64Array, the task index as Uint32Array). It does the least work any heap scheduler can
 * do: no validation, no ids, no lifecycle, no retention. Entries order by (slot, seq).
 */
const ARITY = 4

export class TypedHeap {
  private slots: Float64Array
  private seqs: Float64Array
  private index: Uint32Array
  size = 0

  constructor(capacity = 64) {
    this.slots = new Float64Array(capacity)
    this.seqs = new Float64Array(capacity)
    this.index = new Uint32Array(capacity)
  }

  /** Bytes of the three arrays. */
  get byteLength(): number {
    return this.slots.byteLength + this.seqs.byteLength + this.index.byteLength
  }

  push(slot: number, seq: number, task: number): void {
    if (this.size === this.slots.length) this.grow()
    const slots = this.slots
    const seqs = this.seqs
    const index = this.index
    let i = this.size++
    while (i > 0) {
      const p = ((i - 1) / ARITY) | 0
      const ps = slots[p] as number
      if (ps < slot || (ps === slot && (seqs[p] as number) < seq)) break
      slots[i] = ps
      seqs[i] = seqs[p] as number
      index[i] = index[p] as number
      i = p
    }
    slots[i] = slot
    seqs[i] = seq
    index[i] = task
  }

  /** Slot of the smallest entry; Infinity when empty. */
  topSlot(): number {
    return this.size === 0 ? Number.POSITIVE_INFINITY : (this.slots[0] as number)
  }

  /** Task index of the smallest entry. Precondition: not empty. */
  topTask(): number {
    return this.index[0] as number
  }

  pop(): void {
    const last = --this.size
    if (last <= 0) return
    const slots = this.slots
    const seqs = this.seqs
    const index = this.index
    const slot = slots[last] as number
    const seq = seqs[last] as number
    const task = index[last] as number
    let i = 0
    for (;;) {
      const first = i * ARITY + 1
      if (first >= last) break
      let c = first
      let cs = slots[first] as number
      let cq = seqs[first] as number
      const end = Math.min(first + ARITY, last)
      for (let j = first + 1; j < end; j++) {
        const js = slots[j] as number
        if (js < cs || (js === cs && (seqs[j] as number) < cq)) {
          c = j
          cs = js
          cq = seqs[j] as number
        }
      }
      if (slot < cs || (slot === cs && seq < cq)) break
      slots[i] = cs
      seqs[i] = cq
      index[i] = index[c] as number
      i = c
    }
    slots[i] = slot
    seqs[i] = seq
    index[i] = task
  }

  private grow(): void {
    const n = this.slots.length * 2
    const slots = new Float64Array(n)
    const seqs = new Float64Array(n)
    const index = new Uint32Array(n)
    slots.set(this.slots)
    seqs.set(this.seqs)
    index.set(this.index)
    this.slots = slots
    this.seqs = seqs
    this.index = index
  }
}
