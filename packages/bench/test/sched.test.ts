import { describe, expect, it } from "vitest"
import { parseSchedstat, readThreadSched } from "../src/lib/sched.ts"

describe("parseSchedstat", () => {
  it("reads ns on a CPU and ns waiting as ms", () => {
    expect(parseSchedstat("1500000000 250000 42\n")).toEqual({ onCpuMs: 1500, waitMs: 0.25 })
  })

  it("refuses text that is not three non-negative integers", () => {
    expect(parseSchedstat("")).toBeUndefined()
    expect(parseSchedstat("1 2")).toBeUndefined()
    expect(parseSchedstat("1 2 3 4")).toBeUndefined()
    expect(parseSchedstat("1 -2 3")).toBeUndefined()
    expect(parseSchedstat("1 x 3")).toBeUndefined()
  })
})

describe("readThreadSched", () => {
  it.runIf(process.platform === "linux")("counts this thread's CPU time as it works", () => {
    const before = readThreadSched()
    expect(before).toBeDefined()
    // Busy until the counter moves (a tick-based kernel advances it in whole ticks): bounded.
    const until = performance.now() + 5_000
    let after = readThreadSched()
    while (after !== undefined && after.onCpuMs === before?.onCpuMs && performance.now() < until) {
      for (let k = 0; k < 1e5; k++) Math.sqrt(k)
      after = readThreadSched()
    }
    expect(after?.onCpuMs).toBeGreaterThan(before?.onCpuMs ?? Number.POSITIVE_INFINITY)
  })
})
