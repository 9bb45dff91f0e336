/**
 * The short chaos run (chaos/chaos.ts, size CI in chaos/sizes.ts): 4 worker processes, SIGKILLs,
 * a SIGSTOP past the lease and `pg_terminate_backend`s on a private cluster. Nothing due may be
 * lost; a run may start twice only if it was in flight at a fault; every run a kill cut off
 * runs again elsewhere. `pnpm chaos` runs the full size. The SQLite variant
 * (chaos/sqlite-chaos.ts): one worker killed at random times and restarted on the same file,
 * and the disk under its store filled and freed while it runs (chaos/disk.ts), counted the same
 * way.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chaos, describeReport } from "./chaos/chaos.ts"
import { CI, SQLITE_CI } from "./chaos/sizes.ts"
import { sqliteChaos } from "./chaos/sqlite-chaos.ts"

describe("chaos (short)", () => {
  it.live(
    "faults on a fixed timeline: nothing lost, duplicates only for runs in flight at a fault",
    () =>
      Effect.gen(function* () {
        const report = yield* Effect.promise(() => chaos(CI))
        for (const line of describeReport(report)) console.log(line)
        expect(report.lost).toEqual([])
        expect(report.beyondInFlight).toEqual([])
        expect(report.notRestarted).toBe(0)
        expect(report.faults.filter((f) => f.kind === "kill").length).toBeGreaterThan(0)
        expect(report.faults.filter((f) => f.kind === "stop").length).toBe(1)
        // Failover from a kill is the session's end, not the lease (3 s): generous bounds.
        for (const ms of report.failover) expect(ms).toBeLessThan(CI.leaseMs)
      }),
    240_000,
  )

  it.live(
    "SQLite: its one worker killed at random and restarted on the file, its disk filled and freed: nothing lost, duplicates only for runs in flight at a kill",
    () =>
      Effect.gen(function* () {
        const report = yield* Effect.promise(() => sqliteChaos(SQLITE_CI))
        for (const line of describeReport(report)) console.log(line)
        expect(report.lost).toEqual([])
        expect(report.beyondInFlight).toEqual([])
        expect(report.notRestarted).toBe(0)
        expect(report.faults.filter((f) => f.kind === "kill").length).toBeGreaterThan(2)
        // Every run a kill cut off ran again in the restarted process.
        expect(report.failover.length).toBeGreaterThan(0)
        // Each full disk reached the store (it reported disk-full), and explained no duplicate.
        const full = report.faults.filter((f) => f.kind === "disk-full")
        expect(full.length).toBeGreaterThan(0)
        for (const f of full) expect(f.reached, f.detail).toBe(true)
      }),
    240_000,
  )
})
