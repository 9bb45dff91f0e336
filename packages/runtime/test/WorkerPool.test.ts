/**
 * The worker pool driven directly, under TestClock (SPEC §16): its bound, what each run's fiber
 * sees, how a run's end is reported (scope closed first, finalizer failures kept), timeouts,
 * failure logs, and interruption.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Task } from "@tickwork/core"
import {
  Cause,
  type Context,
  Deferred,
  Effect,
  Exit,
  Fiber,
  Logger,
  Option,
  References,
  Tracer,
} from "effect"
import { TestClock } from "effect/testing"
import { Run, WorkerPool } from "../src/index.ts"

const runInfo = (id: string, over: Partial<Task.RunInfo> = {}): Task.RunInfo => ({
  id: id as Task.TaskId,
  generation: 1,
  slot: 1_000,
  scheduledFor: 1_000,
  startedAt: 1_250,
  attempt: 2,
  runNumber: 3,
  ...over,
})

interface Ended {
  readonly token: string
  readonly exit: Exit.Exit<unknown, unknown>
  readonly finishedAt: number
}

/** A pool whose runs end into `ended`; `now` reads the test's own counter. */
const poolOf = (options: Partial<WorkerPool.PoolOptions<string>> = {}) => {
  const ended: Array<Ended> = []
  let clock = 0
  const pool = new WorkerPool.WorkerPool<string>({
    workers: 2,
    spans: false,
    logAnnotations: false,
    logFailures: false,
    now: () => clock,
    onEnd: (token, exit, finishedAt) => ended.push({ token, exit, finishedAt }),
    ...options,
  })
  return {
    pool,
    ended,
    setNow: (t: number) => {
      clock = t
    },
  }
}

/** The test fiber's services (TestClock among them), for the runs to see. */
const here = Effect.context<never>()

const jobOf = (
  job: WorkerPool.RunJob,
  context: Context.Context<never>,
  over: Partial<WorkerPool.PoolJob> = {},
): WorkerPool.PoolJob => ({ job, context, timeoutMs: 0, link: undefined, ...over })

/** A logger keeping each message's level and text. */
const recording = () => {
  const logs: Array<{ level: string; message: string }> = []
  const logger = Logger.make((o) => {
    const message = Array.isArray(o.message) ? o.message : [o.message]
    logs.push({ level: o.logLevel, message: String(message[0]) })
  })
  return { logs, layer: Logger.layer([logger]) }
}

describe("WorkerPool, driven directly (SPEC §16)", () => {
  it.effect(
    "holds at most `workers` runs, reports each end with its token and time, and frees its slot",
    () =>
      Effect.gen(function* () {
        const context = yield* here
        const { pool, ended, setNow } = poolOf()
        expect([pool.workers, pool.free, pool.inFlight]).toEqual([2, 2, 0])
        const gate = yield* Deferred.make<void>()
        pool.start("a", runInfo("a"), jobOf(Deferred.await(gate), context))
        pool.start(
          "b",
          runInfo("b"),
          jobOf(() => Deferred.await(gate), context),
        )
        expect([pool.free, pool.inFlight]).toEqual([0, 2])
        expect(pool.running().sort()).toEqual(["a", "b"])
        setNow(1_500)
        yield* Deferred.succeed(gate, undefined)
        yield* TestClock.adjust(0)
        expect(ended.map((e) => [e.token, e.exit._tag, e.finishedAt])).toEqual([
          ["a", "Success", 1_500],
          ["b", "Success", 1_500],
        ])
        expect([pool.free, pool.inFlight, pool.running()]).toEqual([2, 0, []])
        // The freed slots take new runs.
        pool.start("c", runInfo("c"), jobOf(Effect.succeed(7), context))
        expect(ended.at(-1)?.token).toBe("c")
        expect(ended.at(-1)?.exit).toEqual(Exit.succeed(7))
        expect(pool.free).toBe(2)
      }),
  )

  it.effect(
    "a job that ends synchronously is reported before start returns; one that throws is a defect",
    () =>
      Effect.gen(function* () {
        const context = yield* here
        const { pool, ended } = poolOf()
        const seen: Array<Task.RunInfo> = []
        pool.start(
          "sync",
          runInfo("sync"),
          jobOf((run) => Effect.sync(() => seen.push(run)), context),
        )
        expect(ended.map((e) => e.token)).toEqual(["sync"])
        expect(seen).toEqual([runInfo("sync")])
        const boom = new Error("boom")
        pool.start(
          "throws",
          runInfo("throws"),
          jobOf(() => {
            throw boom
          }, context),
        )
        const exit = ended[1]?.exit
        expect(exit !== undefined && Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
        expect(
          exit !== undefined && Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined,
        ).toBe(boom)
        expect(pool.free).toBe(2)
      }),
  )

  it.effect("a run sees CurrentRun and a Scope of its own, closed before its end is reported", () =>
    Effect.gen(function* () {
      const context = yield* here
      const order: Array<string> = []
      const { pool, ended } = poolOf({
        onEnd: (token) => order.push(`reported ${token}`),
      })
      pool.start(
        "scoped",
        runInfo("scoped"),
        jobOf(
          Effect.gen(function* () {
            order.push(`running ${(yield* Run.CurrentRun).id}`)
            yield* Effect.addFinalizer(() => Effect.sync(() => order.push("finalizer")))
            yield* Effect.sleep(10)
          }),
          context,
        ),
      )
      yield* TestClock.adjust(10)
      expect(order).toEqual(["running scoped", "finalizer", "reported scoped"])
      expect(ended).toEqual([])
      expect(pool.free).toBe(2)
    }),
  )

  it.effect("a failing finalizer fails the run, and its cause is kept beside the job's own", () =>
    Effect.gen(function* () {
      const context = yield* here
      const { pool, ended } = poolOf()
      const withBadFinalizer = (job: Effect.Effect<unknown, unknown>) =>
        Effect.andThen(
          Effect.addFinalizer(() => Effect.die("finalizer broke")),
          job,
        )
      pool.start("ok", runInfo("ok"), jobOf(withBadFinalizer(Effect.succeed(1)), context))
      pool.start("failed", runInfo("failed"), jobOf(withBadFinalizer(Effect.fail("job")), context))
      yield* TestClock.adjust(0)
      const byToken = new Map(ended.map((e) => [e.token, e.exit]))
      const ok = byToken.get("ok")
      expect(ok !== undefined && Exit.isFailure(ok) ? Cause.squash(ok.cause) : ok).toBe(
        "finalizer broke",
      )
      const failed = byToken.get("failed")
      expect(failed !== undefined && Exit.isFailure(failed)).toBe(true)
      if (failed !== undefined && Exit.isFailure(failed)) {
        expect(failed.cause.reasons.map((r) => r._tag)).toEqual(["Fail", "Die"])
      }
      expect(pool.free).toBe(2)
    }),
  )

  it.effect("a finalizer that succeeds leaves the run's exit as it was", () =>
    Effect.gen(function* () {
      const context = yield* here
      const { pool, ended } = poolOf()
      const job = Effect.andThen(
        Effect.addFinalizer(() => Effect.yieldNow),
        Effect.fail("job"),
      )
      pool.start("failed", runInfo("failed"), jobOf(job, context))
      yield* TestClock.adjust(0)
      expect(ended.map((e) => e.exit)).toEqual([Exit.fail("job")])
    }),
  )

  it.effect("a run past its timeout is interrupted and fails with RunTimedOut; 0 means never", () =>
    Effect.gen(function* () {
      const context = yield* here
      const { pool, ended } = poolOf()
      pool.start("slow", runInfo("slow"), jobOf(Effect.sleep(1_000), context, { timeoutMs: 300 }))
      pool.start("patient", runInfo("patient"), jobOf(Effect.sleep(5_000), context))
      yield* TestClock.adjust(299)
      expect(ended).toEqual([])
      yield* TestClock.adjust(1)
      expect(ended.map((e) => e.token)).toEqual(["slow"])
      expect(ended[0]?.exit).toEqual(Exit.fail(new Run.RunTimedOut(300)))
      yield* TestClock.adjust(4_700)
      expect(ended.map((e) => [e.token, e.exit._tag])).toEqual([
        ["slow", "Failure"],
        ["patient", "Success"],
      ])
    }),
  )

  it.effect(
    "logs a failure at Warning, a timeout with its bound and a defect at Error, naming the run",
    () => {
      const { logs, layer } = recording()
      return Effect.gen(function* () {
        const context = yield* here
        for (const spans of [false, true]) {
          logs.length = 0
          const { pool } = poolOf({ logFailures: true, spans, workers: 5 })
          const info = runInfo("t")
          pool.start("ok", info, jobOf(Effect.void, context))
          pool.start("failed", info, jobOf(Effect.fail("no"), context))
          pool.start("died", info, jobOf(Effect.die("dead"), context))
          pool.start("timed", info, jobOf(Effect.never, context, { timeoutMs: 5 }))
          pool.start("interrupted", info, jobOf(Effect.interrupt, context))
          yield* TestClock.adjust(5)
          const label = "(task t, slot 1970-01-01T00:00:01.000Z, attempt 2)"
          expect(logs).toEqual([
            { level: "Warn", message: `tickwork run failed ${label}` },
            { level: "Error", message: `tickwork run died ${label}` },
            { level: "Warn", message: `tickwork run timed out after 5 ms ${label}` },
          ])
        }
      }).pipe(Effect.provide(layer))
    },
  )

  it.effect("logs nothing for a failure when failure logs are off", () => {
    const { logs, layer } = recording()
    return Effect.gen(function* () {
      const context = yield* here
      for (const spans of [false, true]) {
        const { pool, ended } = poolOf({ spans })
        pool.start("failed", runInfo("t"), jobOf(Effect.fail("no"), context))
        pool.start("died", runInfo("t"), jobOf(Effect.die("dead"), context))
        yield* TestClock.adjust(0)
        expect(ended.length).toBe(2)
      }
      expect(logs).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "with spans, each run is a root span named tickwork.run, linked to the scheduling span",
    () =>
      Effect.gen(function* () {
        const spans: Array<Tracer.Span> = []
        const tracer = Tracer.make({
          span: (options) => {
            const span = new Tracer.NativeSpan(options)
            spans.push(span)
            return span
          },
        })
        yield* Effect.gen(function* () {
          const context = yield* here
          const { pool } = poolOf({ spans: true })
          yield* Effect.withSpan(
            Effect.gen(function* () {
              const scheduling = yield* Effect.currentSpan
              pool.start(
                "linked",
                runInfo("linked"),
                jobOf(Effect.void, context, { link: scheduling }),
              )
              pool.start("unlinked", runInfo("plain", { attempt: 1 }), jobOf(Effect.void, context))
            }),
            "scheduling",
          )
        }).pipe(Effect.withTracer(tracer))
        const runs = spans.filter((s) => s.name === "tickwork.run")
        expect(runs.length).toBe(2)
        const scheduling = spans.find((s) => s.name === "scheduling")
        expect(runs.map((s) => Option.isNone(s.parent))).toEqual([true, true])
        expect(runs[0]?.links.map((l) => l.span)).toEqual([scheduling])
        expect(runs[1]?.links).toEqual([])
        expect(Object.fromEntries(runs[0]?.attributes ?? [])).toEqual({
          "tickwork.task": "linked",
          "tickwork.slot": 1_000,
          "tickwork.due": 1_000,
          "tickwork.attempt": 2,
          "tickwork.run_number": 3,
          "tickwork.lateness_ms": 250,
        })
      }),
  )

  it.effect("run annotations sit beside those the job's context already carries", () => {
    const seen: Array<Record<string, unknown>> = []
    const logger = Logger.make((o) => {
      seen.push({ ...o.fiber.getRef(References.CurrentLogAnnotations) })
    })
    return Effect.gen(function* () {
      const context = yield* Effect.annotateLogs(here, { tenant: "acme" })
      const plain = yield* here
      const { pool } = poolOf({ logAnnotations: true })
      pool.start("a", runInfo("a"), jobOf(Effect.log("one"), context))
      pool.start("b", runInfo("b", { attempt: 1 }), jobOf(Effect.log("two"), plain))
      // The same job context again: the same annotations, read for this run.
      pool.start("c", runInfo("c", { slot: 5 }), jobOf(Effect.log("three"), context))
      yield* TestClock.adjust(0)
      expect(seen).toEqual([
        { tenant: "acme", "tickwork.task": "a", "tickwork.slot": 1_000, "tickwork.attempt": 2 },
        { "tickwork.task": "b", "tickwork.slot": 1_000, "tickwork.attempt": 1 },
        { tenant: "acme", "tickwork.task": "c", "tickwork.slot": 5, "tickwork.attempt": 2 },
      ])
    }).pipe(Effect.provide(Logger.layer([logger])))
  })

  it.effect("without run annotations a run's logs carry only its context's own", () => {
    const seen: Array<Record<string, unknown>> = []
    const logger = Logger.make((o) => {
      seen.push({ ...o.fiber.getRef(References.CurrentLogAnnotations) })
    })
    return Effect.gen(function* () {
      const context = yield* Effect.annotateLogs(here, { tenant: "acme" })
      const { pool } = poolOf()
      pool.start("a", runInfo("a"), jobOf(Effect.log("one"), context))
      yield* TestClock.adjust(0)
      expect(seen).toEqual([{ tenant: "acme" }])
    }).pipe(Effect.provide(Logger.layer([logger])))
  })

  it.effect(
    "interrupt ends the matching runs, waits for them and counts them; interruptAll ends all",
    () =>
      Effect.gen(function* () {
        const context = yield* here
        const { pool, ended } = poolOf({ workers: 3 })
        const cleaned: Array<string> = []
        const job = (token: string) =>
          Effect.andThen(
            Effect.addFinalizer(() =>
              Effect.andThen(
                Effect.sleep(50),
                Effect.sync(() => cleaned.push(token)),
              ),
            ),
            Effect.never,
          )
        for (const t of ["a", "b", "c"]) pool.start(t, runInfo(t), jobOf(job(t), context))
        const first = yield* Effect.forkChild(pool.interrupt((t) => t !== "b"))
        yield* TestClock.adjust(50)
        // Waited until both had ended: their finalizers ran and their ends were reported.
        expect(yield* Fiber.await(first)).toEqual(Exit.succeed(2))
        expect(cleaned.sort()).toEqual(["a", "c"])
        expect(ended.map((e) => [e.token, e.exit._tag]).sort()).toEqual([
          ["a", "Failure"],
          ["c", "Failure"],
        ])
        expect(pool.running()).toEqual(["b"])
        expect(yield* pool.interrupt(() => false)).toBe(0)
        const all = yield* Effect.forkChild(pool.interruptAll())
        yield* TestClock.adjust(50)
        expect(yield* Fiber.await(all)).toEqual(Exit.void)
        expect(cleaned.sort()).toEqual(["a", "b", "c"])
        expect([pool.free, pool.running()]).toEqual([3, []])
      }),
  )

  it.effect("a run interrupting itself is interrupted in place", () =>
    Effect.gen(function* () {
      const context = yield* here
      const { pool, ended } = poolOf()
      const after: Array<string> = []
      pool.start(
        "self",
        runInfo("self"),
        jobOf(
          Effect.andThen(
            pool.interrupt((t) => t === "self"),
            Effect.sync(() => after.push("went on")),
          ),
          context,
        ),
      )
      yield* TestClock.adjust(0)
      expect(after).toEqual([])
      const exit = ended[0]?.exit
      expect(
        exit !== undefined && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause),
      ).toBe(true)
    }),
  )

  it.effect("interruptAllUnsafe sends the interruption without waiting for the runs", () =>
    Effect.gen(function* () {
      const context = yield* here
      const { pool, ended } = poolOf()
      const masked = Effect.uninterruptible(Effect.sleep(100))
      pool.start("masked", runInfo("masked"), jobOf(masked, context))
      pool.start("plain", runInfo("plain"), jobOf(Effect.never, context))
      pool.interruptAllUnsafe()
      yield* TestClock.adjust(0)
      expect(ended.map((e) => e.token)).toEqual(["plain"])
      yield* TestClock.adjust(100)
      expect(ended.map((e) => [e.token, e.exit._tag])).toEqual([
        ["plain", "Failure"],
        ["masked", "Failure"],
      ])
    }),
  )
})

describe("WorkerPool, what a run is detached from", () => {
  it.effect(
    "a run's span is a root span even when the job's context carries the scheduling span",
    () =>
      Effect.gen(function* () {
        const spans: Array<Tracer.Span> = []
        const tracer = Tracer.make({
          span: (options) => {
            const span = new Tracer.NativeSpan(options)
            spans.push(span)
            return span
          },
        })
        yield* Effect.withSpan(
          Effect.gen(function* () {
            // Captured inside the span: the context names it as the current parent.
            const context = yield* here
            const { pool } = poolOf({ spans: true })
            pool.start("run", runInfo("run"), jobOf(Effect.void, context))
          }),
          "scheduling",
        ).pipe(Effect.withTracer(tracer))
        const run = spans.find((s) => s.name === "tickwork.run")
        expect(run !== undefined && Option.isNone(run.parent)).toBe(true)
      }),
  )

  it.effect("a dead run's cause names the run's span, with no stack frame inside the pool", () =>
    Effect.gen(function* () {
      const context = yield* here
      const { pool, ended } = poolOf({ spans: true })
      pool.start("dies", runInfo("dies"), jobOf(Effect.die(new Error("boom")), context))
      const exit = ended[0]?.exit
      const pretty = exit !== undefined && Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
      const frame = pretty.split("\n").find((line) => line.includes("tickwork.run"))
      expect(frame?.trim()).toBe("at tickwork.run")
    }),
  )

  it.effect(
    "an interruption that arrives while a run's finalizers run waits for them, then reports the run interrupted",
    () =>
      Effect.gen(function* () {
        const context = yield* here
        const { pool, ended } = poolOf()
        const closed: Array<number> = []
        const job = Effect.andThen(
          Effect.addFinalizer(() =>
            Effect.andThen(
              Effect.sleep(50),
              Effect.sync(() => closed.push(50)),
            ),
          ),
          Effect.succeed("done"),
        )
        pool.start("closing", runInfo("closing"), jobOf(job, context))
        yield* TestClock.adjust(10)
        pool.interruptAllUnsafe()
        yield* TestClock.adjust(39)
        expect([ended.length, pool.free]).toEqual([0, 1])
        yield* TestClock.adjust(1)
        expect(closed).toEqual([50])
        const exit = ended[0]?.exit
        expect(
          exit !== undefined && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause),
        ).toBe(true)
        expect(pool.free).toBe(2)
      }),
  )

  it.effect("run annotations read outside a run name no run, and reading them does not throw", () =>
    Effect.gen(function* () {
      const context = yield* here
      const { pool } = poolOf({ logAnnotations: true })
      let annotations: Readonly<Record<string, unknown>> = {}
      pool.start(
        "a",
        runInfo("a"),
        jobOf(
          Effect.gen(function* () {
            annotations = yield* References.CurrentLogAnnotations
          }),
          context,
        ),
      )
      const none = {
        "tickwork.task": undefined,
        "tickwork.slot": undefined,
        "tickwork.attempt": undefined,
      }
      // In a fiber that is not a run (a logger writing later, from its own fiber).
      expect({ ...annotations }).toEqual(none)
      // Outside any fiber (a logger that formats in a timer callback).
      const outside = yield* Effect.promise(
        () => new Promise((resolve) => setImmediate(() => resolve({ ...annotations }))),
      )
      expect(outside).toEqual(none)
    }),
  )
})

describe("WorkerPool, a run interrupting itself after start returned", () => {
  it.effect("ends interrupted even while it masks interruption: it does not wait for itself", () =>
    Effect.gen(function* () {
      const context = yield* here
      const { pool, ended } = poolOf()
      const after: Array<string> = []
      // The run's fiber is known to the pool by now (start returned before the sleep ended),
      // and its own interruption, masked, could not end it: only failing in place does.
      const job = Effect.uninterruptible(
        Effect.sleep(10).pipe(
          Effect.andThen(pool.interrupt((t) => t === "self")),
          Effect.andThen(Effect.sync(() => after.push("went on"))),
        ),
      )
      pool.start("self", runInfo("self"), jobOf(job, context))
      yield* TestClock.adjust(10)
      expect(after).toEqual([])
      const exit = ended[0]?.exit
      expect(
        exit !== undefined && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause),
      ).toBe(true)
      expect([pool.free, pool.running()]).toEqual([2, []])
    }),
  )
})
