/**
 * SPEC §16: runs behave like Effect. A scope per run, only services captured at schedule, a root
 * span linked to the scheduling span, `CurrentRun`, the Cause kept and logged, metrics per
 * scheduler, random jitter seeds — and the option checks and self-cancel of the same issue.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Cause,
  Context,
  Cron,
  DateTime,
  Effect,
  Exit,
  Logger,
  Metric,
  Option,
  References,
  Scope,
  Tracer,
} from "effect"
import { TestClock } from "effect/testing"
import { type Ledger, Metrics, Run, Schedule, Scheduler, type Task } from "../src/index.ts"

/** Runs `body` with a metric registry of its own, so counts start at zero. */
const isolated = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.provideService(body, Metric.MetricRegistry, new Map())

const ran = (o: Ledger.Occurrence | undefined): Ledger.Ran => {
  if (o?.kind !== "ran" && o?.kind !== "retried") throw new Error(`not a run: ${o?.kind}`)
  return o as Ledger.Ran
}

class Greeting extends Context.Service<Greeting, string>()("test/Greeting") {}

describe("a Scope per run", () => {
  it.effect(
    "a job scheduled from a scope that has closed gets a fresh scope, closed before its outcome",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ workers: 1 })
        const events: Array<string> = []
        const caller = yield* Scope.make()
        yield* s
          .schedule({
            id: "scoped",
            schedule: Schedule.fixedRate(10),
            job: (run) =>
              Effect.gen(function* () {
                const conn = yield* Effect.acquireRelease(
                  Effect.sync(() => {
                    events.push(`open ${run.runNumber}`)
                    return run.runNumber
                  }),
                  (n) => Effect.sync(() => events.push(`close ${n}`)),
                )
                events.push(`use ${conn}`)
              }),
          })
          .pipe(Scope.provide(caller))
        yield* Scope.close(caller, Exit.void) // the caller's scope ends before any run
        // A second scheduler whose listener hears the outcome: after the run's scope has closed.
        const heard = yield* Scheduler.make({
          workers: 1,
          listener: { completed: (r) => events.push(`outcome ${r.runNumber}`) },
        })
        yield* heard.schedule({
          schedule: Schedule.once(0),
          job: Effect.acquireRelease(Effect.void, () => Effect.sync(() => events.push("close L"))),
        })
        yield* TestClock.adjust(25)
        // Each run opens and closes its own resource: nothing piles up until shutdown, and the
        // release comes before the outcome is reported.
        expect(events.filter((e) => !e.endsWith("L") && !e.startsWith("outcome"))).toEqual([
          "open 1",
          "use 1",
          "close 1",
          "open 2",
          "use 2",
          "close 2",
          "open 3",
          "use 3",
          "close 3",
        ])
        expect(events.indexOf("close L")).toBeLessThan(events.indexOf("outcome 1"))
        expect((yield* s.ledger("scoped")).map((o) => ran(o).outcome.kind)).toEqual([
          "succeeded",
          "succeeded",
          "succeeded",
        ])
      }),
  )

  it.effect("a timed-out run's scope is closed too", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      let released = false
      yield* s.schedule({
        id: "slow",
        schedule: Schedule.once(0),
        timeout: 100,
        job: Effect.acquireRelease(Effect.void, () =>
          Effect.sync(() => {
            released = true
          }),
        ).pipe(Effect.andThen(Effect.never)),
      })
      yield* TestClock.adjust(100)
      expect(released).toBe(true)
      expect(ran((yield* s.ledger("slow"))[0]).outcome.kind).toBe("timed-out")
    }),
  )
})

describe("a run's finalizers", () => {
  it.effect("that take time: the outcome waits for them, and the worker stays busy meanwhile", () =>
    Effect.gen(function* () {
      const events: Array<string> = []
      const s = yield* Scheduler.make({
        workers: 1,
        listener: { completed: (r) => events.push(`outcome ${r.id}`) },
      })
      yield* s.schedule({
        id: "slow-release",
        schedule: Schedule.once(0),
        job: Effect.acquireRelease(Effect.void, () =>
          Effect.sleep(50).pipe(Effect.andThen(Effect.sync(() => events.push("released")))),
        ),
      })
      yield* s.schedule({
        id: "next",
        schedule: Schedule.once(10),
        job: Effect.sync(() => events.push("next runs")),
      })
      yield* TestClock.adjust(20)
      // Its job ended at 0, but its scope is still closing: one worker, so "next" waits.
      expect(yield* s.status("slow-release")).toBe("running")
      expect(yield* s.status("next")).toBe("scheduled")
      yield* TestClock.adjust(40)
      expect(events).toEqual(["released", "outcome slow-release", "next runs", "outcome next"])
      expect(ran((yield* s.ledger("next"))[0]).startedAt).toBe(50)
    }),
  )

  it.effect("that fail: the run is a defect whose cause keeps the release's failure", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ logFailures: false })
      yield* s.schedule({
        id: "bad-release",
        schedule: Schedule.once(0),
        job: Effect.acquireRelease(Effect.void, () => Effect.die("release broke")),
      })
      yield* TestClock.adjust(1)
      const outcome = ran((yield* s.ledger("bad-release"))[0]).outcome
      expect(outcome.kind).toBe("defect")
      const cause = outcome.kind === "defect" ? (outcome.cause as Cause.Cause<unknown>) : undefined
      expect(cause === undefined ? "" : Cause.pretty(cause)).toContain("release broke")
    }),
  )
})

describe("only services are captured at schedule", () => {
  it.effect("the caller's log annotations and span stay with the caller; its services follow", () =>
    Effect.gen(function* () {
      const spans: Array<Tracer.NativeSpan> = []
      const tracer = Tracer.make({
        span: (options) => {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        },
      })
      const logs: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
      const logger = Logger.make((o) => {
        logs.push({
          message: o.message,
          annotations: { ...o.fiber.getRef(References.CurrentLogAnnotations) },
        })
      })
      yield* Effect.gen(function* () {
        const s = yield* Scheduler.make({ spans: true })
        // Scheduled inside a request: its span and its requestId annotation.
        yield* s
          .schedule({
            id: "nightly",
            schedule: Schedule.fixedRate(1000),
            job: Effect.gen(function* () {
              const greeting = yield* Greeting
              yield* Effect.log(greeting)
            }),
          })
          .pipe(
            Effect.provideService(Greeting, "hello"),
            Effect.annotateLogs({ requestId: "r-1" }),
            Effect.withSpan("http.request"),
          )
        yield* TestClock.adjust(2000)
      }).pipe(Effect.withTracer(tracer), Effect.provide(Logger.layer([logger])))
      const runLogs = logs.filter((l) => String(l.message) === "hello")
      expect(runLogs).toHaveLength(3)
      for (const l of runLogs) {
        expect(l.annotations.requestId).toBeUndefined()
        expect(l.annotations["tickwork.task"]).toBe("nightly")
      }
      const request = spans.find((sp) => sp.name === "http.request") as Tracer.NativeSpan
      const runs = spans.filter((sp) => sp.name === "tickwork.run")
      expect(runs).toHaveLength(3)
      for (const run of runs) {
        expect(Option.isNone(run.parent)).toBe(true) // a root span
        expect(run.links.map((l) => l.span)).toEqual([request]) // linked to where it was scheduled
        expect(run.traceId).not.toBe(request.traceId)
      }
    }),
  )
})

describe("CurrentRun", () => {
  it.effect("a job reads its run from the context; a retry keeps its slot", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ seed: 1 })
      const seen: Array<Task.RunInfo> = []
      yield* s.schedule({
        id: "r",
        schedule: Schedule.fixedRate(100, { delay: 10 }),
        retry: { maxRetries: 1, base: 5 },
        job: Effect.gen(function* () {
          const run = yield* Run.CurrentRun
          seen.push(run)
          if (run.attempt === 1) return yield* Effect.fail("first attempt fails")
        }),
      })
      yield* TestClock.adjust(20)
      expect(seen.map((r) => [r.id, r.slot, r.scheduledFor, r.attempt])).toEqual([
        ["r", 10, 10, 1],
        ["r", 10, 15, 2],
      ])
    }),
  )
})

describe("failures are kept and logged", () => {
  const capture = () => {
    const lines: Array<{
      level: string
      message: string
      cause: Cause.Cause<unknown>
      annotations: Record<string, unknown>
    }> = []
    const logger = Logger.make((o) => {
      lines.push({
        level: o.logLevel,
        message: String(o.message),
        cause: o.cause,
        annotations: { ...o.fiber.getRef(References.CurrentLogAnnotations) },
      })
    })
    return { lines, layer: Logger.layer([logger]) }
  }

  it.effect("a failed run at Warning and a defect at Error, with task id, slot and attempt", () => {
    const { lines, layer } = capture()
    return Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "fails", schedule: Schedule.once(5), job: Effect.fail("no") })
      yield* s.schedule({ id: "dies", schedule: Schedule.once(7), job: Effect.die("bug") })
      yield* s.schedule({ id: "fine", schedule: Schedule.once(8), job: Effect.void })
      yield* TestClock.adjust(10)
      const warning = lines.find((l) => l.level === "Warn")
      expect(warning?.message).toContain("task fails, slot 1970-01-01T00:00:00.005Z, attempt 1")
      expect(Cause.hasFails(warning?.cause as Cause.Cause<unknown>)).toBe(true)
      // Logged with the run's annotations, like the job's own logs.
      expect(warning?.annotations).toMatchObject({
        "tickwork.task": "fails",
        "tickwork.slot": 5,
        "tickwork.attempt": 1,
      })
      const error = lines.find((l) => l.level === "Error")
      expect(error?.message).toContain("task dies, slot 1970-01-01T00:00:00.007Z, attempt 1")
      expect(Cause.hasDies(error?.cause as Cause.Cause<unknown>)).toBe(true)
      expect(lines.filter((l) => l.level === "Warn" || l.level === "Error")).toHaveLength(2)
      // The ledger keeps the Cause too.
      const failed = ran((yield* s.ledger("fails"))[0]).outcome
      expect(failed.kind === "failed" && Cause.hasFails(failed.cause as Cause.Cause<unknown>)).toBe(
        true,
      )
    }).pipe(Effect.provide(layer))
  })

  it.effect("logFailures: false turns the logs off", () => {
    const { lines, layer } = capture()
    return Effect.gen(function* () {
      const s = yield* Scheduler.make({ logFailures: false })
      yield* s.schedule({ schedule: Schedule.once(0), job: Effect.fail("no") })
      yield* s.schedule({ schedule: Schedule.once(0), job: Effect.die("bug") })
      yield* TestClock.adjust(1)
      expect((yield* s.stats).failed).toBe(2)
      expect(lines.filter((l) => l.level === "Warn" || l.level === "Error")).toEqual([])
    }).pipe(Effect.provide(layer))
  })
})

describe("a job that cancels its own task with interrupt", () => {
  type Shape = (
    s: Scheduler.SchedulerShape,
    after: Effect.Effect<void>,
  ) => Scheduler.JobInput<void, never, never>
  const shapes: ReadonlyArray<readonly [string, Shape]> = [
    ["a plain Effect", (s, after) => Effect.andThen(s.cancel("self", { interrupt: true }), after)],
    [
      "a generator",
      (s, after) =>
        Effect.gen(function* () {
          yield* s.cancel("self", { interrupt: true })
          yield* after
        }),
    ],
    [
      "a function returning an Effect",
      (s, after) => () => Effect.andThen(s.cancel("self", { interrupt: true }), after),
    ],
  ]
  for (const [name, shape] of shapes) {
    it.effect(`${name}: interrupted before its first yield, outcome interrupted`, () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        let after = false
        yield* s.schedule({
          id: "self",
          schedule: Schedule.fixedRate(10),
          job: shape(
            s,
            Effect.sync(() => {
              after = true
            }),
          ),
        })
        yield* TestClock.adjust(30)
        expect(after).toBe(false)
        expect(yield* s.status("self")).toBe("cancelled")
        const ledger = yield* s.ledger("self")
        expect(ledger.map((o) => o.kind)).toEqual(["cancelled", "ran"])
        expect(ran(ledger[1]).outcome.kind).toBe("interrupted")
        expect((yield* s.stats).inFlight).toBe(0)
      }),
    )
  }
})

describe("options", () => {
  it.effect.each(["missedRun", "overlap", "tag"])(
    "an unknown schedule option %s is an InvalidOption naming it; nothing is scheduled",
    (key) =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        const error = yield* Effect.flip(
          s.schedule({
            schedule: Schedule.once(0),
            job: Effect.void,
            [key]: "skip",
          } as Scheduler.ScheduleOptions<void, never, never>),
        )
        expect(error).toMatchObject({ _tag: "InvalidOption", field: key })
        expect((yield* s.stats).accepted).toBe(0)
      }),
  )

  it.effect("tags is a known option: an array is accepted, another kind fails as a bad value", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "t", tags: ["mail"], schedule: Schedule.once(10), job: Effect.void })
      expect(Option.getOrUndefined(yield* s.info("t"))?.tags).toEqual(["mail"])
      const error = yield* Effect.flip(
        s.schedule({
          schedule: Schedule.once(0),
          job: Effect.void,
          tags: "mail",
        } as unknown as Scheduler.ScheduleOptions<void, never, never>),
      )
      expect(error).toMatchObject({ _tag: "InvalidOption", field: "tags" })
      expect(error.message).toContain("tags must be an array of strings")
      expect((yield* s.stats).accepted).toBe(1)
    }),
  )

  it.effect("an unknown layer option is an InvalidOption naming it", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Scheduler.make({ worker: 2 } as never))
      expect(error).toMatchObject({ _tag: "InvalidOption", field: "worker" })
      const retention = yield* Effect.flip(Scheduler.make({ retention: { maxFinish: 2 } } as never))
      expect(retention).toMatchObject({ _tag: "InvalidOption", field: "retention.maxFinish" })
    }),
  )

  it.effect("DateTime for at, a parsed Cron for cron, a Duration for retention's age", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2026, 0, 5))
      const s = yield* Scheduler.make({ retention: { maxAge: "1 minute" } })
      const at = yield* s.schedule({
        schedule: Schedule.at(DateTime.makeUnsafe(Date.UTC(2026, 0, 5, 0, 0, 1))),
        job: Effect.void,
      })
      const cron = yield* s.schedule({
        schedule: Schedule.cron(Cron.parseUnsafe("0 9 * * MON-FRI", "Europe/Berlin")),
        job: Effect.void,
      })
      expect(Option.getOrThrow(yield* s.info(cron)).scheduledFor).toBe(Date.UTC(2026, 0, 5, 8))
      yield* TestClock.adjust(1000)
      expect(yield* s.status(at)).toBe("done")
      yield* TestClock.adjust(60_000)
      yield* s.schedule({ schedule: Schedule.once(1), job: Effect.void })
      expect(yield* s.status(at)).toBe("unknown")
    }),
  )

  it.effect("jitter is seeded randomly per scheduler unless a seed is given", () =>
    Effect.gen(function* () {
      const retryAt = (seed: number | undefined) =>
        Effect.gen(function* () {
          const s = yield* Scheduler.make(seed === undefined ? {} : { seed })
          const ids: Array<Task.TaskId> = []
          for (let k = 0; k < 8; k++) {
            ids.push(
              yield* s.schedule({
                schedule: Schedule.once(0),
                retry: { maxRetries: 1, base: "1 hour", jitter: "full" },
                job: Effect.fail("x"),
              }),
            )
          }
          yield* TestClock.adjust(0)
          const slots: Array<number> = []
          for (const id of ids) slots.push(Option.getOrThrow(yield* s.info(id)).scheduledFor)
          return slots
        }).pipe(Effect.scoped)
      // 8 draws over an hour from two random seeds agree with probability ~0.
      expect(yield* retryAt(undefined)).not.toEqual(yield* retryAt(undefined))
      expect(yield* retryAt(7)).toEqual(yield* retryAt(7))
    }),
  )
})

describe("metrics per scheduler", () => {
  it.effect("two schedulers in one process report apart, under their names", () =>
    isolated(
      Effect.gen(function* () {
        const a = yield* Scheduler.make({ name: "a" })
        const b = yield* Scheduler.make({ name: "b" })
        for (let k = 0; k < 3; k++) {
          yield* a.schedule({ schedule: Schedule.once(1000), job: Effect.void })
        }
        yield* b.schedule({ schedule: Schedule.once(1000), job: Effect.void })
        yield* b.schedule({ schedule: Schedule.once(0), job: Effect.fail("x") })
        yield* TestClock.adjust(1)
        const ma = Metrics.forScheduler("a")
        const mb = Metrics.forScheduler("b")
        expect((yield* Metric.value(ma.pending)).value).toBe(3)
        expect((yield* Metric.value(mb.pending)).value).toBe(1)
        expect((yield* Metric.value(ma.runs.failed)).count).toBe(0)
        expect((yield* Metric.value(mb.runs.failed)).count).toBe(1)
        expect((yield* b.stats).name).toBe("b")
      }),
    ),
  )

  it.effect("the pending gauge follows schedule and cancel calls that do not wake the actor", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ name: "g" })
        const pending = Metrics.forScheduler("g").pending
        const flushed = Effect.promise(() => Promise.resolve()) // the refresh is a microtask
        yield* s.schedule({ id: "far", schedule: Schedule.once("1 hour"), job: Effect.void })
        yield* flushed
        expect((yield* Metric.value(pending)).value).toBe(1)
        // Later than the slot the actor sleeps toward: it is not woken, the gauge still moves.
        yield* s.schedule({ id: "farther", schedule: Schedule.once("2 hours"), job: Effect.void })
        yield* flushed
        expect((yield* Metric.value(pending)).value).toBe(2)
        yield* s.cancel("farther")
        yield* flushed
        expect((yield* Metric.value(pending)).value).toBe(1)
      }),
    ),
  )

  it.effect(
    "coalesced slots are counted under coalesce: merged before a late start, dropped after an overrun",
    () =>
      isolated(
        Effect.gen(function* () {
          const s = yield* Scheduler.make({ name: "c", workers: 1, shutdown: "interrupt" })
          // The only worker is busy until 45, so A's slots wait; its run at 45 lasts until 70.
          yield* s.schedule({ id: "busy", schedule: Schedule.once(0), job: Effect.sleep(45) })
          yield* s.schedule({
            id: "A",
            schedule: Schedule.fixedRate(10),
            missedRuns: "coalesce",
            job: Effect.sleep(25),
          })
          yield* TestClock.adjust(75)
          const records = (yield* s.ledger("A")).map((o) =>
            o.kind === "coalesced" ? `${o.kind} ${o.first}-${o.last} ${o.cause}` : o.kind,
          )
          expect(records.slice(0, 3)).toEqual([
            "coalesced 0-30 late",
            "ran",
            "coalesced 50-60 overlap",
          ])
          const m = Metrics.forScheduler("c")
          expect((yield* Metric.value(m.slotsMissed("late", "coalesce"))).count).toBe(4)
          expect((yield* Metric.value(m.slotsMissed("overlap", "coalesce"))).count).toBe(2)
          expect((yield* Metric.value(m.slotsMissed("late", "skip"))).count).toBe(0)
          expect((yield* Metric.value(m.slotsMissed("overlap", "skip"))).count).toBe(0)
        }),
      ),
  )

  it.effect("slots a resume skips are counted by cause; a pause or resume itself counts none", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ name: "ctl" })
        yield* s.schedule({ id: "tick", schedule: Schedule.fixedRate(10), job: Effect.void })
        yield* TestClock.adjust(5)
        yield* s.pause("tick")
        yield* TestClock.adjust(40) // 10, 20, 30 and 40 pass while paused
        yield* s.resume("tick")
        const m = Metrics.forScheduler("ctl")
        expect((yield* Metric.value(m.slotsMissed("paused", "skip"))).count).toBe(4)
        const series = (yield* Metric.snapshot)
          .filter((x) => x.id === "tickwork_slots_missed_total")
          .map((x) => `${x.attributes?.cause}/${x.attributes?.policy}`)
        expect(series).toEqual(["paused/skip"])
      }),
    ),
  )

  it.effect("retries and missed slots are counted by cause and policy", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ name: "m", shutdown: "interrupt" })
        yield* s.schedule({
          schedule: Schedule.once(0),
          retry: { maxRetries: 2, base: 1 },
          job: Effect.fail("x"),
        })
        yield* s.schedule({
          schedule: Schedule.fixedRate(10),
          missedRuns: "skip",
          job: Effect.sleep(35),
        })
        yield* TestClock.adjust(40)
        const m = Metrics.forScheduler("m")
        expect((yield* Metric.value(m.retries)).count).toBe(2)
        // The run at 0 ends at 35: slots 10, 20 and 30 passed while it ran.
        expect((yield* Metric.value(m.slotsMissed("overlap", "skip"))).count).toBe(3)
      }),
    ),
  )
})
