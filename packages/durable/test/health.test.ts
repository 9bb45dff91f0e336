/**
 * A durable worker that cannot make progress says so (issue 28): `health` turns unhealthy when
 * work it could run has been due with no run starting for `health.stall`, and when the store
 * has failed for `health.storeFailure` (degraded before). In virtual time, on SQLite.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Context, Effect, Layer, Schema } from "effect"
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
})
