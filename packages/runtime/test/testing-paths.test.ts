/**
 * `@tickwork/runtime/testing`'s lifecycle paths: every transition of THE task machine, for every
 * retry and failure policy shape, walked against a real Scheduler on the test clock.
 */
import { Lifecycle } from "@tickwork/core"
import { Cause, Context, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import type { AnyTransitionDefinition } from "xstate"
import { Schedule, Scheduler } from "../src/index.ts"
import { LifecyclePaths, TestScheduler, Trace } from "../src/testing/index.ts"

const inputs: Array<LifecyclePaths.Input> = []
for (const maxRetries of [0, 1, 2])
  for (const pauseAfter of [0, 1, 2])
    for (const recurring of [false, true, "may-end"] as const)
      for (const expires of recurring === false ? [false, true] : [false])
        inputs.push({ maxRetries, pauseAfter, recurring, expires })

const plans = inputs.map(LifecyclePaths.generate)
const totalPaths = plans.reduce((n, p) => n + p.paths.length, 0)
const totalEdges = plans.reduce((n, p) => n + p.edges.length, 0)
const totalSteps = plans.reduce((n, p) => n + p.paths.reduce((m, q) => m + q.steps.length, 0), 0)

/**
 * The manual runs' events (SPEC §19): asked for by `trigger` and `retry`, which the paths do not
 * realise; `test/manual-runs.test.ts` and core's s19 suite walk them against the scheduler.
 */
const MANUAL: ReadonlySet<string> = new Set(["TRIGGER", "MANUAL_END", "RETRY"])

/**
 * Every transition of the machine but the manual ones, read from its definition, plus CANCEL
 * ignored in each final state (`failed` included: it is final for every event but RETRY).
 */
const machineTransitions = (): Array<string> => {
  const out: Array<string> = []
  for (const [state, node] of Object.entries(Lifecycle.machine.root.states)) {
    if (Lifecycle.isFinal(state as Lifecycle.TaskState)) out.push(`${state} --CANCEL--> (ignored)`)
    for (const [event, defs] of node.transitions as Map<string, Array<AnyTransitionDefinition>>) {
      // A durable store's own events: an in-memory scheduler never hands a run back.
      if (Lifecycle.storeEvents.includes(event as Lifecycle.TaskEvent["type"])) continue
      if (MANUAL.has(event)) continue
      for (const d of defs) {
        const g = d.guard as string | { type: string } | undefined
        const guard = g === undefined ? "" : ` [${typeof g === "string" ? g : g.type}]`
        // A targetless transition (PAUSE or RESUME while running) stays in its state.
        out.push(`${state} --${event}${guard}--> ${d.target?.[0]?.key ?? state}`)
      }
    }
  }
  return out.sort()
}

describe(`lifecycle paths: ${totalPaths} paths, ${totalSteps} steps over ${totalEdges} edges, ${inputs.length} inputs`, () => {
  it("together, the paths take every transition of the machine", () => {
    const taken = new Set(plans.flatMap((p) => p.transitions))
    expect([...taken].sort()).toEqual(machineTransitions())
    // 17 transitions, and CANCEL ignored by each of the 3 final states.
    expect(taken.size).toBe(20)
  })

  it("each input's paths take every edge of its reachable graph, and no path is a prefix of another", () => {
    for (const plan of plans) {
      const taken = new Set(plan.paths.flatMap((p) => p.steps.map((s) => s.edge)))
      expect([...taken].sort()).toEqual(plan.edges)
      const names = plan.paths.map((p) => p.steps.map((s) => s.edge).join("\n"))
      for (const [k, a] of names.entries())
        for (const [j, b] of names.entries())
          if (k !== j) expect(b.startsWith(`${a}\n`)).toBe(false)
    }
  })

  it("covers transitions, not only states: more paths than the states alone need", () => {
    const plan = LifecyclePaths.generate({ maxRetries: 1, pauseAfter: 2, recurring: true })
    const classes = new Set(plan.paths.map((p) => p.name.split(" ⇒ ")[1]))
    expect(plan.edges.length).toBeGreaterThan(classes.size)
    expect(plan.paths.map((p) => p.name)).toContain(
      // Two slots fail (each with its retry): the failure policy pauses it; then it is cancelled.
      "START → FAIL+next → START → FAIL+next → START → FAIL+next → START → FAIL+next → CANCEL → CANCEL ⇒ cancelled a1 c2",
    )
    expect(plan.paths.map((p) => p.name)).toContain(
      "START → FAIL+next → START → FAIL+next → START → FAIL+next → START → FAIL+next → RESUME ⇒ scheduled a1 c0",
    )
    expect(plan.transitions).toEqual([
      "cancelled --CANCEL--> (ignored)",
      "paused --CANCEL--> cancelled",
      "paused --RESUME--> scheduled",
      "running --CANCEL--> cancelled",
      "running --FAIL [hasNextSlot]--> scheduled",
      "running --FAIL [retriesLeft]--> scheduled",
      "running --FAIL [retryHeld]--> paused",
      "running --FAIL [stopsAfterFailure]--> paused",
      "running --PAUSE [notPauseRequested]--> running",
      "running --RESUME [pauseRequested]--> running",
      "running --SUCCEED [hasNextSlot]--> scheduled",
      "running --SUCCEED [pausing]--> paused",
      "scheduled --CANCEL--> cancelled",
      "scheduled --PAUSE--> paused",
      "scheduled --START--> running",
    ])
  })

  it("steps carry the exact context XState computes, and the ledger continuation", () => {
    const plan = LifecyclePaths.generate({ maxRetries: 1, pauseAfter: 0, recurring: false })
    const path = plan.paths.find((p) => p.name.startsWith("START → FAIL → START → FAIL "))
    const ctx = { maxRetries: 1, pauseAfter: 0, pauseRequested: false }
    expect(path?.steps.map((s) => [s.transition, s.context, s.continuation])).toEqual([
      [
        "scheduled --START--> running",
        { ...ctx, attempt: 1, runNumber: 1, consecutiveFailures: 0 },
        undefined,
      ],
      [
        "running --FAIL [retriesLeft]--> scheduled",
        { ...ctx, attempt: 2, runNumber: 1, consecutiveFailures: 0 },
        "retry",
      ],
      [
        "scheduled --START--> running",
        { ...ctx, attempt: 2, runNumber: 2, consecutiveFailures: 0 },
        undefined,
      ],
      [
        "running --FAIL--> failed",
        { ...ctx, attempt: 2, runNumber: 2, consecutiveFailures: 1 },
        "final",
      ],
      [
        "failed --CANCEL--> (ignored)",
        { ...ctx, attempt: 2, runNumber: 2, consecutiveFailures: 1 },
        undefined,
      ],
    ])
  })

  it("steps carry the pause requested while running, and why a paused task is paused", () => {
    const plan = LifecyclePaths.generate({ maxRetries: 1, pauseAfter: 1, recurring: true })
    const held = plan.paths.find((p) => p.name === "START → PAUSE → FAIL+next ⇒ paused a2 c0")
    const ctx = { maxRetries: 1, pauseAfter: 1, consecutiveFailures: 0 }
    expect(
      held?.steps.map((s) => [s.transition, s.context, s.continuation, s.pausedReason]),
    ).toEqual([
      [
        "scheduled --START--> running",
        { ...ctx, attempt: 1, runNumber: 1, pauseRequested: false },
        undefined,
        undefined,
      ],
      [
        "running --PAUSE [notPauseRequested]--> running",
        { ...ctx, attempt: 1, runNumber: 1, pauseRequested: true },
        undefined,
        "manual",
      ],
      // The retry is held, not dropped: the task is paused with attempt 2 pending.
      [
        "running --FAIL [retryHeld]--> paused",
        { ...ctx, attempt: 2, runNumber: 1, pauseRequested: false },
        "retry",
        "manual",
      ],
    ])
    const stopped = plan.paths.find((p) =>
      p.steps.some((s) => s.transition === "running --FAIL [stopsAfterFailure]--> paused"),
    )
    const stop = stopped?.steps.find((s) => s.to === "paused")
    expect([stop?.continuation, stop?.pausedReason, stop?.context.consecutiveFailures]).toEqual([
      "next",
      "failures",
      1,
    ])
    const resumed = plan.paths.find((p) =>
      p.steps.some((s) => s.from === "paused" && s.to === "scheduled"),
    )
    const resume = resumed?.steps.find((s) => s.from === "paused")
    expect([resume?.pausedReason, resume?.context.consecutiveFailures]).toEqual([undefined, 0])
  })

  it("a one-shot with a window expires: from its first slot, and from a pending retry", () => {
    const plan = LifecyclePaths.generate({
      maxRetries: 1,
      pauseAfter: 0,
      recurring: false,
      expires: true,
    })
    const expiring = plan.paths
      .filter((p) => p.steps.some((s) => s.event.type === "EXPIRE"))
      .map((p) => p.name)
    expect(expiring).toEqual(
      expect.arrayContaining([
        "EXPIRE → CANCEL ⇒ failed a1 c0",
        "START → FAIL → EXPIRE → CANCEL ⇒ failed a2 c0",
      ]),
    )
    expect(plan.transitions).toContain("scheduled --EXPIRE--> failed")
    // Without a window, no path expires.
    const plain = LifecyclePaths.generate({ maxRetries: 1, pauseAfter: 0, recurring: false })
    expect(plain.transitions).not.toContain("scheduled --EXPIRE--> failed")
  })

  describe.each(plans.map((p) => [JSON.stringify(p.input), p] as const))("input %s", (_, plan) => {
    it(`every path (${plan.paths.length}) holds on a real scheduler, running runs cancelled by interruption or let finish`, async () => {
      for (const path of plan.paths) {
        for (const cancelRunning of ["interrupt", "let-finish"] as const) {
          const result = await TestScheduler.run(LifecyclePaths.play(path, { cancelRunning }))
          expect(result.steps).toBe(path.steps.length)
        }
      }
      // Up to ~150 plays on fresh layers: a second here, and past the default 5 s on a busy box.
    }, 120_000)
  })
})

describe("playing your own task", () => {
  it("check walks every path of a cron task with retries and a failure policy", async () => {
    const task = {
      schedule: Schedule.cron("30 2 * * *"),
      retry: { maxRetries: 2, base: "5 minutes", jitter: "full" },
      pauseAfterConsecutiveFailures: 2,
    } as const
    const report = await Effect.runPromise(
      LifecyclePaths.check({ task, layer: { startAt: new Date("2026-03-01T00:00:00Z") } }),
    )
    const plan = LifecyclePaths.generate(LifecyclePaths.inputOf(task))
    expect(report).toMatchObject({
      input: { maxRetries: 2, pauseAfter: 2, recurring: true },
      paths: plan.paths.length,
      edges: plan.edges.length,
      transitions: plan.transitions,
    })
  })

  it("the job is told the planned outcome, and runs with the caller's services", async () => {
    class Gateway extends Context.Service<
      Gateway,
      { readonly charge: Effect.Effect<void, string> }
    >()("test/Gateway") {}
    let down = false
    const charges: Array<string> = []
    const fake = Gateway.of({
      charge: Effect.suspend(() => {
        charges.push(down ? "declined" : "charged")
        return down ? Effect.fail("503") : Effect.void
      }),
    })
    const task = {
      schedule: Schedule.once("1 minute"),
      retry: { maxRetries: 1, base: "30 seconds" },
    } as const
    const report = await Effect.runPromise(
      LifecyclePaths.check({
        task: {
          ...task,
          job: (outcome) => {
            down = outcome === "fail"
            return Gateway.use((g) => g.charge)
          },
        },
      }).pipe(Effect.provide(Layer.succeed(Gateway, fake))),
    )
    // One charge per SUCCEED or FAIL step of every path, in order.
    const planned = LifecyclePaths.generate(LifecyclePaths.inputOf(task)).paths.flatMap((p) =>
      p.steps.flatMap((s) =>
        s.event.type === "SUCCEED" ? ["charged"] : s.event.type === "FAIL" ? ["declined"] : [],
      ),
    )
    expect(report.paths).toBeGreaterThan(0)
    expect(charges).toEqual(planned)
  })

  it("a custom schedule is wrapped so that it ends where the path says", async () => {
    const report = await Effect.runPromise(
      LifecyclePaths.check({
        task: {
          schedule: Schedule.custom((slot, finishedAt) =>
            slot === undefined ? finishedAt + 50 : finishedAt + 25,
          ),
          retry: { maxRetries: 1 },
        },
      }),
    )
    expect(report.input.recurring).toBe("may-end")
    expect(report.transitions).toContain("running --SUCCEED--> done")
    expect(report.transitions).toContain("running --SUCCEED [hasNextSlot]--> scheduled")
  })

  it("realises slots due at once: a schedule that starts now, retries with no backoff", async () => {
    const report = await Effect.runPromise(
      LifecyclePaths.check({
        task: {
          schedule: Schedule.fixedRate("1 hour"),
          retry: { maxRetries: 2, base: 0 },
          pauseAfterConsecutiveFailures: 2,
        },
        layer: { workers: 3 },
      }),
    )
    expect(report.transitions).toContain("running --FAIL [retriesLeft]--> scheduled")
    expect(report.transitions).toContain("running --FAIL [stopsAfterFailure]--> paused")
    expect(report.transitions).toContain("running --FAIL [retryHeld]--> paused")
  })

  it("a one-shot's window: EXPIRE is played by moving the clock past its deadline", async () => {
    const task = {
      schedule: Schedule.once("1 minute"),
      retry: { maxRetries: 1, base: "30 seconds" },
      window: "5 minutes",
    } as const
    const report = await Effect.runPromise(LifecyclePaths.check({ task }))
    expect(report.input).toEqual({ maxRetries: 1, pauseAfter: 0, recurring: false, expires: true })
    expect(report.transitions).toContain("scheduled --EXPIRE--> failed")
    // The retry due at 90 s is found past the deadline (60 s + 5 min): it expires, never runs.
    const plan = LifecyclePaths.generate(report.input)
    const path = plan.paths.find((p) => p.name === "START → FAIL → EXPIRE → CANCEL ⇒ failed a2 c0")
    const result = await TestScheduler.run(
      LifecyclePaths.play(path as LifecyclePaths.Path, { task }),
    )
    expect(result.ledger.map((o) => Trace.line(o))).toEqual([
      `60000 ${result.id} retried slot=60000 start=60000 attempt=1 run=1 failed -> scheduled@90000`,
      `360001 ${result.id} expired slot=60000 deadline=360000`,
    ])
  })

  it("a pause requested during a run takes effect when the run ends, and resume goes on", async () => {
    const plan = LifecyclePaths.generate({ maxRetries: 0, pauseAfter: 0, recurring: true })
    const path = plan.paths.find((p) => p.name === "START → PAUSE → SUCCEED+next ⇒ paused a1 c0")
    expect(path).toBeDefined()
    const ledger = await TestScheduler.run(
      Effect.gen(function* () {
        yield* LifecyclePaths.play(path as LifecyclePaths.Path, { task: { id: "poll" } })
        const scheduler = yield* Scheduler.Scheduler
        expect(yield* scheduler.resume("poll")).toBe(true)
        return yield* scheduler.ledger("poll")
      }),
    )
    expect(ledger.map((o) => Trace.line(o))).toEqual([
      // The default recurring schedule: every second from 1 s. The slot it holds, 2 s, is
      // still ahead when it is resumed at 1 s: it goes on with it.
      "1000 poll ran slot=1000 start=1000 attempt=1 run=1 succeeded -> paused@2000",
      "1000 poll paused reason=manual",
      "1000 poll resumed reason=manual next=2000",
    ])
  })

  it("reports a PathMismatch when the pause reason differs from the path's", async () => {
    const plan = LifecyclePaths.generate({ maxRetries: 0, pauseAfter: 0, recurring: true })
    const path = plan.paths.find((p) => p.name.startsWith("PAUSE → ")) as LifecyclePaths.Path
    const tampered: LifecyclePaths.Path = {
      ...path,
      steps: path.steps.map((s, k) => (k === 0 ? { ...s, pausedReason: "failures" } : s)),
    }
    const error = await TestScheduler.run(Effect.flip(LifecyclePaths.play(tampered)))
    expect(error.step).toBe(1)
    expect(error.message).toMatch(/step 1 \(PAUSE\): info says .*"pausedReason":"manual"/)
  })

  it("reports a PathMismatch when the job does not do what the path needs", async () => {
    const plan = LifecyclePaths.generate({ maxRetries: 0, pauseAfter: 0, recurring: false })
    const path = plan.paths.find((p) => p.name.startsWith("START → FAIL"))
    expect(path).toBeDefined()
    const error = await TestScheduler.run(
      Effect.flip(
        LifecyclePaths.play(path as LifecyclePaths.Path, { task: { job: () => Effect.void } }),
      ),
    )
    expect(error).toBeInstanceOf(LifecyclePaths.PathMismatch)
    expect(error.step).toBe(2)
    expect(error.message).toMatch(/step 2 \(FAIL\): status is done, the machine says failed/)
  })

  it("reports a PathMismatch at the first step where the scheduler and the path disagree", async () => {
    const plan = LifecyclePaths.generate({ maxRetries: 1, pauseAfter: 0, recurring: true })
    const path = plan.paths.find((p) => p.steps.length >= 3) as LifecyclePaths.Path
    const third = path.steps[2] as LifecyclePaths.Step
    const tampered: LifecyclePaths.Path = {
      ...path,
      steps: path.steps.map((s, k) =>
        k === 2 ? { ...s, context: { ...s.context, runNumber: s.context.runNumber + 1 } } : s,
      ),
    }
    const error = await TestScheduler.run(Effect.flip(LifecyclePaths.play(tampered)))
    expect(error.step).toBe(3)
    expect(error.message).toContain(`step 3 (${third.label}): info says`)
  })

  it("refuses a task whose options do not match the path", async () => {
    const plan = LifecyclePaths.generate({ maxRetries: 1, pauseAfter: 0, recurring: true })
    const path = plan.paths[0] as LifecyclePaths.Path
    const defect = async (task: LifecyclePaths.TaskUnderTest) => {
      const exit = await Effect.runPromiseExit(
        LifecyclePaths.play(path, { task }).pipe(
          Effect.scoped,
          Effect.provide(TestScheduler.layer()),
        ),
      )
      return Exit.isFailure(exit) ? String(Cause.squash(exit.cause)) : "success"
    }
    expect(await defect({ retry: { maxRetries: 3 } })).toMatch(/maxRetries=1, the task has 3/)
    expect(await defect({ pauseAfterConsecutiveFailures: 2 })).toMatch(/pauseAfter=0/)
    expect(await defect({ schedule: Schedule.once(10) })).toMatch(/recurring=true, the task's Once/)
  })
})

describe("inputs", () => {
  it("inputOf reads the retry and failure policy, and whether the schedule recurs", () => {
    expect(LifecyclePaths.inputOf({ schedule: Schedule.once(1) })).toEqual({
      maxRetries: 0,
      pauseAfter: 0,
      recurring: false,
      expires: false,
    })
    // A one-shot's window is a deadline; a recurring task's window skips slots (no EXPIRE).
    expect(LifecyclePaths.inputOf({ schedule: Schedule.once(1), window: "1 minute" }).expires).toBe(
      true,
    )
    expect(
      LifecyclePaths.inputOf({ schedule: Schedule.fixedRate(10), window: "1 minute" }).expires,
    ).toBe(false)
    expect(
      LifecyclePaths.inputOf({
        schedule: Schedule.fixedDelay("1 minute"),
        retry: { maxRetries: 2 },
        pauseAfterConsecutiveFailures: 3,
      }),
    ).toEqual({ maxRetries: 2, pauseAfter: 3, recurring: true, expires: false })
    expect(LifecyclePaths.inputOf({ schedule: Schedule.at(0) }).recurring).toBe(false)
    expect(LifecyclePaths.inputOf({ schedule: Schedule.cron("* * * * *") }).recurring).toBe(true)
    expect(LifecyclePaths.inputOf({ schedule: Schedule.custom(() => undefined) }).recurring).toBe(
      "may-end",
    )
  })

  it("generate refuses negative or fractional counts", () => {
    expect(() =>
      LifecyclePaths.generate({ maxRetries: -1, pauseAfter: 0, recurring: false }),
    ).toThrow(RangeError)
    expect(() =>
      LifecyclePaths.generate({ maxRetries: 0, pauseAfter: 1.5, recurring: false }),
    ).toThrow(RangeError)
    expect(() =>
      LifecyclePaths.generate({ maxRetries: 0, pauseAfter: 0, recurring: true, expires: true }),
    ).toThrow(/only a one-shot task/)
  })

  it("check needs an input or a task with a schedule", async () => {
    const exit = await Effect.runPromiseExit(LifecyclePaths.check({}))
    expect(Exit.isFailure(exit) && String(Cause.squash(exit.cause))).toMatch(/needs an input/)
  })
})
