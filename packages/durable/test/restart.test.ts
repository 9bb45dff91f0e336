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
})
