// The scheduler's layer options, parsed apart from the service (internal/options.ts): the
// defaults the README and `SchedulerOptions` state, and the first bad option named.
import { Options } from "@tickwork/core"
import { describe, expect, it } from "vitest"
import { parse } from "../src/internal/options.ts"

describe("parse", () => {
  it("fills every default (SchedulerOptions' docs)", () => {
    const settings = parse({ seed: 7 })
    expect(settings).toEqual({
      name: "default",
      workers: 4,
      ledgerPerTask: 32,
      ledgerCapacity: 200_000,
      streamCapacity: 10_000,
      shutdownTimeoutMs: 30_000,
      shutdownGraceMs: 5_000,
      slowRunMs: 600_000,
      defaultTimeoutMs: 0,
      maxResultBytes: 65_536,
      policy: "drain",
      stallMs: 60_000,
      background: true,
      seed: 7,
    })
  })

  it("turns durations into ms and slowRunWarning: false into 0", () => {
    const settings = parse({
      shutdownTimeout: "2 seconds",
      shutdownGrace: 250,
      slowRunWarning: false,
      defaultTimeout: "1 minute",
      health: { stall: "5 seconds", background: false },
    })
    expect(settings).toMatchObject({
      shutdownTimeoutMs: 2_000,
      shutdownGraceMs: 250,
      slowRunMs: 0,
      defaultTimeoutMs: 60_000,
      stallMs: 5_000,
      background: false,
    })
  })

  it("without a seed, picks a random integer one", () => {
    const settings = parse({})
    expect(Number.isSafeInteger((settings as { seed: number }).seed)).toBe(true)
  })

  it.each([
    [{ name: "" }, "name", ""],
    [{ workers: 0 }, "workers", 0],
    [{ workers: Options.bounds.workers.max + 1 }, "workers", Options.bounds.workers.max + 1],
    [{ ledgerPerTask: -1 }, "ledgerPerTask", -1],
    [{ streamCapacity: 0 }, "streamCapacity", 0],
    [{ shutdownTimeout: -1 }, "shutdownTimeout", -1],
    [{ shutdown: "later" }, "shutdown", "later"],
    [{ health: { stal: 1 } }, "health.stal", undefined],
    [{ health: { background: "yes" } }, "health.background", "yes"],
    [{ seed: 1.5 }, "seed", 1.5],
    [{ workerz: 2 }, "workerz", undefined],
  ] as const)("%j is an InvalidOption naming %s", (options, field, value) => {
    const error = parse(options as never)
    expect(error).toMatchObject({ _tag: "InvalidOption", field })
    if (value !== undefined) expect(error).toMatchObject({ value })
  })

  it("reports the first bad option in the order they are checked", () => {
    // workers is checked before shutdown, shutdown before seed.
    expect(parse({ seed: 0.5, shutdown: "x" as never, workers: 0 })).toMatchObject({
      field: "workers",
    })
    expect(parse({ seed: 0.5, shutdown: "x" as never })).toMatchObject({ field: "shutdown" })
  })
})
