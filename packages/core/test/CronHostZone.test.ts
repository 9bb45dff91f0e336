/**
 * DST notes (SPEC §22.3, §22.4) are about an expression's own zone: an Effect `Cron` parsed
 * without a zone has none, so it has no note, even on a host whose zone has DST. Such a `Cron` is
 * read in UTC (SPEC §3: a cron's zone defaults to UTC), wherever the host is.
 */
import { Cron } from "effect"
import { describe, expect, it } from "vitest"
import { Schedule } from "../src/index.ts"

/** 05:30 UTC on 1 November 2026 is 01:30 EDT, which comes again at 06:30 UTC (01:30 EST). */
const SLOT = Date.parse("2026-11-01T05:30:00Z")

/**
 * Runs `f` with the process in New York's zone. A forked process reads a changed `TZ` at once;
 * a worker thread keeps its zone, so the test runs only where the change took effect.
 */
const inNewYork = <A>(f: (effective: boolean) => A): A => {
  const saved = process.env.TZ
  process.env.TZ = "America/New_York"
  try {
    return f(new Date(SLOT).getTimezoneOffset() === 240)
  } finally {
    if (saved === undefined) delete process.env.TZ
    else process.env.TZ = saved
  }
}

const effective = inNewYork((e) => e)

describe("a zone-less Effect Cron on a host in New York", () => {
  it.runIf(effective)("has no DST note at a local time New York lives twice", () => {
    inNewYork(() => {
      expect(Schedule.dstNote(Cron.parseUnsafe("30 1 * * *"), SLOT)).toBeUndefined()
    })
  })

  it.runIf(effective)("fires at its UTC times, not at the host's local times", () => {
    inNewYork(() => {
      const daily = Schedule.cron(Cron.parseUnsafe("0 9 * * *"))
      const slots = Schedule.preview(daily, { from: Date.parse("2026-11-01T00:00:00Z"), count: 2 })
      expect(Array.isArray(slots) && slots.map((s) => new Date(s.slot).toISOString())).toEqual([
        "2026-11-01T09:00:00.000Z",
        "2026-11-02T09:00:00.000Z",
      ])
    })
  })
})
