/**
 * DST notes (SPEC §22.3, §22.4) are about an expression's own zone: an Effect `Cron` parsed
 * without a zone has none, so it has no note, even on a host whose zone has DST.
 */
import { Cron } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Schedule } from "../src/index.ts"

describe("a zone-less Effect Cron on a host in New York", () => {
  let saved: string | undefined
  beforeEach(() => {
    saved = process.env.TZ
    // Node reads a changed TZ at once: host-local dates now follow New York's DST.
    process.env.TZ = "America/New_York"
  })
  afterEach(() => {
    if (saved === undefined) delete process.env.TZ
    else process.env.TZ = saved
  })

  it("has no DST note at a local time New York lives twice", () => {
    // 05:30 UTC on 1 November 2026 is 01:30 EDT, which comes again at 06:30 UTC (01:30 EST).
    const slot = Date.parse("2026-11-01T05:30:00Z")
    expect(new Date(slot).getTimezoneOffset()).toBe(240)
    expect(Schedule.dstNote(Cron.parseUnsafe("30 1 * * *"), slot)).toBeUndefined()
  })
})
