/**
 * `@tickwork/runtime/testing/commands`: the fast-check command model of the Scheduler, with the
 * core's deterministic driver as the reference. `FC_RUNS_MODEL` sets the number of runs
 * (default 500).
 */
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Schedule } from "../src/index.ts"
import * as Commands from "../src/testing/commands.ts"

const RUNS = Number(process.env.FC_RUNS_MODEL ?? 500)
/** A run takes a few ms here; leave room for a loaded machine and a large FC_RUNS_MODEL. */
const TIMEOUT = 60_000 + RUNS * 100

describe(`the command model (${RUNS} runs)`, () => {
  it(
    "random tasks of every kind: the scheduler's trace, tasks and counts equal the driver's after every command",
    async () => {
      const report = await Commands.check({ numRuns: RUNS })
      expect(report.runs).toBe(RUNS)
      expect(report.commands).toBeGreaterThan(RUNS)
      expect(report.occurrences).toBeGreaterThan(RUNS)
    },
    TIMEOUT,
  )

  it(
    "your own task templates, in real dates, with an invariant of your own",
    async () => {
      const hour = 3_600_000
      let checked = 0
      const report = await Commands.check({
        numRuns: Math.ceil(RUNS / 4),
        startAt: new Date("2026-03-01T00:00:00Z"),
        advance: { max: 3 * hour },
        templates: {
          digest: {
            schedule: Schedule.cron("0 * * * *"),
            retry: { maxRetries: 2, base: "5 minutes" },
            missedRuns: "skip",
            pauseAfterConsecutiveFailures: 3,
          },
          payment: {
            schedule: (now) => Schedule.at(now + 30 * 60_000),
            retry: { maxRetries: 3, base: "10 minutes", jitter: "full" },
            priority: "high",
          },
          sync: { schedule: Schedule.fixedDelay("45 minutes"), missedRuns: "coalesce" },
        },
        invariant: (view) => {
          checked++
          for (const t of view.tasks) {
            // A payment has one slot: its first attempt and at most three retries.
            if (t.id.startsWith("payment") && t.runNumber > 4)
              throw new Error(`${t.id} ran ${t.runNumber} times`)
            // A digest that failed three slots in a row is failed for good.
            if (t.id.startsWith("digest") && t.consecutiveFailures >= 3 && t.state !== "failed") {
              throw new Error(`${t.id} is ${t.state} after ${t.consecutiveFailures} failed slots`)
            }
          }
          // No digest runs twice for the same hour.
          const slots = view.occurrences.filter(
            (o) => o.kind === "ran" && o.id.startsWith("digest"),
          )
          const keys = slots.map((o) => `${o.id}@${o.kind === "ran" ? o.scheduledFor : 0}`)
          if (new Set(keys).size !== keys.length) throw new Error("a digest slot ran twice")
        },
      })
      expect(report.runs).toBe(Math.ceil(RUNS / 4))
      expect(checked).toBeGreaterThanOrEqual(report.commands)
    },
    TIMEOUT,
  )

  it("reports a template job that does not do what the plan says, with a shrunk sequence", async () => {
    const error = await Commands.check({
      numRuns: 100,
      fcSeed: 1,
      templates: {
        stubborn: { schedule: Schedule.once(5), job: () => Effect.void }, // never fails
      },
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(error?.message).toMatch(/Counterexample: \[schedule stubborn [SF]*F/)
    expect(String((error?.cause as Error | undefined)?.message)).toMatch(
      /stubborn0 run 1 was planned to fail, but its job succeeded/,
    )
  })

  it("reports a broken invariant with the command after which it broke", async () => {
    const error = await Commands.check({
      numRuns: 100,
      fcSeed: 2,
      invariant: (view) => {
        if (view.occurrences.some((o) => o.kind === "retried"))
          throw new Error("no retries, please")
      },
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(error?.message).toMatch(/Property failed/)
    expect(String((error?.cause as Error | undefined)?.message)).toBe("no retries, please")
  })

  it("commands and run compose with your own fc.assert", async () => {
    let runs = 0
    await fc.assert(
      fc.asyncProperty(Commands.commands({ maxCommands: 10 }), async (cmds) => {
        runs++
        await Commands.run(cmds)
      }),
      { numRuns: 20, seed: 42 },
    )
    expect(runs).toBe(20)
  })
})

describe("task specs", () => {
  it("scheduleOf and taskOptions build every kind of schedule", () => {
    const base: Commands.TaskSpec = {
      kind: "once",
      delay: 5,
      period: 7,
      priority: "low",
      maxRetries: 2,
      jitter: "equal",
      missedRuns: "skip",
      pauseAfter: 1,
      fails: [true],
      spawn: undefined,
      cancelSelfOn: undefined,
    }
    const kinds = ["once", "at", "fixed-rate", "fixed-delay", "cron", "custom"] as const
    expect(kinds.map((kind) => Commands.scheduleOf({ ...base, kind }, 100)._tag)).toEqual([
      "Once",
      "At",
      "FixedRate",
      "FixedDelay",
      "Cron",
      "Custom",
    ])
    expect(Commands.scheduleOf({ ...base, kind: "at" }, 100)).toEqual(Schedule.at(75))
    expect(Commands.taskOptions(base, 0)).toMatchObject({
      priority: "low",
      retry: { maxRetries: 2, base: 3, factor: 2, jitter: "equal" },
      missedRuns: "skip",
      pauseAfterConsecutiveFailures: 1,
    })
  })
})
