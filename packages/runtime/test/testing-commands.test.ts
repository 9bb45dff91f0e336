/**
 * `@tickwork/runtime/testing/commands`: the fast-check command model of the Scheduler, with the
 * core's deterministic driver as the reference. `FC_RUNS_MODEL` sets the number of runs
 * (default 500).
 */
import type { Kernel, Task } from "@tickwork/core"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Ledger, Schedule } from "../src/index.ts"
import * as Commands from "../src/testing/commands.ts"

const RUNS = Number(process.env.FC_RUNS_MODEL ?? 500)
/** A run takes a few ms here; leave room for a loaded machine and a large FC_RUNS_MODEL. */
const TIMEOUT = 60_000 + RUNS * 100
const COVERING_SEED = 7

describe(`the command model (${RUNS} runs)`, () => {
  it(
    "random tasks of every kind, a new seed each run: the scheduler's trace, tasks and counts equal the driver's after every command",
    async () => {
      // fast-check prints the seed and the shrunk commands of a failure, to replay it.
      const report = await Commands.check({ numRuns: RUNS })
      expect(report.runs).toBe(RUNS)
      expect(report.occurrences).toBeGreaterThan(RUNS)
    },
    TIMEOUT,
  )

  it(
    "the same on a fixed seed, whose commands reach every control occurrence",
    async () => {
      const seen = new Set<string>()
      const report = await Commands.check({
        numRuns: 500,
        // Which occurrences a random draw reaches varies; this seed's first 500 reach them all.
        fcSeed: COVERING_SEED,
        invariant: (view) => {
          for (const o of view.occurrences) {
            seen.add(
              o.kind === "skipped" || o.kind === "coalesced" ? `${o.kind} ${o.cause}` : o.kind,
            )
          }
        },
      })
      expect(report.runs).toBe(500)
      expect(report.commands).toBeGreaterThan(500)
      // The commands reach the controls' occurrences, not only runs.
      expect([...seen]).toEqual(
        expect.arrayContaining([
          "ran",
          "retried",
          "cancelled",
          "paused",
          "resumed",
          // One-shots past their deadline (an `at` in the past, a retry due after it). Grid slots
          // are never late here (jobs take no time, the clock stops at every slot), so no slot
          // is skipped for its window.
          "expired",
          "skipped paused",
          "skipped breaker",
        ]),
      )
    },
    TIMEOUT,
  )

  it(
    "under flow-control limits (SPEC §20): tasks in groups and under shared keys wait alike on both, by cause and scope",
    async () => {
      const waits = new Set<string>()
      const report = await Commands.check({
        numRuns: Math.max(50, Math.floor(RUNS / 2)),
        fcSeed: COVERING_SEED,
        limits: {
          groups: {
            serial: { concurrency: 1 },
            api: { rate: { max: 2, per: 15 } },
            both: { concurrency: 2, rate: { max: 3, per: 25 } },
          },
          keys: { concurrency: 1, rate: { max: 2, per: 10 } },
        },
        invariant: (view) => {
          for (const t of view.tasks) {
            if (t.waiting !== undefined)
              waits.add(`${t.waiting.cause} ${t.waiting.scope.split(":")[0]}`)
          }
        },
      })
      expect(report.occurrences).toBeGreaterThan(report.runs)
      // The limits bind: runs were seen waiting, on the rate of groups and of keys.
      expect([...waits]).toEqual(expect.arrayContaining(["rate-limited group", "rate-limited key"]))
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
            // A digest that failed three slots in a row is stopped: its failure policy paused it
            // (until a resume, which starts a fresh count), or it was cancelled since.
            if (
              t.id.startsWith("digest") &&
              t.consecutiveFailures >= 3 &&
              t.state !== "paused" &&
              t.state !== "cancelled"
            ) {
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

  it("the commands include pause, resume, update, breaker and bulk controls", () => {
    const names = fc
      .sample(Commands.commands(), { numRuns: 50, seed: 3 })
      .flatMap((cmds) => [...cmds].map((c) => String(c).split(" ")[0]))
    expect(new Set(names)).toEqual(
      new Set([
        "schedule",
        "advance",
        "to",
        "cancel",
        "outcomes",
        "pause",
        "resume",
        "update",
        "breaker",
        "pauseAll",
        "resumeAll",
        "cancelAll",
      ]),
    )
  })

  it("Driver.runUntil and the runtime agree on when a one-shot expires: when its run would have started", async () => {
    // A one-shot due at once with a 0 ms window, whose first run fails: its retry, due at 3,
    // is past the deadline (0). The runtime's actor takes it at 3; runUntil(3) takes it with
    // its clock still at 0 and steps to it. Both record the expiry at 3, the retry's due time.
    await Commands.check({
      numRuns: 50,
      fcSeed: 1,
      reference: "runUntil",
      templates: {
        deadline: {
          schedule: Schedule.once(0),
          window: 0,
          retry: { maxRetries: 1, base: 3 },
        },
      },
    })
  }, 60_000)

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
  }, 60_000)

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
  }, 60_000)

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
  }, 60_000)
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

describe("the model's invariants", () => {
  const ran = (id: string, startedAt: number, state: "scheduled" | "done" = "done") =>
    ({
      kind: "ran",
      id,
      generation: 1,
      scheduledFor: startedAt,
      dueAt: startedAt,
      startedAt,
      finishedAt: startedAt,
      attempt: 1,
      runNumber: 1,
      outcome: { kind: "succeeded" },
      state,
      continuation: state === "done" ? "final" : "next",
      nextSlot: undefined,
    }) as unknown as Ledger.Occurrence
  const paused = {
    kind: "paused",
    id: "a" as Task.TaskId,
    generation: 1,
    reason: "manual",
    at: 0,
  } as const
  const info = (state: Task.TaskState, runNumber: number, attempt = 1) =>
    ({ id: "a", state, kind: "once", runNumber, attempt }) as unknown as Task.TaskInfo
  const view = (
    occurrences: ReadonlyArray<Ledger.Occurrence>,
    tasks: ReadonlyArray<Task.TaskInfo>,
    explained: ReadonlyArray<Partial<Kernel.Explanation>> = [],
  ): Commands.View => ({
    now: 10,
    occurrences,
    lines: [],
    tasks,
    paused: explained as ReadonlyArray<Kernel.Explanation>,
  })

  it("a paused task starts no run", () => {
    expect(() => Commands.invariants(view([paused, ran("a", 5)], [info("done", 1)]))).toThrow(
      /a is paused, yet it has this record: 5 a ran/,
    )
    const resumed = {
      kind: "resumed",
      id: "a",
      generation: 1,
      reason: "manual",
      nextSlot: 5,
      at: 5,
    }
    expect(() =>
      Commands.invariants(
        view([paused, resumed as Ledger.Occurrence, ran("a", 5)], [info("done", 1)]),
      ),
    ).not.toThrow()
  })

  it("every run a task started is recorded", () => {
    expect(() => Commands.invariants(view([], [info("scheduled", 1)]))).toThrow(
      /a started 1 run\(s\), 0 recorded/,
    )
  })

  it("a held one-shot is never lost", () => {
    expect(() =>
      Commands.invariants(
        view([paused], [info("paused", 0)], [{ id: "a" as Task.TaskId, slots: [] }]),
      ),
    ).toThrow(/a is a paused one-shot with no run left/)
    expect(() =>
      Commands.invariants(
        view(
          [paused],
          [info("paused", 0)],
          [{ id: "a" as Task.TaskId, slots: [{ slot: 5, dst: undefined }] }],
        ),
      ),
    ).not.toThrow()
    // Final without a record of how it ended.
    expect(() => Commands.invariants(view([], [info("failed", 0)]))).toThrow(
      /a is failed without a final run or an expiry/,
    )
  })
})
