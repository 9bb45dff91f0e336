import { describe, expect, it } from "vitest"
import { LEGS, legReport, WorkerTrace } from "../src/fleet/legs.ts"

/** The legs of a report as { leg: p50 }, for a single traced job (p50 = the value). */
const byLeg = (report: ReturnType<typeof legReport>) =>
  Object.fromEntries(report.legs.map((l) => [l.leg, l.p50]))

describe("legReport", () => {
  it("splits one job's pickup into its legs, from the worker's lines", () => {
    const w = new WorkerTrace()
    for (const line of [
      "p 995.000 1", // parked with a worker free
      "n 1004.000", // the insert's notice
      "w 1005.000 wake",
      "c 1006.000 1016.000 32 j1",
      "r j1 1016.500",
    ])
      expect(w.line(line)).toBe(true)
    expect(w.line("s j1 1016")).toBe(false)
    const r = legReport(
      ["j1"],
      new Map([["j1", 1000]]),
      new Map([["j1", 1003]]),
      [w],
      new Map([["j1", [{ w: 0, at: 1066 }]]]),
      900,
      2000,
    )
    expect(byLeg(r)).toEqual({
      [LEGS[0]]: 3,
      [LEGS[1]]: 4,
      [LEGS[2]]: 1,
      [LEGS[3]]: 1,
      [LEGS[4]]: 10,
      [LEGS[5]]: 0.5,
      [LEGS[6]]: 16.5,
    })
    expect(r.passes).toEqual({ wake: 1, wakeForWorker: 0, timer: 0, loop: 0 })
    expect(r.beforeNotice).toBe(0)
    // Its end is read in whole ms and counted from the next one: 1066 + 1 − 1016.5.
    expect(r.runP50).toBe(50.5)
  })

  it("tells a pass that followed a full claim, and one woken after parking for a worker", () => {
    const w = new WorkerTrace()
    for (const line of [
      "n 1001.000",
      "c 1002.000 1010.000 2 a,b", // took all it asked for: loops on
      "c 1010.500 1020.000 1 c",
      "p 1021.000 0", // no worker free
      "w 1030.000 wake", // a run ended
      "c 1031.000 1035.000 1 d",
      "r a 1010.100",
      "r b 1010.200",
      "r c 1020.100",
      "r d 1035.100",
    ])
      w.line(line)
    const at = new Map([
      ["a", 1000],
      ["b", 1000],
      ["c", 1000],
      ["d", 1000],
    ])
    const ends = new Map([
      ["a", [{ w: 0, at: 1060 }]],
      ["b", [{ w: 0, at: 1060 }]],
      ["c", [{ w: 0, at: 1070 }]],
      ["d", [{ w: 0, at: 1085 }]],
    ])
    const r = legReport(["a", "b", "c", "d"], at, new Map(), [w], ends, 900, 2000)
    // a and b: no start of their pass in the trace (not classified); c looped on after the
    // full claim; d was woken after parking for a worker.
    expect(r.passes).toEqual({ wake: 0, wakeForWorker: 1, timer: 0, loop: 1 })
    expect(r.beforeNotice).toBe(0)
    expect(r.parksForWorker).toBe(1)
    // At that park: a, b and c on the pool (none ended), three claims held (no commit yet).
    expect(r.runningAtPark).toBe(3)
    expect(r.heldAtPark).toBe(3)
    expect(r.claims).toBe(3)
    expect(r.smallClaims).toBe(3)
  })
})
