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

/** Test-only access to the sorted run and the top's source, to corrupt them on purpose. */
const internals = (h: Heap.TimerHeap) =>
  h as unknown as { run: BigUint64Array; runHead: number; fromRun: boolean }

/** Pops with the batch hint until a batch is taken (at most `max` pops); returns the pops. */
const popUntilBatch = (h: Heap.TimerHeap, limit: number, max: number): number => {
  let popped = 0
  while (h.sorted === 0 && popped < max) {
    h.prepare(limit)
    if (h.sorted > 0) break
    h.pop()
    popped++
  }
  return popped
}

describe("compare (SPEC §4)", () => {
  it("earlier slot first; equal slots, higher priority (lower rank); then the earlier push", () => {
    const keys = [
      { slot: 2, rank: 0, seq: 0 },
      { slot: 1, rank: 2, seq: 1 },
      { slot: 1, rank: 0, seq: 7 },
      { slot: 1, rank: 0, seq: 3 },
      { slot: 1, rank: 1, seq: 2 },
    ]
    expect([...keys].sort(Heap.compare)).toEqual([keys[3], keys[2], keys[4], keys[1], keys[0]])
    expect(Heap.compare(keys[0] as Heap.RunKey, keys[0] as Heap.RunKey)).toBe(0)
    expect(Heap.compare({ slot: 5, rank: 2, seq: 9 }, { slot: 6, rank: 0, seq: 0 })).toBeLessThan(0)
    expect(
      Heap.compare({ slot: 6, rank: 0, seq: 0 }, { slot: 5, rank: 2, seq: 9 }),
    ).toBeGreaterThan(0)
  })

  it("is the order the heap pops its packed keys in", () => {
    fc.assert(
      fc.property(entriesArb(100), (entries) => {
        const h = new Heap.TimerHeap()
        for (const e of entries) h.push(e.slot, e.order, e.task)
        const key = (e: Entry): Heap.RunKey => ({
          slot: e.slot,
          rank: Math.floor(e.order / Heap.RANK_STRIDE),
          seq: e.order % Heap.RANK_STRIDE,
        })
        expect(drain(h)).toEqual([...entries].sort((a, b) => Heap.compare(key(a), key(b))))
      }),
      { numRuns: 100 },
    )
  })
})

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

  it("a new heap has room for 64 entries, or the capacity asked; it grows only when full, doubling", () => {
    expect(new Heap.TimerHeap().capacity).toBe(64)
    expect(new Heap.TimerHeap(4).capacity).toBe(64)
    expect(new Heap.TimerHeap(1000).capacity).toBe(1000)
    const h = new Heap.TimerHeap()
    for (let i = 0; i < 64; i++) h.push(i, i, i)
    expect(h.capacity).toBe(64)
    h.push(64, 64, 64)
    expect(h.capacity).toBe(128)
    expect(h.byteLength).toBe(128 * 20)
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

  it("shrinks to twice what is left when at most a quarter of its room is live, never below 64", () => {
    const keepFirst = (kept: number) => {
      const h = new Heap.TimerHeap()
      for (let i = 0; i < 1024; i++) h.push(i, i, i)
      expect(h.capacity).toBe(1024)
      h.compact((task) => task < kept)
      expect(drain(h).map((e) => e.task)).toEqual(Array.from({ length: kept }, (_, i) => i))
      return h.capacity
    }
    expect(keepFirst(256)).toBe(512)
    expect(keepFirst(257)).toBe(1024)
    expect(keepFirst(10)).toBe(64)
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

describe("batches: when one is taken, and memory", () => {
  it("takes no batch before `batchAfter` pops, nor of a tree smaller than that", () => {
    const h = new Heap.TimerHeap(4, 50)
    for (let k = 0; k < 100; k++) h.push(k % 10, k, k)
    // 50 pops with the hint take nothing out; the hint after them takes the 50 left (all due).
    expect(popUntilBatch(h, 100, 100)).toBe(50)
    expect(h.sorted).toBe(50)
    const small = new Heap.TimerHeap(4, 50)
    for (let k = 0; k < 99; k++) small.push(k % 10, k, k)
    // After 50 pops, 49 are left: fewer than batchAfter, popped one by one.
    expect(popUntilBatch(small, 100, 99)).toBe(99)
  })

  it("tries a batch again only after popping a sixteenth of the tree since the last try", () => {
    const h = new Heap.TimerHeap(4, 8)
    for (let k = 0; k < 1700; k++) h.push(k, k, k)
    // After p pops 1700 - p are left: a sixteenth is popped at p = 100 (16 × 100 = 1600 left).
    expect(popUntilBatch(h, 2000, 1700)).toBe(100)
    expect(h.sorted).toBe(1600)
  })

  it("a batch that leaves most of the tree keeps its arrays; one that leaves little shrinks them", () => {
    const h = new Heap.TimerHeap(4, 8)
    for (let k = 0; k < 1000; k++) h.push(k < 500 ? k : 10_000 + k, k, k)
    expect(h.capacity).toBe(1024)
    popUntilBatch(h, 499, 500)
    expect(h.sorted).toBeGreaterThan(0)
    // The tree kept its 1024 entries of room; the run adds 8 bytes for each entry it took.
    const run = h.sorted
    expect(h.byteLength).toBe(1024 * 20 + run * 8)
    // capacity counts the run in 20-byte entries.
    expect(h.capacity).toBe(Math.ceil(h.byteLength / 20))

    const g = new Heap.TimerHeap(4, 8)
    const entries: Array<Entry> = []
    for (let k = 0; k < 1500; k++) {
      const e = { slot: k < 1200 ? k : 10_000 + k, order: k, task: k }
      entries.push(e)
      g.push(e.slot, e.order, e.task)
    }
    const popped = popUntilBatch(g, 1199, 1200)
    expect(g.sorted).toBe(1200 - popped)
    // 300 left in the tree's room of 2048: shrunk to 600 entries, plus the run.
    expect(g.byteLength).toBe(600 * 20 + g.sorted * 8)
    expect(drain(g)).toEqual(entries.slice(popped))
  })

  it("draining the run frees it while the tree still has entries", () => {
    const h = new Heap.TimerHeap(4, 8)
    for (let k = 0; k < 1000; k++) h.push(k < 500 ? k : 10_000 + k, k, k)
    popUntilBatch(h, 499, 500)
    const left = h.sorted
    for (let k = 0; k < left; k++) h.pop()
    expect(h.sorted).toBe(0)
    expect(h.byteLength).toBe(h.capacity * 20)
    expect(h.topSlot()).toBe(10_500)
  })

  it("compacting the whole run away frees it", () => {
    const h = new Heap.TimerHeap(4, 8)
    for (let k = 0; k < 1000; k++) h.push(k < 500 ? k : 10_000 + k, k, k)
    popUntilBatch(h, 499, 500)
    expect(h.compact((_task, order) => order >= 500)).toBeGreaterThan(0)
    expect(h.sorted).toBe(0)
    expect(h.byteLength).toBe(h.capacity * 20)
    expect(drain(h).map((e) => e.task)).toEqual(Array.from({ length: 500 }, (_, k) => 500 + k))
  })

  it("a shift after a batch puts the run back in the tree and keeps every entry", () => {
    const h = new Heap.TimerHeap(4, 8)
    for (let k = 0; k < 1000; k++) h.push(k, k, k)
    const out = takeWithHints(h, 2000, 100)
    expect(h.sorted).toBe(900)
    h.shift(5, () => true)
    expect(h.sorted).toBe(0)
    h.verify()
    expect([...out, ...drain(h)].map((e) => e.slot)).toEqual(
      Array.from({ length: 1000 }, (_, k) => (k < 100 ? k : k + 5)),
    )
  })

  it("forEach visits the run's entries too", () => {
    const h = new Heap.TimerHeap(4, 8)
    const entries: Array<Entry> = []
    for (let k = 0; k < 400; k++) {
      const e = {
        slot: k < 300 ? k % 50 : 1000 + k,
        order: (k % 3) * Heap.RANK_STRIDE + k,
        task: k,
      }
      entries.push(e)
      h.push(e.slot, e.order, e.task)
    }
    const out = takeWithHints(h, 100, 40)
    expect(h.sorted).toBeGreaterThan(0)
    const seen: Array<Entry> = []
    h.forEach((slot, order, task) => {
      seen.push({ slot, order, task })
    })
    const taken = new Set(out.map((e) => e.task))
    expect(seen.sort(byKey)).toEqual(entries.filter((e) => !taken.has(e.task)).sort(byKey))
  })

  it("batches due entries spread over days, with high bits in both words, in order", () => {
    for (const mixed of [true, false]) {
      const h = new Heap.TimerHeap(4, 8)
      const entries: Array<Entry> = []
      for (let k = 0; k < 600; k++) {
        // Slots 2^18 ms (~4.4 minutes) apart over ~1.8 days; tasks up to ~600,000.
        const rank = mixed ? k % 3 : 2
        const e = {
          slot: ((k * 7919) % 600) * 2 ** 18,
          order: rank * Heap.RANK_STRIDE + k,
          task: k * 1000,
        }
        entries.push(e)
        h.push(e.slot, e.order, e.task)
      }
      const out = takeWithHints(h, 2 ** 40, 50)
      // The keys fit 64 bits: the rest left the tree as one sorted run.
      expect(h.sorted).toBe(550)
      h.verify()
      out.push(...drain(h))
      expect(out).toEqual(entries.sort(byKey))
    }
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

  /** A heap with a sorted run of 900 entries and 100 later ones in the tree. */
  const batched = () => {
    const h = new Heap.TimerHeap(4, 8)
    for (let k = 0; k < 1100; k++) h.push(k < 1000 ? k : 5000 + k, k, k)
    takeWithHints(h, 999, 100)
    expect(h.sorted).toBe(900)
    h.verify()
    return h
  }

  it("catches a sorted run out of order, or with an entry twice", () => {
    const h = batched()
    const { run, runHead } = internals(h)
    const a = run[runHead + 3] as bigint
    run[runHead + 3] = run[runHead + 4] as bigint
    run[runHead + 4] = a
    expect(() => h.verify()).toThrow(/sorted run out of order at/)
    const d = batched()
    const inner = internals(d)
    inner.run[inner.runHead + 6] = inner.run[inner.runHead + 5] as bigint
    expect(() => d.verify()).toThrow(/sorted run out of order at/)
  })

  it("catches a top that is not the smallest entry, or that points into an empty run", () => {
    const h = batched()
    internals(h).fromRun = false
    expect(() => h.verify()).toThrow(/heap top is not the smallest entry/)
    const plain = new Heap.TimerHeap()
    plain.push(1, 0, 0)
    internals(plain).fromRun = true
    expect(() => plain.verify()).toThrow(/heap top points into an empty sorted run/)
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
