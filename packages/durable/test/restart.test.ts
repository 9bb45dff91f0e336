import { describe, expect, it } from "@effect/vitest"
import { Kernel, type MissedRun, Schedule, Task } from "@tickwork/core"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { advance, recording, sqlite, tempDir, withScheduler } from "./helpers.ts"

/** The core kernel's trace for the same tasks when its clock jumps from `from` to `to`. */
const kernelTrace = (
  policies: ReadonlyArray<MissedRun.MissedRunPolicy>,
  period: number,
  steps: ReadonlyArray<number>,
) => {
  const k = new Kernel.Kernel<string>()
  for (const p of policies) {
    k.schedule({ id: p, job: p, schedule: Schedule.fixedRate(period), missedRuns: p }, 0)
  }
  const out: Array<string> = []
  for (const now of steps) {
    for (let run = k.takeDue(now); run !== undefined; run = k.takeDue(now)) {
      out.push(`${run.job}:${run.scheduledFor}@${run.startedAt}`)
      k.complete(run, Task.succeeded, now, false)
    }
  }
  return out
}

describe("restart", () => {
  it.effect(
    "slots missed while down follow each task's policy, as the kernel's after a clock jump",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const { seen, handler } = recording()
        const store = sqlite(t.file())
        const policies = ["catch-up", "coalesce", "skip"] as const
        // One worker: then the run order is the kernel's (SPEC §11, as for the runtime).
        const options = { handlers: [handler], workers: 1 }
        yield* withScheduler(store, options, (d) =>
          Effect.gen(function* () {
            for (const p of policies) {
              yield* d.schedule({
                id: p,
                handler,
                payload: { n: 0 },
                schedule: Schedule.fixedRate(1000),
                missedRuns: p,
              })
            }
            yield* advance(d, 2500)
          }),
        )
        yield* TestClock.adjust(8000) // down until 10500
        const ledger = yield* withScheduler(store, options, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 1000)
            return yield* Effect.forEach(policies, (p) => d.ledger(p))
          }),
        )
        const durable = seen.map((s) => `${s.id}:${s.slot}@${s.startedAt}`)
        expect(durable).toEqual(kernelTrace(policies, 1000, [0, 1000, 2000, 10500, 11000]))
        const missed = ledger.map((l) =>
          l.flatMap((o) =>
            o.kind === "ran"
              ? []
              : [`${o.kind} ${o.firstSlot}-${o.lastSlot} x${o.count} (${o.cause})`],
          ),
        )
        expect(missed).toEqual([
          [],
          ["coalesced 3000-9000 x7 (late)"],
          ["skipped 4000-10000 x7 (late)"],
        ])
        t.cleanup()
      }),
  )

  it.effect(
    "slots older than the catch-up window are skipped and recorded; the policy applies to the rest",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const { seen, handler } = recording()
        const store = sqlite(t.file())
        const policies = ["catch-up", "coalesce", "skip"] as const
        const options = { handlers: [handler], workers: 1, catchUpWindow: 3_000 }
        yield* withScheduler(store, options, (d) =>
          Effect.gen(function* () {
            for (const p of policies) {
              yield* d.schedule({
                id: p,
                handler,
                payload: { n: 0 },
                schedule: Schedule.fixedRate(1000),
                missedRuns: p,
              })
            }
            // Every 10 s; the window is shorter than a period: it waits for the next slot.
            yield* d.schedule({
              id: "sparse",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(10_000),
            })
            yield* advance(d, 2500)
          }),
        )
        yield* TestClock.adjust(23_000) // down until 25500
        const ledger = yield* withScheduler(store, options, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 250)
            return yield* Effect.forEach([...policies, "sparse"], (p) => d.ledger(p))
          }),
        )
        const after = seen
          .filter((s) => s.startedAt > 2500)
          .map((s) => `${s.id}:${s.slot}@${s.startedAt}`)
        // cutoff 22500: slots 3000…22000 are skipped; 23000, 24000, 25000 are within the window.
        // The coalesced run goes back in at 25000, behind the slots due before it (SPEC §4).
        expect(after).toEqual([
          "catch-up:23000@25500",
          "skip:23000@25500",
          "catch-up:24000@25500",
          "coalesce:25000@25500",
          "catch-up:25000@25500",
        ])
        const missed = ledger.map((l) =>
          l.flatMap((o) =>
            o.kind === "ran"
              ? []
              : [`${o.kind} ${o.firstSlot}-${o.lastSlot} x${o.count} (${o.cause})`],
          ),
        )
        expect(missed).toEqual([
          ["skipped 3000-22000 x20 (window)"],
          ["skipped 3000-22000 x20 (window)", "coalesced 23000-24000 x2 (late)"],
          ["skipped 3000-22000 x20 (window)", "skipped 24000-25000 x2 (late)"],
          ["skipped 10000-20000 x2 (window)"],
        ])
        t.cleanup()
      }),
  )

  it.effect("a cron task coalesces the hours it missed while down into one run", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const { seen, handler } = recording()
      const store = sqlite(t.file())
      const hour = 3_600_000
      yield* withScheduler(store, { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          yield* d.schedule({
            id: "hourly",
            handler,
            payload: { n: 0 },
            schedule: Schedule.cron("0 * * * *", { timeZone: "Europe/Berlin" }),
            missedRuns: "coalesce",
          })
          yield* advance(d, 2 * hour + 60_000)
        }),
      )
      yield* TestClock.adjust(5 * hour) // down for five hours
      yield* withScheduler(store, { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          yield* advance(d, hour)
          const events = (yield* d.ledger("hourly")).filter((o) => o.kind !== "ran")
          expect(
            events.map((o) => `${o.kind} ${o.firstSlot / hour}-${o.lastSlot / hour} x${o.count}`),
          ).toEqual(["coalesced 3-6 x4"])
        }),
      )
      expect(seen.map((s) => `${s.slot / hour}@${s.startedAt / 60_000}m`)).toEqual([
        "1@60m",
        "2@120m",
        "7@421m",
        "8@480m",
      ])
      t.cleanup()
    }),
  )
})
