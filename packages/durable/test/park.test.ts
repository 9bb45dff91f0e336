/**
 * The dispatcher's park with every worker busy (SPEC §17.3): on a shared store it does not read
 * the store's next times again within a poll — a run that ends during that round trip would
 * wait for it before its worker is given work — and it reads them again once a poll has passed
 * (a breaker opened meanwhile is seen at most a poll late). In virtual time, on a shared SQLite
 * store (`exclusive: false`: it polls).
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Context, Deferred, Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { DurableScheduler, Handler, Sqlite, TaskStore } from "../src/index.ts"
import { tempDir } from "./helpers.ts"

describe("dispatcher: parking for a worker", () => {
  it.effect("reads the next times at most once a poll while no worker is free", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const base = Context.get(
        yield* Layer.build(Sqlite.layer({ filename: t.file(), exclusive: false })),
        TaskStore.TaskStore,
      )
      /** The dispatcher's reads for a park with no worker free (it asks for no handler). */
      let busyReads = 0
      const store = TaskStore.TaskStore.of({
        ...base,
        nextTimes: (handlers) =>
          Effect.tap(base.nextTimes(handlers), () =>
            Effect.sync(() => {
              if (handlers.length === 0) busyReads++
            }),
          ),
      })
      const gate = yield* Deferred.make<void>()
      const job = Handler.make("job", Schema.Struct({}), () => Deferred.await(gate))
      const { durable } = yield* DurableScheduler.make({
        handlers: [job],
        workers: 1,
        pollInterval: 1_000,
        shutdown: "interrupt",
        shutdownGrace: 0,
      }).pipe(Effect.provideService(TaskStore.TaskStore, store))
      yield* durable.schedule({ id: "a", handler: job, payload: {}, schedule: Schedule.once(0) })
      yield* TestClock.adjust(1)
      expect(yield* durable.status("a")).toBe("running")
      const before = busyReads
      // Each insert wakes the dispatcher, which finds no worker free and parks again.
      for (const id of ["b", "c", "d"]) {
        yield* durable.schedule({ id, handler: job, payload: {}, schedule: Schedule.once(0) })
        yield* TestClock.adjust(1)
        expect(yield* durable.status(id)).toBe("scheduled")
      }
      expect(busyReads - before).toBe(0)
      // A poll later the timer's pass reads them again.
      yield* TestClock.adjust(1_000)
      expect(busyReads - before).toBeGreaterThanOrEqual(1)
      yield* Deferred.succeed(gate, undefined)
      // Runs go on as workers free up (within a few polls of virtual time).
      const states = () => Effect.forEach(["a", "b", "c", "d"], (id) => durable.status(id))
      for (let k = 0; k < 50 && (yield* states()).some((s) => s !== "done"); k++)
        yield* TestClock.adjust(100)
      expect(yield* states()).toEqual(["done", "done", "done", "done"])
    }),
  )
})
