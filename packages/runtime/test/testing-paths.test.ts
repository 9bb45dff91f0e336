/**
 * `@tickwork/runtime/testing`'s lifecycle paths: every transition of THE task machine, for every
 * retry and failure policy shape, walked against a real Scheduler on the test clock.
 */
import { Lifecycle } from "@tickwork/core"
import { Cause, Context, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import type { AnyTransitionDefinition } from "xstate"
import { Schedule } from "../src/index.ts"
import { LifecyclePaths, TestScheduler } from "../src/testing/index.ts"

const inputs: Array<LifecyclePaths.Input> = []
for (const maxRetries of [0, 1, 2])
  for (const pauseAfter of [0, 1, 2])
    for (const recurring of [false, true, "may-end"] as const)
      inputs.push({ maxRetries, pauseAfter, recurring })

const plans = inputs.map(LifecyclePaths.generate)
const totalPaths = plans.reduce((n, p) => n + p.paths.length, 0)
const totalEdges = plans.reduce((n, p) => n + p.edges.length, 0)
const totalSteps = plans.reduce((n, p) => n + p.paths.reduce((m, q) => m + q.steps.length, 0), 0)

/** Every transition of the machine, read from its definition, plus CANCEL ignored when final. */
const machineTransitions = (): Array<string> => {
  const out: Array<string> = []
  for (const [state, node] of Object.entries(Lifecycle.machine.root.states)) {
    if (node.type === "final") out.push(`${state} --CANCEL--> (ignored)`)
    for (const [event, defs] of node.transitions as Map<string, Array<AnyTransitionDefinition>>) {
      for (const d of defs) {
        const g = d.guard as string | { type: string } | undefined
        const guard = g === undefined ? "" : ` [${typeof g === "string" ? g : g.type}]`
        out.push(`${state} --${event}${guard}--> ${d.target?.[0]?.key}`)
      }
    }
  }
  return out.sort()
}

describe(`lifecycle paths: ${totalPaths} paths, ${totalSteps} steps over ${totalEdges} edges, ${inputs.length} inputs`, () => {
  it("together, the paths take every transition of the machine", () => {
    const taken = new Set(plans.flatMap((p) => p.transitions))
    expect([...taken].sort()).toEqual(machineTransitions())
    expect(taken.size).toBe(12) // 9 transitions, and CANCEL ignored by each of the 3 final states
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
      "START → FAIL+next → START → FAIL+next → START → FAIL+next → START → FAIL+next → CANCEL ⇒ failed a1 c2",
    )
    expect(plan.transitions).toEqual([
      "cancelled --CANCEL--> (ignored)",
      "failed --CANCEL--> (ignored)",
      "running --CANCEL--> cancelled",
      "running --FAIL [hasNextSlot]--> scheduled",
      "running --FAIL [pausedByFailures]--> failed",
      "running --FAIL [retriesLeft]--> scheduled",
      "running --SUCCEED [hasNextSlot]--> scheduled",
      "scheduled --CANCEL--> cancelled",
      "scheduled --START--> running",
    ])
  })

  it("steps carry the exact context XState computes, and the ledger continuation", () => {
    const plan = LifecyclePaths.generate({ maxRetries: 1, pauseAfter: 0, recurring: false })
    const path = plan.paths.find((p) => p.name.startsWith("START → FAIL → START → FAIL "))
    expect(path?.steps.map((s) => [s.transition, s.context, s.continuation])).toEqual([
      [
        "scheduled --START--> running",
        { attempt: 1, maxRetries: 1, runNumber: 1, consecutiveFailures: 0, pauseAfter: 0 },
        undefined,
      ],
      [
        "running --FAIL [retriesLeft]--> scheduled",
        { attempt: 2, maxRetries: 1, runNumber: 1, consecutiveFailures: 0, pauseAfter: 0 },
        "retry",
      ],
      [
        "scheduled --START--> running",
        { attempt: 2, maxRetries: 1, runNumber: 2, consecutiveFailures: 0, pauseAfter: 0 },
        undefined,
      ],
      [
        "running --FAIL--> failed",
        { attempt: 1, maxRetries: 1, runNumber: 2, consecutiveFailures: 1, pauseAfter: 0 },
        "final",
      ],
      [
        "failed --CANCEL--> (ignored)",
        { attempt: 1, maxRetries: 1, runNumber: 2, consecutiveFailures: 1, pauseAfter: 0 },
        undefined,
      ],
    ])
  })

  describe.each(plans.map((p) => [JSON.stringify(p.input), p] as const))("input %s", (_, plan) => {
    it(`every path (${plan.paths.length}) holds on a real scheduler, running runs cancelled by interruption or let finish`, async () => {
      for (const path of plan.paths) {
        for (const cancelRunning of ["interrupt", "let-finish"] as const) {
          const result = await TestScheduler.run(LifecyclePaths.play(path, { cancelRunning }))
          expect(result.steps).toBe(path.steps.length)
        }
      }
    })
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
    expect(report.transitions).toContain("running --FAIL [pausedByFailures]--> failed")
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
    })
    expect(
      LifecyclePaths.inputOf({
        schedule: Schedule.fixedDelay("1 minute"),
        retry: { maxRetries: 2 },
        pauseAfterConsecutiveFailures: 3,
      }),
    ).toEqual({ maxRetries: 2, pauseAfter: 3, recurring: true })
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
  })

  it("check needs an input or a task with a schedule", async () => {
    const exit = await Effect.runPromiseExit(LifecyclePaths.check({}))
    expect(Exit.isFailure(exit) && String(Cause.squash(exit.cause))).toMatch(/needs an input/)
  })
})
