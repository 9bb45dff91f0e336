/**
 * The typical hand-written scheduler: a binary min-heap of `{ slot, seq, id, job }` objects plus
 * a `Map` from id to entry. Cancelling deletes the id from the map; the heap entry stays and is
 * skipped when it surfaces (lazy deletion), so the heap never shrinks before it drains.
 */
export interface Entry<J> {
  readonly slot: number
  readonly seq: number
  readonly id: number
  readonly job: J
}

const before = <J>(a: Entry<J>, b: Entry<J>): boolean =>
  a.slot < b.slot || (a.slot === b.slot && a.seq < b.seq)

export class ObjectHeap<J> {
  private readonly items: Array<Entry<J>> = []

  get size(): number {
    return this.items.length
  }

  peek(): Entry<J> | undefined {
    return this.items[0]
  }

  push(e: Entry<J>): void {
    const a = this.items
    let i = a.length
    a.push(e)
    while (i > 0) {
      const p = (i - 1) >> 1
      const pe = a[p] as Entry<J>
      if (!before(e, pe)) break
      a[i] = pe
      i = p
    }
    a[i] = e
  }

  pop(): Entry<J> | undefined {
    const a = this.items
    const top = a[0]
    const last = a.pop()
    if (top === undefined || last === undefined || a.length === 0) return top
    const n = a.length
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) break
      const r = l + 1
      const c = r < n && before(a[r] as Entry<J>, a[l] as Entry<J>) ? r : l
      const ce = a[c] as Entry<J>
      if (!before(ce, last)) break
      a[i] = ce
      i = c
    }
    a[i] = last
    return top
  }
}

/** The heap plus the id map: schedule, cancel, run everything due up to a time. */
export class MapScheduler<J extends () => void> {
  readonly heap = new ObjectHeap<J>()
  readonly byId = new Map<number, Entry<J>>()
  private nextId = 1
  private seq = 0
  now = 0

  schedule(delay: number, job: J): number {
    const id = this.nextId++
    const e: Entry<J> = { slot: this.now + delay, seq: this.seq++, id, job }
    this.byId.set(id, e)
    this.heap.push(e)
    return id
  }

  cancel(id: number): boolean {
    return this.byId.delete(id)
  }

  runUntil(end: number): number {
    let n = 0
    const heap = this.heap
    for (;;) {
      const top = heap.peek()
      if (top === undefined || top.slot > end) break
      heap.pop()
      if (!this.byId.delete(top.id)) continue
      this.now = top.slot
      top.job()
      n++
    }
    this.now = end
    return n
  }
}
