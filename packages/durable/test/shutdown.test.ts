/**
 * Closing the scheduler, per shutdown policy, with one claim running and one claimed but not
 * started (its worker is taken by an in-memory task). No policy starts a new run while closing:
 * the unstarted claim is handed back at once, due again for any process, without waiting for
 * the drain. `drain` and `cancel` let the running run finish; `interrupt` hands it back at once.
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

describe("closing with a running and an unstarted claim", () => {
  for (const policy of ["drain", "cancel", "interrupt"] as const) {
    it.live(
      `shutdown "${policy}"`,
      () =>
        Effect.gen(function* () {
          const dir = tempDir()
          const file = dir.file()
          const gate = yield* Deferred.make<void>()
          const busy = yield* Deferred.make<void>()
          const started: Array<string> = []
          const slow = Handler.make("slow", Schema.Struct({}), (_, run) =>
            Effect.andThen(
              Effect.sync(() => started.push(run.id)),
              Deferred.await(gate),
            ),
          )
          const scope = yield* Scope.make()
          const store = yield* Layer.buildWithScope(sqlite(file), scope)
          const { durable, runtime } = yield* DurableScheduler.make({
            handlers: [slow],
            workers: 2,
            shutdown: policy,
            shutdownTimeout: "10 minutes",
          }).pipe(Scope.provide(scope), Effect.provide(store))
          // One of the two workers is taken: of the two claims, one runs and one waits.
          yield* runtime.schedule({
            id: "busy",
            schedule: Schedule.once(0),
            job: Deferred.await(busy),
          })
          yield* until(
            "the busy task to start",
            Effect.map(runtime.status("busy"), (s) => s === "running"),
          )
          yield* durable.scheduleAll(
            ["t1", "t2"].map((id) => ({
              id,
              handler: slow,
              payload: {},
              schedule: Schedule.once(0),
            })),
          )
          yield* until(
            "two claims, one started",
            Effect.map(durable.stats, (s) => s.inFlight === 2 && started.length === 1),
          )
          const running = started[0] as string
          const waiting = running === "t1" ? "t2" : "t1"

          const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), {
            startImmediately: true,
          })
          if (policy !== "interrupt") {
            // Handed back while the running run still holds its worker.
            yield* until(
              "the unstarted claim to be released",
              Effect.map(durable.status(waiting), (s) => s === "scheduled"),
            )
            expect(yield* durable.status(running)).toBe("running")
            // A free worker starts nothing; the running run may finish.
            yield* Deferred.succeed(busy, undefined)
            yield* Deferred.succeed(gate, undefined)
          }
          // Under "interrupt" nothing is awaited: the close ends by itself.
          yield* Fiber.join(closing)

          expect(started).toEqual([running])
          const found = yield* withScheduler(
            sqlite(file),
            { handlers: [slow], claim: false },
            (api) =>
              Effect.all({
                waiting: api.ledger(waiting),
                running: api.ledger(running),
                states: Effect.all([api.status(waiting), api.status(running)]),
              }),
          )
          expect(
            found.waiting.map((o) => [o.kind, o.kind === "ran" ? o.outcome : o.cause]),
          ).toEqual([["released", "not started"]])
          if (policy === "interrupt") {
            expect(found.running.map((o) => [o.kind, o.kind === "ran" ? "" : o.cause])).toEqual([
              ["released", "interrupted"],
            ])
            expect(found.states).toEqual(["scheduled", "scheduled"])
          } else {
            expect(
              found.running.map((o) => [o.kind, o.kind === "ran" ? o.outcome : o.cause]),
            ).toEqual([["ran", "succeeded"]])
            expect(found.states).toEqual(["scheduled", "done"])
          }
          dir.cleanup()
        }),
      120_000,
    )
  }
})
