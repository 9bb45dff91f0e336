/**
 * Closing the scheduler, per shutdown policy, with two runs in flight and a third task waiting
 * for a worker. No policy starts a new run while closing: the waiting task stays due for any
 * process. `drain` and `cancel` let the running runs finish; `interrupt` hands them back at once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Deferred, Effect, Exit, Fiber, Layer, Schema, Scope } from "effect"
import { DurableScheduler, Handler } from "../src/index.ts"
import { sqlite, tempDir, withScheduler } from "./helpers.ts"

/** Waits (live) for `check`, with a deadline generous for a busy machine. */
const until = (what: string, check: Effect.Effect<boolean, unknown>) =>
  Effect.gen(function* () {
    const end = Date.now() + 60_000
    while (!(yield* check)) {
      if (Date.now() > end) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(10)
    }
  })

describe("closing with runs in flight", () => {
  for (const policy of ["drain", "cancel", "interrupt"] as const) {
    it.live(
      `shutdown "${policy}"`,
      () =>
        Effect.gen(function* () {
          const dir = tempDir()
          const file = dir.file()
          const gate = yield* Deferred.make<void>()
          const started: Array<string> = []
          const slow = Handler.make("slow", Schema.Struct({}), (_, run) =>
            Effect.andThen(
              Effect.sync(() => started.push(run.id)),
              Deferred.await(gate),
            ),
          )
          const scope = yield* Scope.make()
          const store = yield* Layer.buildWithScope(sqlite(file), scope)
          const { durable } = yield* DurableScheduler.make({
            handlers: [slow],
            workers: 2,
            shutdown: policy,
            shutdownTimeout: "10 minutes",
          }).pipe(Scope.provide(scope), Effect.provide(store))
          // Two runs take both workers; a third task waits for one.
          yield* durable.scheduleAll(
            ["t1", "t2", "t3"].map((id) => ({
              id,
              handler: slow,
              payload: {},
              schedule: Schedule.once(0),
            })),
          )
          yield* until(
            "two runs to start",
            Effect.map(durable.stats, (s) => s.inFlight === 2 && started.length === 2),
          )
          const running = [...started].sort()
          const waiting = ["t1", "t2", "t3"].find((id) => !running.includes(id)) as string

          const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), {
            startImmediately: true,
          })
          if (policy !== "interrupt") {
            // The runs finish; the freed workers start nothing while closing.
            for (const id of running) expect(yield* durable.status(id)).toBe("running")
            yield* Deferred.succeed(gate, undefined)
          }
          // Under "interrupt" nothing is awaited: the close ends by itself.
          yield* Fiber.join(closing)

          expect([...started].sort()).toEqual(running)
          const found = yield* withScheduler(
            sqlite(file),
            { handlers: [slow], claim: false },
            (api) =>
              Effect.all({
                ledgers: Effect.all(running.map((id) => api.ledger(id))),
                states: Effect.all(running.map((id) => api.status(id))),
                waiting: api.status(waiting),
                waitingLedger: api.ledger(waiting),
              }),
          )
          // The task that never got a worker is untouched, due for any process.
          expect(found.waiting).toBe("scheduled")
          expect(found.waitingLedger).toEqual([])
          if (policy === "interrupt") {
            for (const ledger of found.ledgers) {
              expect(ledger.map((o) => [o.kind, o.kind === "ran" ? "" : o.cause])).toEqual([
                ["released", "interrupted"],
              ])
            }
            expect(found.states).toEqual(["scheduled", "scheduled"])
          } else {
            for (const ledger of found.ledgers) {
              expect(ledger.map((o) => [o.kind, o.kind === "ran" ? o.outcome : o.cause])).toEqual([
                ["ran", "succeeded"],
              ])
            }
            expect(found.states).toEqual(["done", "done"])
          }
          dir.cleanup()
        }),
      120_000,
    )
  }
})

describe("a hand-back with a pause requested (SPEC §5.5)", () => {
  it.live(
    "a task paused while its run is in flight is handed back paused, its pending run held",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const file = dir.file()
        const started: Array<string> = []
        const slow = Handler.make("slow", Schema.Struct({}), (_, run) =>
          Effect.andThen(
            Effect.sync(() => started.push(run.id)),
            Effect.never,
          ),
        )
        const scope = yield* Scope.make()
        const store = yield* Layer.buildWithScope(sqlite(file), scope)
        const { durable } = yield* DurableScheduler.make({
          handlers: [slow],
          workers: 1,
          shutdown: "interrupt",
        }).pipe(Scope.provide(scope), Effect.provide(store))
        yield* durable.schedule({
          id: "p",
          handler: slow,
          payload: {},
          schedule: Schedule.fixedRate("1 hour"),
        })
        yield* until(
          "the run to start",
          Effect.sync(() => started.length === 1),
        )
        // Asked for while the run is claimed: a request, which the run's end would apply.
        expect(yield* durable.pause("p")).toBe(true)
        yield* Scope.close(scope, Exit.void)
        const found = yield* withScheduler(
          sqlite(file),
          { handlers: [slow], claim: false },
          (api) => Effect.all({ state: api.status("p"), ledger: api.ledger("p") }),
        )
        expect(found.state).toBe("paused")
        expect(found.ledger.map((o) => [o.kind, o.kind === "ran" ? "" : o.cause])).toEqual([
          ["released", "interrupted"],
        ])
        dir.cleanup()
      }),
    120_000,
  )
})
