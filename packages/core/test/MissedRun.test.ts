import { Cron, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { MissedRun, Schedule } from "../src/index.ts"

const { next, periodic } = MissedRun

describe("models", () => {
  it("lists the three policies, catch-up first", () => {
    expect(MissedRun.policies).toEqual(["catch-up", "coalesce", "skip"])
  })
})

describe("constructors", () => {
  describe("periodic", () => {
    const grid = periodic(5, 10) // 5, 15, 25, …

    it("after(t) is the first grid slot strictly after t", () => {
      expect(grid.after(-100)).toBe(5)
      expect(grid.after(4)).toBe(5)
      expect(grid.after(5)).toBe(15)
      expect(grid.after(14)).toBe(15)
      expect(grid.after(15)).toBe(25)
    })

    it("atOrBefore(t) is the latest grid slot <= t", () => {
      expect(grid.atOrBefore(4)).toBeUndefined()
      expect(grid.atOrBefore(5)).toBe(5)
      expect(grid.atOrBefore(24)).toBe(15)
      expect(grid.atOrBefore(25)).toBe(25)
    })

    it("count(from, to) counts the grid slots in [from, to] exactly", () => {
      expect(grid.count(15, 45, 0)).toBe(4)
      expect(grid.count(15, 15, 0)).toBe(1)
      expect(grid.count(25, 15, 0)).toBe(0)
      // more than one period backwards: a plain difference of the slot indexes would be negative
      expect(grid.count(45, 15, 0)).toBe(0)
      expect(grid.countsExactly).toBe(true)
    })

    it("ends before passing 2^53-1", () => {
      const max = Number.MAX_SAFE_INTEGER
      expect(periodic(max - 5, 10).after(max - 5)).toBeUndefined()
    })

    it("is exact for large origins and periods (checked against BigInt arithmetic)", () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 2 ** 52 }),
          fc.integer({ min: 1, max: 2 ** 40 }),
          fc.integer({ min: 0, max: 2 ** 51 }),
          (origin, period, offset) => {
            const t = origin + offset
            const g = periodic(origin, period)
            const k = (BigInt(t) - BigInt(origin)) / BigInt(period)
            const latest = BigInt(origin) + k * BigInt(period)
            expect(g.atOrBefore(t)).toBe(Number(latest))
            const following = latest + BigInt(period)
            expect(g.after(t)).toBe(
              following > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(following),
            )
          },
        ),
        { numRuns: 500 },
      )
    })
  })

  describe("cron", () => {
    const quarter = MissedRun.cron(Result.getOrThrow(Cron.parse("*/15 * * * *", "UTC")))
    const at = (iso: string) => Date.parse(iso)

    it("after, atOrBefore and count follow the expression's matches", () => {
      expect(quarter.after(at("2026-01-01T10:00:00Z"))).toBe(at("2026-01-01T10:15:00Z"))
      expect(quarter.after(at("2026-01-01T10:07:30.500Z"))).toBe(at("2026-01-01T10:15:00Z"))
      expect(quarter.atOrBefore(at("2026-01-01T10:15:00Z"))).toBe(at("2026-01-01T10:15:00Z"))
      expect(quarter.atOrBefore(at("2026-01-01T10:14:59.999Z"))).toBe(at("2026-01-01T10:00:00Z"))
      expect(quarter.count(at("2026-01-01T10:00:00Z"), at("2026-01-01T11:00:00Z"), 100)).toBe(5)
      expect(quarter.countsExactly).toBe(false)
    })

    it("a grid that can never match has no next slot", () => {
      const never = MissedRun.cron(Result.getOrThrow(Cron.parse("0 0 30 2 *", "UTC")))
      expect(never.after(0)).toBeUndefined()
      expect(never.count(0, 1e12, 10)).toBe(1) // only `from` itself, then the grid ends
    })
  })
})

describe("combinators", () => {
  describe("next: SPEC §3 (due 0, period 10)", () => {
    const grid = periodic(0, 10)

    // grid:      0    10    20    30    40
    // run:       [slot 0 ...... ended at 35]
    // catch-up:            10,20,30 run back to back from 35, then 40   (nothing dropped)
    // coalesce:                     30 runs once (for 10, 20, 30), then 40  (10, 20 dropped)
    // skip:                               next is 40                     (10, 20, 30 dropped)
    it("repeats the module's timeline for a run of slot 0 that ended at 35", () => {
      const chain = (policy: MissedRun.MissedRunPolicy) => {
        const out: Array<number> = []
        let slot = 0
        for (;;) {
          const n = next(policy, grid, slot, 35)
          if (n === undefined) break
          out.push(n.slot)
          if (n.slot > 35) break // the first slot in the future is where the chain waits
          slot = n.slot
        }
        return out
      }
      expect(chain("catch-up")).toEqual([10, 20, 30, 40])
      expect(chain("coalesce")).toEqual([30, 40])
      expect(chain("skip")).toEqual([40])
      expect(next("coalesce", grid, 0, 35)?.dropped).toEqual({
        first: 10,
        last: 20,
        count: 2,
        exact: true,
      })
      expect(next("skip", grid, 0, 35)?.dropped).toEqual({
        first: 10,
        last: 30,
        count: 3,
        exact: true,
      })
      expect(next("catch-up", grid, 0, 35)?.dropped).toBeUndefined()
    })

    it("skip: finished at 35 -> 40; finished at 20 -> 30 (slot 20 itself is missed)", () => {
      expect(next("skip", grid, 0, 35)?.slot).toBe(40)
      expect(next("skip", grid, 0, 20)?.slot).toBe(30)
      expect(next("skip", grid, 0, 20)?.dropped).toMatchObject({ first: 10, last: 20, count: 2 })
    })

    it("a zero-length run at its own slot misses nothing, under every policy", () => {
      for (const policy of MissedRun.policies) {
        expect(next(policy, grid, 10, 10)).toEqual({ slot: 20, dropped: undefined })
        expect(next(policy, grid, 10, 19)).toEqual({ slot: 20, dropped: undefined })
      }
    })

    it("coalesce with exactly one missed slot runs it and drops nothing", () => {
      expect(next("coalesce", grid, 0, 10)).toEqual({ slot: 10, dropped: undefined })
      expect(next("coalesce", grid, 0, 19)).toEqual({ slot: 10, dropped: undefined })
    })

    it("returns undefined when the grid has ended", () => {
      const max = Number.MAX_SAFE_INTEGER
      const g = periodic(max - 15, 10) // max-15, max-5, then past 2^53-1
      for (const policy of MissedRun.policies) {
        expect(next(policy, g, max - 5, max)).toBeUndefined()
      }
      expect(next("skip", g, max - 15, max - 2)).toBeUndefined()
    })
  })

  it("on any fixed-rate grid, every policy lands on the grid as SPEC §3 describes", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 0, max: 5000 }),
        (origin, period, k, late) => {
          const grid = periodic(origin, period)
          const slot = origin + k * period
          const now = slot + late
          const nominal = slot + period
          const onGrid = (s: number) => (s - origin) % period === 0
          const catchUp = next("catch-up", grid, slot, now)
          expect(catchUp).toEqual({ slot: nominal, dropped: undefined })
          const skip = next("skip", grid, slot, now) as MissedRun.Next
          const coalesce = next("coalesce", grid, slot, now) as MissedRun.Next
          expect(onGrid(skip.slot) && onGrid(coalesce.slot)).toBe(true)
          if (nominal > now) {
            expect(skip).toEqual({ slot: nominal, dropped: undefined })
            expect(coalesce).toEqual({ slot: nominal, dropped: undefined })
          } else {
            // skip: the first grid slot strictly after now; all of nominal..<=now dropped.
            expect(skip.slot).toBeGreaterThan(now)
            expect(skip.slot - period).toBeLessThanOrEqual(now)
            expect(skip.dropped?.count).toBe((skip.slot - nominal) / period)
            // coalesce: the latest missed slot, standing for the ones before it.
            expect(coalesce.slot).toBeLessThanOrEqual(now)
            expect(coalesce.slot + period).toBeGreaterThan(now)
            expect(coalesce.dropped?.count ?? 0).toBe((coalesce.slot - nominal) / period)
          }
        },
      ),
      { numRuns: 1000 },
    )
  })

  it("cron counts of dropped slots stop at COUNT_LIMIT and say they are inexact", () => {
    const everySecond = MissedRun.cron(Result.getOrThrow(Cron.parse("* * * * * *", "UTC")))
    const n = next("skip", everySecond, 0, 10_000_000) as MissedRun.Next
    expect(n.slot).toBe(10_001_000)
    expect(n.dropped).toEqual({
      first: 1000,
      last: 10_000_000,
      count: MissedRun.COUNT_LIMIT,
      exact: false,
    })
    const small = next("skip", everySecond, 0, 5000) as MissedRun.Next
    expect(small.dropped).toEqual({ first: 1000, last: 5000, count: 5, exact: true })
  })

  it("a cron range of exactly COUNT_LIMIT slots is counted exactly; one more is not", () => {
    const everySecond = MissedRun.cron(Result.getOrThrow(Cron.parse("* * * * * *", "UTC")))
    const limit = MissedRun.COUNT_LIMIT
    expect(MissedRun.range(everySecond, 1000, limit * 1000)).toEqual({
      first: 1000,
      last: limit * 1000,
      count: limit,
      exact: true,
    })
    expect(MissedRun.range(everySecond, 1000, (limit + 1) * 1000)).toEqual({
      first: 1000,
      last: (limit + 1) * 1000,
      count: limit,
      exact: false,
    })
  })
})

describe("grids at their edges (SPEC §3)", () => {
  const at = (iso: string) => Date.parse(iso)

  it("SPEC §3: a fixed-rate grid's last slot is 2^53-1 itself; none comes after it", () => {
    const max = Number.MAX_SAFE_INTEGER
    const grid = periodic(max - 10, 10)
    expect(grid.after(max - 11)).toBe(max - 10)
    expect(grid.after(max - 10)).toBe(max)
    expect(grid.after(max - 1)).toBe(max)
    expect(grid.after(max)).toBeUndefined()
    expect(grid.atOrBefore(max)).toBe(max)
  })

  it("SPEC §3: a grid spanning more than 2^53 ms still finds its latest slot at or before t", () => {
    // t - origin is past 2^53 here, where dividing by the period rounds up to the next step.
    const origin = -9_007_199_254_740_323
    const t = 9_007_199_254_740_471
    const grid = periodic(origin, 15)
    const k = (BigInt(t) - BigInt(origin)) / 15n
    expect(grid.atOrBefore(t)).toBe(Number(BigInt(origin) + k * 15n))
    expect(grid.atOrBefore(t)).toBeLessThanOrEqual(t)
  })

  it("SPEC §3: an Effect Cron that never matches has no slot at or before any time", () => {
    const never = MissedRun.cron(Result.getOrThrow(Cron.parse("0 0 30 2 *", "UTC")))
    expect(never.atOrBefore(at("2030-01-01T00:00:00Z"))).toBeUndefined()
  })

  it("SPEC §3: a parsed cron grid (the scheduler's own) steps, looks back and counts its matches", () => {
    const parsed = Schedule.parseCron("*/15 * * * *", "UTC")
    if (!("spec" in parsed)) throw new Error(parsed.message)
    const grid = MissedRun.cron(parsed)
    expect(grid.after(at("2026-01-01T10:00:00Z"))).toBe(at("2026-01-01T10:15:00Z"))
    expect(grid.atOrBefore(at("2026-01-01T10:15:00Z"))).toBe(at("2026-01-01T10:15:00Z"))
    expect(grid.atOrBefore(at("2026-01-01T10:14:59.999Z"))).toBe(at("2026-01-01T10:00:00Z"))
    expect(grid.count(at("2026-01-01T10:00:00Z"), at("2026-01-01T11:00:00Z"), 100)).toBe(5)
    expect(grid.count(at("2026-01-01T10:00:00Z"), at("2026-01-01T10:59:59.999Z"), 100)).toBe(4)
    // Counting stops one past the limit: more than `limit` is all it says.
    expect(grid.count(at("2026-01-01T10:00:00Z"), at("2026-01-02T10:00:00Z"), 3)).toBe(4)
    expect(grid.countsExactly).toBe(false)
  })
})
