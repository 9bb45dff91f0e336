/**
 * Cron slots and their DST notes do not depend on the host's time zone (SPEC §22.3, §22.4): an
 * Effect `Cron` parsed without a zone is read in UTC, whatever `TZ` the process runs with.
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

  it("has no DST note on New York's fall-back night: UTC has no DST", () => {
    // 05:30 UTC on 1 November 2026 is 01:30 EDT, a local time New York lives twice.
    expect(new Date(Date.parse("2026-11-01T05:30:00Z")).getTimezoneOffset()).toBe(240)
    const slot = Date.parse("2026-11-01T05:30:00Z")
    expect(Schedule.dstNote(Cron.parseUnsafe("30 5 * * *"), slot)).toBeUndefined()
  })
})
