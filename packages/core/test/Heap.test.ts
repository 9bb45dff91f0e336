import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Errors, Heap } from "../src/index.ts"

interface Entry {
  readonly slot: number
  readonly order: number
  readonly task: number
}

/** The reference order of SPEC §4 as the heap encodes it: slot, then the order key. */
const byKey = (a: Entry, b: Entry): number => a.slot - b.slot || a.order - b.order

const top = (h: Heap.TimerHeap): Entry => ({
  slot: h.topSlot(),
  order: h.topOrder(),
  task: h.topTask(),
})

const drain = (h: Heap.TimerHeap): Array<Entry> => {
  const out: Array<Entry> = []
  while (h.size > 0) {
    out.push(top(h))
    h.pop()
  }
  return out
}

/** Entries with unique order keys (the kernel's seq is never reused), in push order. */
const entriesArb = (maxLength: number) =>
  fc
    .array(
      fc.record({
        slot: fc.integer({ min: 0, max: 50 }),
        rank: fc.integer({ min: 0, max: 2 }),
      }),
      { maxLength },
    )
    .map((xs) =>
      xs.map(
        (x, seq): Entry => ({
          slot: x.slot,
          order: x.rank * Heap.RANK_STRIDE + seq,
          task: seq,
        }),
      ),
    )

/**
 * Test-only access to the key array, to corrupt it on purpose: sets the first key equal to `from`
 * (a slot comes before its order key) to `to`.
 */
const corrupt = (h: Heap.TimerHeap, from: number, to: number): void => {
  const keys = (h as unknown as { keys: Float64Array }).keys
  const at = keys.indexOf(from)
  expect(at).toBeGreaterThanOrEqual(0)
  keys[at] = to
}

describe("models", () => {
  it("an empty heap has no top slot", () => {
    const h = new Heap.TimerHeap()
    expect(h.size).toBe(0)
    expect(h.topSlot()).toBe(Number.POSITIVE_INFINITY)
    h.verify()
  })

  it("pops in (slot, order) order, matching a sorted reference", () => {
    fc.assert(
      fc.property(entriesArb(300), (entries) => {
        const h = new Heap.TimerHeap()
        for (const e of entries) h.push(e.slot, e.order, e.task)
        h.verify()
        expect(h.size).toBe(entries.length)
        expect(drain(h)).toEqual([...entries].sort(byKey))
      }),
      { numRuns: 200 },
    )
  })

  it("interleaved pushes and pops always pop the smallest entry present", () => {
    const op = fc.oneof(
      fc.record({ push: fc.integer({ min: 0, max: 20 }), rank: fc.integer({ min: 0, max: 2 }) }),
      fc.constant("pop" as const),
    )
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const h = new Heap.TimerHeap()
        let reference: Array<Entry> = []
        let seq = 0
        for (const o of ops) {
          if (o === "pop") {
            if (reference.length === 0) continue
            reference.sort(byKey)
            expect(top(h)).toEqual(reference[0])
            reference = reference.slice(1)
            h.pop()
          } else {
            const e = { slot: o.push, order: o.rank * Heap.RANK_STRIDE + seq, task: seq }
            seq++
            reference.push(e)
            h.push(e.slot, e.order, e.task)
          }
          h.verify()
          expect(h.size).toBe(reference.length)
        }
      }),
      { numRuns: 200 },
    )
  })

  it("among equal slots, a lower order key (higher priority, then earlier push) comes first", () => {
    const h = new Heap.TimerHeap()
    h.push(10, 2 * Heap.RANK_STRIDE + 0, 0) // low, pushed first
    h.push(10, 1 * Heap.RANK_STRIDE + 1, 1) // normal
    h.push(10, 0 * Heap.RANK_STRIDE + 3, 2) // high, pushed late
    h.push(10, 1 * Heap.RANK_STRIDE + 2, 3) // normal, pushed after task 1
    h.push(9, 2 * Heap.RANK_STRIDE + 4, 4) // earlier slot beats any priority
    expect(drain(h).map((e) => e.task)).toEqual([4, 2, 1, 3, 0])
  })

  it("grows past its initial capacity and reports 20 bytes per allocated entry", () => {
    const h = new Heap.TimerHeap()
    const initial = h.capacity
    for (let i = 0; i < initial * 3; i++) h.push(initial * 3 - i, i, i)
    expect(h.capacity).toBeGreaterThanOrEqual(initial * 3)
    expect(h.byteLength).toBe(h.capacity * 20)
    h.verify()
    expect(drain(h).map((e) => e.slot)).toEqual(
      Array.from({ length: initial * 3 }, (_, i) => i + 1),
    )
  })

  it("forEach visits every entry once", () => {
    const h = new Heap.TimerHeap()
    for (let i = 0; i < 100; i++) h.push(i % 7, i, i)
    const seen: Array<number> = []
    h.forEach((_slot, _order, task) => {
      seen.push(task)
    })
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i))
  })
})

describe("compaction", () => {
  it("drops exactly the dead entries and keeps the rest in order", () => {
    fc.assert(
      fc.property(entriesArb(300), fc.func(fc.boolean()), (entries, isLive) => {
        const h = new Heap.TimerHeap()
        for (const e of entries) h.push(e.slot, e.order, e.task)
        const live = (task: number, order: number) => isLive(task, order)
        const kept = entries.filter((e) => live(e.task, e.order))
        expect(h.compact(live)).toBe(entries.length - kept.length)
        h.verify()
        expect(h.size).toBe(kept.length)
        expect(drain(h)).toEqual(kept.sort(byKey))
      }),
      { numRuns: 200 },
    )
  })

  it("releases memory when at most a quarter of the capacity is live", () => {
    const h = new Heap.TimerHeap()
    for (let i = 0; i < 1024; i++) h.push(i, i, i)
    const before = h.capacity
    expect(h.compact((task) => task < 10)).toBe(1014)
    expect(h.capacity).toBeLessThan(before)
    expect(h.capacity).toBeGreaterThanOrEqual(10)
    expect(drain(h).map((e) => e.task)).toEqual(Array.from({ length: 10 }, (_, i) => i))
  })

  it("compacting everything away leaves an empty, usable heap", () => {
    const h = new Heap.TimerHeap()
    for (let i = 0; i < 10; i++) h.push(i, i, i)
    expect(h.compact(() => false)).toBe(10)
    expect(h.size).toBe(0)
    h.push(3, 0, 42)
    expect(top(h)).toEqual({ slot: 3, order: 0, task: 42 })
  })
})

describe("verify", () => {
  const filled = () => {
    const h = new Heap.TimerHeap()
    for (let i = 0; i < 40; i++) h.push(i, i, i)
    return h
  }

  it("catches a child whose slot is below its parent's", () => {
    const h = filled()
    corrupt(h, 5, -1)
    expect(() => h.verify()).toThrow(Errors.InvariantViolation)
  })

  it("catches a tie in slot broken the wrong way by the order key", () => {
    const h = new Heap.TimerHeap()
    h.push(10, 5, 0)
    h.push(10, 6, 1)
    corrupt(h, 6, 1)
    expect(() => h.verify()).toThrow(/heap order broken at 1/)
  })

  it("catches a slot that is not a safe integer, at the root too", () => {
    const h = filled()
    corrupt(h, 39, 1e300)
    expect(() => h.verify()).toThrow(/not a safe integer/)
    const single = new Heap.TimerHeap()
    single.push(Number.NaN, 0, 0)
    expect(() => single.verify()).toThrow(/not a safe integer/)
  })
})
