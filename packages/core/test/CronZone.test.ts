/**
 * `internal/zone.ts`, the offsets and transitions cron slots are stepped through (SPEC §22.3,
 * §22.4): wall times of any year, offsets in any era, and transitions at a year's edges. The
 * expected values are ISO instants and the zones' published rules, not the module's own output.
 */
import { describe, expect, it } from "vitest"
import * as Zone from "../src/internal/zone.ts"

const HOUR = 3_600_000

describe("zone: wall times and offsets of any year", () => {
  it("naive ms is the wall time's instant in UTC, also for years 0–99 (not 1900–1999)", () => {
    expect(Zone.naive(1, 1, 1)).toBe(Date.parse("0001-01-01T00:00:00Z"))
    expect(Zone.naive(0, 3, 1, 12, 30, 15)).toBe(Date.parse("0000-03-01T12:30:15Z"))
    expect(Zone.naive(99, 12, 31, 23, 59, 59)).toBe(Date.parse("0099-12-31T23:59:59Z"))
    expect(Zone.naive(100, 1, 1)).toBe(Date.parse("0100-01-01T00:00:00Z"))
    expect(Zone.naive(2026, 3, 29, 2, 30)).toBe(Date.parse("2026-03-29T02:30:00Z"))
    expect(Zone.yearStart(2027)).toBe(Date.parse("2027-01-01T00:00:00Z"))
  })

  it("the offset of an instant before year 1 (an era BC) is read in that era", () => {
    expect(Zone.offsetAt("UTC", Date.parse("0000-06-01T00:00:00Z"))).toBe(0)
    expect(Zone.offsetAt("UTC", Date.parse("-000100-06-01T00:00:00Z"))).toBe(0)
    expect(Zone.offsetAt("Etc/GMT-3", Date.parse("0000-06-01T00:00:00Z"))).toBe(3 * HOUR)
  })

  it("the offset of an instant is that of its whole second", () => {
    // Berlin springs forward at 01:00:00 UTC on 29 March 2026: 999 ms before is still +1 h.
    const at = Date.parse("2026-03-29T01:00:00Z")
    expect(Zone.offsetAt("Europe/Berlin", at - 1)).toBe(HOUR)
    expect(Zone.offsetAt("Europe/Berlin", at)).toBe(2 * HOUR)
    expect(Zone.offsetAt("Europe/Berlin", at + 999)).toBe(2 * HOUR)
  })

  it("isZone knows IANA names and refuses others", () => {
    expect(Zone.isZone("Europe/Berlin")).toBe(true)
    expect(Zone.isZone("UTC")).toBe(true)
    expect(Zone.isZone("Mars/Olympus")).toBe(false)
  })
})

describe("zone: transitions", () => {
  it("Berlin 2026: spring forward and fall back, each to the second, with both offsets", () => {
    expect(Zone.transitionsOfYear("Europe/Berlin", 2026)).toEqual([
      { at: Date.parse("2026-03-29T01:00:00Z"), before: HOUR, after: 2 * HOUR },
      { at: Date.parse("2026-10-25T01:00:00Z"), before: 2 * HOUR, after: HOUR },
    ])
    expect(Zone.transitionsOfYear("UTC", 2026)).toEqual([])
  })

  it("the transition at or before an instant includes one exactly at it; after excludes it", () => {
    const spring = Date.parse("2026-03-29T01:00:00Z")
    const fall = Date.parse("2026-10-25T01:00:00Z")
    expect(Zone.transitionAtOrBefore("Europe/Berlin", spring)?.at).toBe(spring)
    expect(Zone.transitionAtOrBefore("Europe/Berlin", spring - 1000)?.at).toBe(
      Date.parse("2025-10-26T01:00:00Z"),
    )
    expect(Zone.transitionAfter("Europe/Berlin", spring)?.at).toBe(fall)
    expect(Zone.transitionAfter("Europe/Berlin", spring - 1000)?.at).toBe(spring)
    // Across the UTC year: the last one of 2025 from January 2026, the first of 2027 from November.
    expect(Zone.transitionAtOrBefore("Europe/Berlin", Date.parse("2026-01-10T00:00:00Z"))?.at).toBe(
      Date.parse("2025-10-26T01:00:00Z"),
    )
    expect(Zone.transitionAfter("Europe/Berlin", Date.parse("2026-11-10T00:00:00Z"))?.at).toBe(
      Date.parse("2027-03-28T01:00:00Z"),
    )
    // No further than a year either way.
    expect(Zone.transitionAtOrBefore("UTC", Date.parse("2026-06-01T00:00:00Z"))).toBeUndefined()
    expect(Zone.transitionAfter("UTC", Date.parse("2026-06-01T00:00:00Z"))).toBeUndefined()
  })

  it("Samoa's skipped day: a 24-hour change late in the year, found to the second", () => {
    // Pacific/Apia moved from -10:00 to +14:00 at 10:00 UTC on 30 December 2011 (local
    // 2011-12-29T24:00 became 2011-12-31T00:00): the day was never lived there.
    expect(Zone.transitionsOfYear("Pacific/Apia", 2011).at(-1)).toEqual({
      at: Date.parse("2011-12-30T10:00:00Z"),
      before: -10 * HOUR,
      after: 14 * HOUR,
    })
  })
})
