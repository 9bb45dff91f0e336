/**
 * A durable worker that cannot make progress says so (issue 28): `health` turns unhealthy when
 * work it could run has been due with no run starting for `health.stall`, and when the store
 * has failed for `health.storeFailure` (degraded before). In virtual time, on SQLite.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Health } from "@tickwork/runtime"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Metric, Schema } from "effect"
import { TestClock } from "effect/testing"
import { DurableScheduler, Errors, Handler, TaskStore } from "../src/index.ts"
import { sqlite, tempDir } from "./helpers.ts"

/** A SQLite store whose claims and reads fail while `broken.on` is set. */
const breakable = (file: string) =>
  Effect.gen(function* () {
    const base = Context.get(yield* Layer.build(sqlite(file)), TaskStore.TaskStore)
    const broken = { on: false }
    const error = new Errors.StoreError({
      operation: "claim due tasks",
      reason: "connection-lost",
      detail: "injected",
      message: "the store is unreachable (injected)",
    })
    const fail = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.suspend(() => (broken.on ? (Effect.fail(error) as never) : effect))
    const store = TaskStore.TaskStore.of({
      ...base,
      claim: (o) => fail(base.claim(o)),
      nextDue: (h) => fail(base.nextDue(h)),
      nextTimes: (h) => fail(base.nextTimes(h)),
    })
    return { store, broken }
  })

describe("DurableScheduler.health", () => {
  it.effect("stalled: every worker held by a run that never ends while work waits", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const stuck = Handler.make("stuck", Schema.Struct({}), () => Effect.never)
      const { store } = yield* breakable(t.file())
      const { durable } = yield* DurableScheduler.make({
        handlers: [stuck],
        workers: 1,
        shutdown: "interrupt",
        shutdownGrace: 0,
        health: { stall: "1 minute" },
      }).pipe(Effect.provideService(TaskStore.TaskStore, store))
      yield* durable.schedule({ id: "a", handler: stuck, payload: {}, schedule: Schedule.once(0) })
      yield* durable.schedule({ id: "b", handler: stuck, payload: {}, schedule: Schedule.once(10) })
      yield* TestClock.adjust(10)
      expect(yield* durable.status("a")).toBe("running")
      expect(yield* durable.status("b")).toBe("scheduled")
      expect((yield* durable.health).status).toBe("ok")
      yield* TestClock.adjust(59_999)
      expect((yield* durable.health).status).toBe("ok")
      yield* TestClock.adjust(1)
      const h = yield* durable.health
      expect(h.status).toBe("unhealthy")
      expect(h.reasons.map((r) => r.code)).toEqual(["stalled"])
    }),
  )

  it.effect(
    "the gauge turns unhealthy on a stall in the background, with nobody calling health",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const stuck = Handler.make("stuck", Schema.Struct({}), () => Effect.never)
        const { store } = yield* breakable(t.file())
        const gauge = Effect.map(Metric.snapshot, (all) =>
          all.find(
            (m) => m.id === "tickwork_health" && m.attributes?.scheduler === "watched-durable",
          ),
        )
        const { durable } = yield* DurableScheduler.make({
          handlers: [stuck],
          workers: 1,
          shutdown: "interrupt",
          shutdownGrace: 0,
          health: { stall: "1 minute" },
          runtime: { name: "watched-durable" },
        }).pipe(Effect.provideService(TaskStore.TaskStore, store))
        yield* durable.schedule({
          id: "a",
          handler: stuck,
          payload: {},
          schedule: Schedule.once(0),
        })
        yield* durable.schedule({
          id: "b",
          handler: stuck,
          payload: {},
          schedule: Schedule.once(10),
        })
        yield* TestClock.adjust(Health.refreshMs)
        expect((yield* gauge)?.state).toMatchObject({ value: 0 })
        // "b" is due at 10 and never starts: stalled from 60 010, seen by the look at 65 000.
        yield* TestClock.adjust(60_010)
        expect((yield* gauge)?.state).toMatchObject({ value: 2 })
      }),
  )

  it.effect("store failing: degraded at once, unhealthy after health.storeFailure", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const quick = Handler.make("quick", Schema.Struct({}), () => Effect.void)
      const { store, broken } = yield* breakable(t.file())
      const { durable } = yield* DurableScheduler.make({
        handlers: [quick],
        health: { stall: "10 minutes", storeFailure: "30 seconds" },
      }).pipe(Effect.provideService(TaskStore.TaskStore, store))
      yield* durable.schedule({
        id: "a",
        handler: quick,
        payload: {},
        schedule: Schedule.once(1_000),
      })
      expect((yield* durable.health).status).toBe("ok")
      broken.on = true
      // The dispatcher's next read (woken by the insert, at 0) fails: the outage starts.
      yield* TestClock.adjust(1_000)
      expect(yield* durable.health).toMatchObject({
        status: "degraded",
        reasons: [{ code: "store-failing", message: expect.stringContaining("1000 ms") }],
      })
      yield* TestClock.adjust(28_999)
      expect((yield* durable.health).status).toBe("degraded")
      yield* TestClock.adjust(1)
      expect((yield* durable.health).status).toBe("unhealthy")
      broken.on = false
      yield* TestClock.adjust(10_000) // the claim is retried and works: the outage ends
      expect(yield* durable.status("a")).toBe("done")
      expect(yield* durable.health).toEqual({ status: "ok", reasons: [] })
    }),
  )

  it.effect(
    "a store failing as corrupt: the program fails with StoreCorrupt and health says store-corrupt",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const quick = Handler.make("quick", Schema.Struct({}), () => Effect.void)
        const base = Context.get(yield* Layer.build(sqlite(t.file())), TaskStore.TaskStore)
        const corrupt = new Errors.StoreError({
          operation: "claim due tasks",
          reason: "corrupt",
          detail: "database disk image is malformed (SQLITE_CORRUPT)",
          message: "the task store failed to claim due tasks: the file is damaged",
        })
        const store = TaskStore.TaskStore.of({
          ...base,
          claim: () => Effect.fail(corrupt),
          integrity: { filename: t.file(), check: Effect.succeed(["Tree 2 page 7: bad"]) },
        })
        const made = yield* Deferred.make<DurableScheduler.DurableSchedulerShape>()
        // The program the scheduler serves, on a fiber of its own.
        const program = yield* Effect.forkChild(
          Effect.scoped(
            Effect.gen(function* () {
              const { durable } = yield* DurableScheduler.make({ handlers: [quick] }).pipe(
                Effect.provideService(TaskStore.TaskStore, store),
              )
              yield* Deferred.succeed(made, durable)
              return yield* Effect.never
            }),
          ),
          { startImmediately: true },
        )
        const durable = yield* Deferred.await(made)
        yield* durable.schedule({
          id: "a",
          handler: quick,
          payload: {},
          schedule: Schedule.once(0),
        })
        const exit = yield* Fiber.await(program)
        const died = Exit.isFailure(exit)
          ? exit.cause.reasons.find((r) => r._tag === "Die")
          : undefined
        expect(died?._tag === "Die" && died.defect).toMatchObject({
          _tag: "StoreCorrupt",
          filename: t.file(),
        })
        const h = yield* durable.health
        expect(h.status).toBe("unhealthy")
        expect(h.reasons.find((r) => r.code === "store-corrupt")?.message).toContain(
          "Tree 2 page 7: bad",
        )
      }),
  )
})
