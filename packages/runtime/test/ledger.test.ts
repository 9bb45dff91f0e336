import { Kernel, type MissedRun, Rules, Task } from "@tickwork/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Ledger from "../src/Ledger.ts"

/** A `ran` record as the kernel makes it (Rules.record), of the task in `row` at `generation`. */
const ranRecord = (
  row: number,
  generation: number,
  at: number,
  options: {
    readonly outcome?: Task.Outcome
    readonly final?: boolean
    readonly named?: string
    readonly manual?: boolean
    readonly merged?: MissedRun.Dropped
    readonly dropped?: MissedRun.Dropped
    readonly pausedReason?: Task.PauseReason
  } = {},
): Task.RunRecord => {
  const final = options.final ?? false
  return Rules.record(
    {
      ...(options.manual === true ? { manual: true } : {}),
      id: (options.named ?? Kernel.formatId(row, generation)) as Task.TaskId,
      generation,
      slot: at,
      scheduledFor: at,
      startedAt: at + 1,
      attempt: 1,
      runNumber: at + 1,
      merged: options.merged,
    },
    options.outcome ?? Task.succeeded,
    at + 2,
    {
      state: final ? "done" : "scheduled",
      continuation: final ? "final" : "next",
      nextSlot: final ? undefined : at + 10,
      dropped: options.dropped,
      pausedReason: options.pausedReason,
    },
  )
}

const cancelled = (generation: number, at: number): Ledger.Cancelled => ({
  kind: "cancelled",
  id: "c" as Task.TaskId,
  generation,
  from: "scheduled",
  scheduledFor: at,
  interrupted: false,
  at,
})

describe("Ledger.Store", () => {
  it("gives back a run kept as columns exactly as it was added", () => {
    const store = new Ledger.Store(8, 10, 1000)
    const records = [ranRecord(3, 2, 0), ranRecord(3, 2, 10), ranRecord(3, 2, 20, { final: true })]
    for (const r of records) store.addRun(3, r, false)
    expect(store.get(3, 2)).toStrictEqual(records)
    expect(store.get(3, 1)).toEqual([])
    expect(store.get(4, 2)).toEqual([])
  })

  it("keeps a run with a value, a failure or a caller-given id as a copy of the object it was", () => {
    const store = new Ledger.Store(8, 10, 1000)
    const withValue = ranRecord(0, 1, 0, { outcome: { kind: "succeeded", value: 42 } })
    const failed = ranRecord(0, 1, 10, { outcome: Task.failed("boom") })
    const named = ranRecord(1, 1, 0, { named: "invoice" })
    // A value is kept when the task keeps results (here: within 64 bytes of JSON, SPEC §19.3).
    store.addRun(0, withValue, false, 64)
    store.addRun(0, failed, false)
    store.addRun(1, named, true)
    expect(store.get(0, 1)).toEqual([withValue, failed])
    expect(store.get(1, 1)).toEqual([named])
    // The scheduler hands over a buffer it refills for the next run: what was kept must not change.
    const buffer = Rules.makeRecordBuffer()
    Rules.recordInto(buffer, { ...failed, id: "#2.1" as Task.TaskId }, failed.outcome, 20, failed)
    store.addRun(2, buffer, false)
    Rules.recordInto(
      buffer,
      { ...withValue, id: "#3.1" as Task.TaskId },
      withValue.outcome,
      30,
      withValue,
    )
    expect(store.get(2, 1)).toEqual([{ ...failed, id: "#2.1", finishedAt: 20 }])
  })

  it("keeps what a record carries beyond a plain run: merged and dropped slots, a pause, a manual run", () => {
    // Each would be lost if it were kept as the numbers of a plain run (SPEC §7, §15, §19.1).
    const store = new Ledger.Store(8, 10, 1000)
    const slots = { first: 10, last: 30, count: 3, exact: true }
    const records = [
      ranRecord(0, 1, 0, { merged: slots }),
      ranRecord(0, 1, 40, { dropped: slots }),
      ranRecord(0, 1, 80, { pausedReason: "failures" }),
      ranRecord(0, 1, 120, { manual: true }),
    ]
    for (const r of records) store.addRun(0, r, false)
    expect(store.get(0, 1)).toStrictEqual(records)
  })

  it("keeps a run's value only within keepResult; a refused one is a success with its error (SPEC §19.3)", () => {
    const store = new Ledger.Store(8, 10, 1000)
    const value = { kind: "succeeded", value: "x".repeat(40) } as const
    // No keepResult: the run is kept as if it returned nothing.
    store.addRun(0, ranRecord(0, 1, 0, { outcome: value }), false)
    // Over the bound: the same, with the reason the value was not kept.
    store.addRun(0, ranRecord(0, 1, 10, { outcome: value }), false, 8)
    // Within it: kept.
    store.addRun(0, ranRecord(0, 1, 20, { outcome: value }), false, 64)
    const got = store.get(0, 1)
    expect(got[0]).toStrictEqual(ranRecord(0, 1, 0))
    expect(got[1]).toMatchObject({ ...ranRecord(0, 1, 10), outcome: Task.succeeded })
    expect(got[1]).toHaveProperty("resultError._tag", "ResultTooLarge")
    expect(got[2]).toStrictEqual(ranRecord(0, 1, 20, { outcome: value }))
    expect(got).toHaveLength(3)
  })

  it("a run that ends its task retires it, however the run is kept", () => {
    // finalTasks = 0: a final task's history is dropped as soon as it ends; a live one's stays.
    const value = { kind: "succeeded", value: "x".repeat(40) } as const
    const ways: ReadonlyArray<(store: Ledger.Store, final: boolean) => void> = [
      (store, final) => store.addRun(0, ranRecord(0, 1, 0, { final }), false),
      (store, final) => store.addRun(0, ranRecord(0, 1, 0, { final, outcome: value }), false),
      (store, final) => store.addRun(0, ranRecord(0, 1, 0, { final, outcome: value }), false, 8),
      (store, final) => store.addRun(0, ranRecord(0, 1, 0, { final, outcome: value }), false, 64),
      (store, final) => store.addRun(0, ranRecord(0, 1, 0, { final, named: "n" }), true),
    ]
    for (const [k, add] of ways.entries()) {
      const live = new Ledger.Store(8, 0, 1000)
      add(live, false)
      const ended = new Ledger.Store(8, 0, 1000)
      add(ended, true)
      expect([k, live.get(0, 1).length, ended.get(0, 1).length]).toEqual([k, 1, 0])
    }
  })

  it("keeps nothing when perTask or capacity is 0, nor for a task with no row (-1)", () => {
    const value = { kind: "succeeded", value: 1 } as const
    const fill = (store: Ledger.Store, row: number) => {
      store.addRun(row, ranRecord(row, 1, 0), false)
      store.addRun(row, ranRecord(row, 1, 10, { outcome: value }), false)
      store.addRun(row, ranRecord(row, 1, 20, { outcome: value }), false, 1)
      store.addRun(row, ranRecord(row, 1, 30, { outcome: value }), false, 64)
      store.addRun(row, ranRecord(row, 1, 40, { outcome: Task.failed("boom") }), false)
      store.add(row, cancelled(1, 50), false)
    }
    for (const store of [new Ledger.Store(0, 10, 1000), new Ledger.Store(8, 10, 0)]) {
      expect(store.enabled).toBe(false)
      fill(store, 0)
      expect(store.get(0, 1)).toEqual([])
    }
    // A record of no row takes no room from the others: 2 of capacity 2 stay after 12 of row -1.
    const store = new Ledger.Store(8, 10, 2)
    expect(store.enabled).toBe(true)
    store.addRun(0, ranRecord(0, 1, 0), false)
    store.addRun(0, ranRecord(0, 1, 10), false)
    fill(store, -1)
    fill(store, -1)
    expect(store.get(-1, 1)).toEqual([])
    expect(store.get(0, 1)).toStrictEqual([ranRecord(0, 1, 0), ranRecord(0, 1, 10)])
  })

  it("holds a long history of many tasks in adjacent rows, past every growth of its arrays", () => {
    // 200 tasks in rows 0..199, 5 runs each, 3 kept per task, 70 final ones kept: the per-row
    // numbers and the final-task ring both grow several times; no record of one row leaks
    // into its neighbour's.
    const store = new Ledger.Store(3, 70, Number.POSITIVE_INFINITY, 4)
    for (let k = 0; k < 5; k++)
      for (let row = 0; row < 200; row++)
        store.addRun(row, ranRecord(row, 1, k * 1000 + row, { final: k === 4 }), false)
    for (let row = 0; row < 200; row++) {
      const kept =
        row < 130 ? [] : [2, 3, 4].map((k) => ranRecord(row, 1, k * 1000 + row, { final: k === 4 }))
      expect(store.get(row, 1)).toStrictEqual(kept)
    }
  })

  it("starts a new history when a row is given to a new task, keeping the earlier one apart", () => {
    const store = new Ledger.Store(8, 10, 1000)
    const first = ranRecord(5, 1, 0, { final: true })
    store.addRun(5, first, false)
    store.add(5, cancelled(2, 7), true)
    expect(store.get(5, 1)).toEqual([first])
    expect(store.get(5, 2)).toEqual([cancelled(2, 7)])
  })

  it("holds capacity records before it drops one, and then the oldest of all", () => {
    const store = new Ledger.Store(16, 10, 8, 2)
    const records = Array.from({ length: 9 }, (_, k) => ranRecord(0, 1, k * 10))
    for (const r of records.slice(0, 8)) store.addRun(0, r, false)
    expect(store.get(0, 1)).toStrictEqual(records.slice(0, 8))
    store.addRun(0, records[8] as Task.RunRecord, false)
    expect(store.get(0, 1)).toStrictEqual(records.slice(1))
  })

  it("compacts a full ring that holds three quarters of it, dropping nothing", () => {
    // Capacity 8, two per task: rows 2 and 3 each drop their first record, so the full ring holds
    // 6 of 8. The next record compacts it (6 × 4 <= 8 × 3) instead of dropping row 0's oldest.
    const store = new Ledger.Store(2, 10, 8, 8)
    for (const row of [0, 1, 2, 2, 2, 3, 3, 3]) store.addRun(row, ranRecord(row, 1, row), false)
    store.addRun(4, ranRecord(4, 1, 4), false)
    expect([0, 1, 2, 3, 4].map((row) => store.get(row, 1).length)).toEqual([1, 1, 2, 2, 1])
  })

  it("holds what a model of its bounds holds, for any sequence of records", () => {
    // The model: every record added per (row, generation), in order. Without a capacity bound the
    // store must hold exactly the last perTask records of each live task and of the last
    // finalTasks tasks to end; with one, a suffix of that, and at most capacity records in all.
    // The ring drops a record for capacity only while more than three quarters of it are held,
    // and then its oldest: so of those, the ones among the last ⌊capacity·3/4⌋ added all stay.
    const op = fc.record({
      // Adjacent rows (a row's numbers sit next to its neighbour's) and rows far apart.
      row: fc.integer({ min: 0, max: 12 }).map((r) => (r < 8 ? r : r * 300)),
      newTask: fc.boolean(),
      final: fc.boolean(),
      columns: fc.boolean(),
    })
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 400, size: "max" }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 4 }),
        fc.constantFrom(3, 8, 17, 64, Number.POSITIVE_INFINITY),
        fc.integer({ min: 1, max: 8 }),
        (ops, perTask, finalTasks, capacity, initialSize) => {
          // A small first ring, so that growing and compacting it are both exercised.
          const store = new Ledger.Store(perTask, finalTasks, capacity, initialSize)
          const generation = new Map<number, number>()
          const ended = new Set<number>()
          const added = new Map<string, Array<Ledger.Occurrence>>()
          const order: Array<Ledger.Occurrence> = []
          const finals: Array<string> = []
          let at = 0
          for (const o of ops) {
            let g = generation.get(o.row) ?? 1
            if (o.newTask || ended.has(o.row)) {
              g++
              ended.delete(o.row)
            }
            generation.set(o.row, g)
            at += 1
            const record = o.columns
              ? ranRecord(o.row, g, at, { final: o.final })
              : ranRecord(o.row, g, at, { final: o.final, outcome: Task.failed(at) })
            store.addRun(o.row, record, false)
            const key = `${o.row}/${g}`
            added.set(key, [...(added.get(key) ?? []), record])
            order.push(record)
            if (o.final) {
              ended.add(o.row)
              finals.push(key)
            }
          }
          const recent = new Set(
            capacity === Number.POSITIVE_INFINITY
              ? order
              : order.slice(Math.max(0, order.length - Math.floor((capacity * 3) / 4))),
          )
          const retained = new Set(finals.slice(Math.max(0, finals.length - finalTasks)))
          const evicted = (key: string) => finals.includes(key) && !retained.has(key)
          for (const [row, g] of generation) {
            const got = store.get(row, g)
            const all = added.get(`${row}/${g}`) ?? []
            const kept = evicted(`${row}/${g}`) ? [] : all.slice(-perTask)
            expect(got).toStrictEqual(kept.slice(kept.length - got.length))
            expect(got.length).toBeGreaterThanOrEqual(kept.filter((r) => recent.has(r)).length)
          }
          // Earlier generations too: a suffix of their last perTask; none once evicted.
          let held = 0
          for (const [key, all] of added) {
            const [row, g] = key.split("/").map(Number) as [number, number]
            const got = store.get(row, g)
            held += got.length
            const kept = evicted(key) ? [] : all.slice(-perTask)
            expect(got).toStrictEqual(kept.slice(kept.length - got.length))
          }
          expect(held).toBeLessThanOrEqual(capacity)
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe("generations of an id (SPEC §27.4)", () => {
  it("each keeps its own records: a later generation's do not replace an earlier one's", () => {
    const store = new Ledger.Store(4, 10, 100)
    store.addRun(3, ranRecord(3, 1, 10, { named: "nightly" }), true)
    store.addRun(3, ranRecord(3, 1, 20, { named: "nightly", final: true }), true)
    store.addRun(3, ranRecord(3, 2, 30, { named: "nightly" }), true)
    expect(store.get(3, 1).map((o) => (o.kind === "ran" ? o.startedAt : -1))).toEqual([11, 21])
    expect(store.get(3, 2).map((o) => (o.kind === "ran" ? o.startedAt : -1))).toEqual([31])
    expect(store.get(3, 3)).toEqual([])
  })

  it("earlier generations are bounded: by finalTasks, and with the ring by capacity", () => {
    const byFinal = new Ledger.Store(4, 2, 100)
    for (let g = 1; g <= 5; g++) byFinal.addRun(0, ranRecord(0, g, g * 10, { final: true }), false)
    // Every generation ended: the two that ended last (4, the current 5) are kept.
    expect([1, 2, 3, 4, 5].map((g) => byFinal.get(0, g).length)).toEqual([0, 0, 0, 1, 1])
    const byCapacity = new Ledger.Store(4, 10, 3)
    for (let k = 0; k < 2; k++) byCapacity.addRun(0, ranRecord(0, 1, k, {}), false)
    byCapacity.addRun(0, ranRecord(0, 1, 2, { final: true }), false)
    byCapacity.addRun(0, ranRecord(0, 2, 3, {}), false)
    // 3 records of generation 1 and 1 of generation 2 pass a capacity of 3: the earlier leave.
    expect(byCapacity.get(0, 1)).toEqual([])
    expect(byCapacity.get(0, 2).length).toBe(1)
  })
})

describe("earlier generations at their bounds (SPEC §27.4)", () => {
  it("a replaced task's records stay while the earlier ones number at most finalTasks", () => {
    // Generation 1 is replaced (not ended) by 2, then 2 by 3: with finalTasks = 1 only the one
    // replaced last is kept apart.
    const store = new Ledger.Store(4, 1, 100)
    store.addRun(0, ranRecord(0, 1, 0), false)
    store.addRun(0, ranRecord(0, 2, 10), false)
    expect(store.get(0, 1)).toStrictEqual([ranRecord(0, 1, 0)])
    store.addRun(0, ranRecord(0, 3, 20), false)
    expect([1, 2, 3].map((g) => store.get(0, g).length)).toEqual([0, 1, 1])
  })

  it("they stay while, with the ring's records, they fill capacity exactly", () => {
    const store = new Ledger.Store(4, 10, 3)
    store.addRun(0, ranRecord(0, 1, 0), false)
    store.addRun(0, ranRecord(0, 1, 10, { final: true }), false)
    store.addRun(0, ranRecord(0, 2, 20), false)
    expect(store.get(0, 1)).toHaveLength(2)
    expect(store.get(0, 2)).toHaveLength(1)
    // A fourth record passes capacity: the earlier generation leaves, the ring's records stay.
    store.addRun(1, ranRecord(1, 1, 30), false)
    expect([store.get(0, 1).length, store.get(0, 2).length, store.get(1, 1).length]).toEqual([
      0, 1, 1,
    ])
  })

  it("one forgotten by the final-task ring gives its room back", () => {
    // Row 0's generation 1 (2 records) is forgotten when generation 2 ends (finalTasks = 1).
    // Row 1's replaced generation then fits: 1 earlier record + 3 in the ring = capacity 4.
    const store = new Ledger.Store(4, 1, 4)
    store.addRun(0, ranRecord(0, 1, 0), false)
    store.addRun(0, ranRecord(0, 1, 10, { final: true }), false)
    store.addRun(0, ranRecord(0, 2, 20), false)
    store.addRun(0, ranRecord(0, 2, 30, { final: true }), false)
    expect(store.get(0, 1)).toEqual([])
    store.addRun(1, ranRecord(1, 1, 40), false)
    store.addRun(1, ranRecord(1, 2, 50), false)
    expect(store.get(1, 1)).toStrictEqual([ranRecord(1, 1, 40)])
    expect(store.get(0, 2)).toHaveLength(2)
  })

  it("as many leave as make room for the next record, earliest first, and no more", () => {
    // Rows 0 and 1 each go to a second generation: their first ones (1 record each) are kept
    // apart, and with the ring's 2 records they fill capacity 4. One more record makes room by
    // dropping the earliest (row 0's) only.
    const store = new Ledger.Store(4, 10, 4)
    store.addRun(0, ranRecord(0, 1, 0), false)
    store.addRun(1, ranRecord(1, 1, 1), false)
    store.addRun(0, ranRecord(0, 2, 2), false)
    store.addRun(1, ranRecord(1, 2, 3), false)
    expect([store.get(0, 1).length, store.get(1, 1).length]).toEqual([1, 1])
    store.addRun(0, ranRecord(0, 2, 4), false)
    expect([store.get(0, 1).length, store.get(1, 1).length]).toEqual([0, 1])
    expect([store.get(0, 2).length, store.get(1, 2).length]).toEqual([2, 1])
  })

  it("a final task evicted after its row went to a new task leaves that task's records alone", () => {
    const store = new Ledger.Store(4, 1, 100)
    store.addRun(0, ranRecord(0, 1, 0, { final: true }), false)
    store.addRun(0, ranRecord(0, 2, 10), false)
    // Row 1's task ends: row 0's first task is the oldest of two final ones, past finalTasks.
    store.addRun(1, ranRecord(1, 1, 20, { final: true }), false)
    expect(store.get(0, 1)).toEqual([])
    expect(store.get(0, 2)).toStrictEqual([ranRecord(0, 2, 10)])
  })
})

describe("Ledger.missed", () => {
  // A run of slot 0 that started at `startedAt`, ended at 100 and dropped `first`..`last`.
  const dropping = (startedAt: number, first: number, last: number) =>
    Ledger.missed(
      { ...ranRecord(0, 1, 0), startedAt, finishedAt: 100, nextSlot: 110 },
      { first, last, count: (last - first) / 10 + 1, exact: true },
    )

  it("is coalesced when the run taking their place is already due, else skipped (SPEC §7)", () => {
    const at = (nextSlot: number | undefined) =>
      Ledger.missed(
        { ...ranRecord(0, 1, 0), startedAt: 50, finishedAt: 100, nextSlot },
        { first: 10, last: 40, count: 4, exact: true },
      )
    expect(at(40).kind).toBe("coalesced")
    expect(at(100).kind).toBe("coalesced")
    expect(at(101).kind).toBe("skipped")
    expect(at(undefined).kind).toBe("skipped")
    expect(at(40)).toStrictEqual({
      kind: "coalesced",
      id: "#0.1",
      generation: 1,
      first: 10,
      last: 40,
      count: 4,
      exact: true,
      cause: "late",
      nextSlot: 40,
      at: 100,
    })
  })

  it("names why slots were missed: late to start, overlapping the run, or both", () => {
    // All passed before the run started (it waited for a worker): late.
    expect(dropping(50, 10, 40).cause).toBe("late")
    // A slot exactly at the start passed while the run waited, not while it ran: still late.
    expect(dropping(50, 10, 50).cause).toBe("late")
    expect(dropping(50, 50, 50).cause).toBe("late")
    // All passed while the run ran: overlap.
    expect(dropping(50, 60, 90).cause).toBe("overlap")
    // Some before the start, some after: both.
    expect(dropping(50, 10, 90).cause).toBe("late-and-overlap")
    expect(dropping(50, 50, 60).cause).toBe("late-and-overlap")
  })
})

describe("Ledger.fromRun", () => {
  it("gives the slots merged into a run before it, the run, then the slots it dropped", () => {
    const merged = { first: 10, last: 20, count: 2, exact: false }
    const dropped = { first: 40, last: 60, count: 3, exact: true }
    const record = { ...ranRecord(0, 1, 30, { merged, dropped }), nextSlot: 70 }
    expect(Ledger.fromRun(record)).toStrictEqual([
      {
        kind: "coalesced",
        id: "#0.1",
        generation: 1,
        first: 10,
        last: 20,
        count: 2,
        exact: false,
        cause: "late",
        nextSlot: 30,
        at: 31,
      },
      record,
      Ledger.missed(record, dropped),
    ])
    expect(Ledger.missed(record, dropped)).toMatchObject({ kind: "skipped", cause: "overlap" })
    const plain = ranRecord(0, 1, 30)
    expect(Ledger.fromRun(plain)).toStrictEqual([plain])
  })
})

describe("Ledger.Store after a compaction that keeps the ring's oldest record", () => {
  // Capacity 8 in a ring of 8, four records per task. Row 0's one record takes the ring's first
  // position; row 1's seven drop their first three, so the full ring holds 5 of 8 and the next
  // record compacts it, moving row 0's record (still held) to the front.
  const fill = (): Ledger.Store => {
    const store = new Ledger.Store(4, 10, 8, 8)
    store.addRun(0, ranRecord(0, 1, 0), false)
    for (let k = 0; k < 7; k++) store.addRun(1, ranRecord(1, 1, k * 10), false)
    return store
  }

  it("holds capacity records again before it drops one, each record moved once", () => {
    const store = fill()
    const row2 = [0, 10, 20].map((at) => ranRecord(2, 1, at))
    for (const r of row2) store.addRun(2, r, false)
    // 1 + 4 + 3 = 8 records: the capacity, so none of them was dropped.
    expect(store.get(0, 1)).toStrictEqual([ranRecord(0, 1, 0)])
    expect(store.get(1, 1)).toStrictEqual([30, 40, 50, 60].map((at) => ranRecord(1, 1, at)))
    expect(store.get(2, 1)).toStrictEqual(row2)
  })

  it("then drops the oldest record of all, row 0's, and nothing else", () => {
    const store = fill()
    for (const at of [0, 10, 20, 30]) store.addRun(2, ranRecord(2, 1, at), false)
    expect([0, 1, 2].map((row) => store.get(row, 1).length)).toEqual([0, 4, 4])
  })
})
