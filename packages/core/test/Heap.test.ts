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

/** Takes `count` entries, each after the hint that entries due by `limit` are being taken. */
const takeWithHints = (h: Heap.TimerHeap, limit: number, count: number): Array<Entry> => {
  const out: Array<Entry> = []
  for (let k = 0; k < count; k++) {
    h.prepare(limit)
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

describe("batches of due entries", () => {
  /** Pushes, pops, batch hints, compactions and shifts, on a heap that batches after `after` pops. */
  const opArb = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        push: fc.integer({ min: 0, max: 40 }),
        rank: fc.integer({ min: 0, max: 2 }),
      }),
    },
    { weight: 4, arbitrary: fc.constant({ pop: true as const }) },
    { weight: 2, arbitrary: fc.record({ prepare: fc.integer({ min: -5, max: 45 }) }) },
    { weight: 1, arbitrary: fc.record({ keepEvery: fc.integer({ min: 2, max: 4 }) }) },
    { weight: 1, arbitrary: fc.record({ shift: fc.integer({ min: -10, max: 10 }) }) },
  )

  it("takes entries out in the same order as popping, whatever the batches", () => {
    let runsWithBatches = 0
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(opArb, { minLength: 50, maxLength: 300, size: "max" }),
        (after, ops) => {
          const h = new Heap.TimerHeap(4, after)
          let reference: Array<Entry> = []
          let seq = 0
          let batched = 0
          for (const o of ops) {
            if ("pop" in o) {
              if (reference.length === 0) continue
              reference.sort(byKey)
              expect(top(h)).toEqual(reference[0])
              reference = reference.slice(1)
              h.pop()
            } else if ("push" in o) {
              const e = { slot: o.push, order: o.rank * Heap.RANK_STRIDE + seq, task: seq }
              seq++
              reference.push(e)
              h.push(e.slot, e.order, e.task)
            } else if ("prepare" in o) {
              h.prepare(o.prepare)
              if (h.sorted > 0) batched++
            } else if ("keepEvery" in o) {
              const live = (task: number) => task % o.keepEvery !== 0
              const dropped = reference.filter((e) => !live(e.task)).length
              reference = reference.filter((e) => live(e.task))
              expect(h.compact(live)).toBe(dropped)
            } else {
              // Odd tasks move (as a wall-clock step moves only some tasks).
              const moves = (task: number) => task % 2 === 1
              reference = reference.map((e) =>
                moves(e.task) ? { ...e, slot: e.slot + o.shift } : e,
              )
              h.shift(o.shift, moves)
            }
            h.verify()
            expect(h.size).toBe(reference.length)
            expect(h.sorted).toBeLessThanOrEqual(h.size)
          }
          expect(drain(h)).toEqual(reference.sort(byKey))
          if (batched > 0) runsWithBatches++
        },
      ),
      { numRuns: 300 },
    )
    // The sequences must reach the batch path, not only the tree.
    expect(runsWithBatches).toBeGreaterThan(30)
  })

  it("batches a burst: what is due leaves the tree sorted, later pushes still come first when smaller", () => {
    const h = new Heap.TimerHeap(4, 8)
    const n = 1000
    // Due by 500: slots 0..499 in a scrambled push order, with all three priorities.
    for (let k = 0; k < n; k++) {
      const slot = (k * 7919) % n
      h.push(slot, (k % 3) * Heap.RANK_STRIDE + k, k)
    }
    const expected: Array<Entry> = []
    for (let k = 0; k < n; k++) {
      expected.push({ slot: (k * 7919) % n, order: (k % 3) * Heap.RANK_STRIDE + k, task: k })
    }
    expected.sort(byKey)
    const out = takeWithHints(h, 499, 100)
    // After enough pops the hint moved every remaining entry due by 499 into the sorted run.
    expect(h.sorted).toBeGreaterThan(0)
    expect(h.sorted).toBe(expected.filter((e) => e.slot <= 499).length - 100)
    h.verify()
    // A push smaller than the run's head comes out first; then the run and the tree interleave.
    h.push(-1, 0, 5000)
    out.push(...drain(h))
    expect(out).toEqual([
      ...expected.slice(0, 100),
      { slot: -1, order: 0, task: 5000 },
      ...expected.slice(100),
    ])
    expect(h.sorted).toBe(0)
  })

  it("a higher-priority push at the run's slot comes before the rest of the run (SPEC §4)", () => {
    const h = new Heap.TimerHeap(4, 8)
    for (let k = 0; k < 200; k++) h.push(10, Heap.RANK_STRIDE + k, k) // all normal, slot 10
    while (h.sorted === 0) {
      h.prepare(10)
      h.pop()
    }
    const left = h.size
    h.push(10, 0 * Heap.RANK_STRIDE + 500, 500) // high priority, same slot, pushed last
    h.push(10, 2 * Heap.RANK_STRIDE + 501, 501) // low priority: after the whole run
    h.verify()
    const tasks = drain(h).map((e) => e.task)
    expect(tasks[0]).toBe(500)
    expect(tasks[tasks.length - 1]).toBe(501)
    expect(tasks).toHaveLength(left + 2)
  })

  it("leaves the tree alone when too few entries are due", () => {
    const h = new Heap.TimerHeap(4, 8)
    for (let k = 0; k < 1000; k++) h.push(k, k, k)
    for (let k = 0; k < 100; k++) h.pop()
    h.prepare(110) // 10 of the 900 left are due: popping them is cheaper
    expect(h.sorted).toBe(0)
    expect(drain(h).map((e) => e.slot)).toEqual(Array.from({ length: 900 }, (_, k) => k + 100))
  })

  it("falls back to popping when a batch's keys do not fit 64 bits", () => {
    const h = new Heap.TimerHeap(4, 8)
    // Slots 2^45 apart and sequence numbers 2^20 apart: more than 53 bits of slot and sequence.
    const entries: Array<Entry> = []
    for (let k = 0; k < 200; k++) {
      const e = { slot: (k % 2) * 2 ** 45, order: k * 2 ** 20, task: k }
      entries.push(e)
      h.push(e.slot, e.order, e.task)
    }
    const out = takeWithHints(h, 2 ** 46, 20)
    expect(h.sorted).toBe(0)
    out.push(...drain(h))
    expect(out).toEqual(entries.sort(byKey))
  })

  it("falls back to popping when a due slot is not a whole ms", () => {
    const h = new Heap.TimerHeap(4, 8)
    const entries: Array<Entry> = []
    for (let k = 0; k < 200; k++) {
      // Fractions only between whole smallest and largest slots, so only the per-entry check sees them.
      const whole = k % 50
      const e = {
        slot: k % 3 === 0 && whole > 10 && whole < 40 ? whole + 0.5 : whole,
        order: k,
        task: k,
      }
      entries.push(e)
      h.push(e.slot, e.order, e.task)
    }
    const out = takeWithHints(h, 100, 20)
    expect(h.sorted).toBe(0)
    out.push(...drain(h))
    expect(out).toEqual(entries.sort(byKey))
  })

  it("counts the sorted run in its bytes and frees it once drained", () => {
    const h = new Heap.TimerHeap(4, 8)
    for (let k = 0; k < 400; k++) h.push(k % 50, k, k)
    const tree = h.byteLength
    let popped = 0
    while (h.sorted === 0 && popped < 100) {
      h.prepare(100)
      h.pop()
      popped++
    }
    // Every entry is due: after an eighth-ish of them were popped, the rest left the tree at once.
    expect(h.sorted).toBe(400 - popped)
    expect(popped).toBeLessThan(100)
    // The tree shrank to what is left in it; the run holds 8 bytes an entry.
    expect(h.byteLength).toBeGreaterThanOrEqual(h.sorted * 8)
    expect(h.byteLength).toBeLessThan(tree)
    drain(h)
    expect(h.byteLength).toBeLessThanOrEqual(tree)
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
