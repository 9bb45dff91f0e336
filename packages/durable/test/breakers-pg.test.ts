/**
 * SPEC §7 on PostgreSQL: a shared breaker across a fleet, two processes (real time, outcomes
 * only, generous deadlines). The SQLite cycle under virtual time is `breakers.test.ts`.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Option } from "effect"
import { Postgres } from "../src/index.ts"
import { failingMail as mail, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

describe("a shared breaker across a fleet on PostgreSQL", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  it.live(
    "failures in one process open the breaker, and another process holds its tasks",
    () =>
      Effect.gen(function* () {
        const flaky = mail("flaky")
        const steady = mail("steady")
        flaky.failing.add("f")
        const breakers = { smtp: { failures: 1, coolDown: "1 hour" as const } }
        const waitFor = <A>(what: Effect.Effect<A, unknown>, done: (a: A) => boolean) =>
          Effect.gen(function* () {
            const end = Date.now() + 30_000
            for (;;) {
              const a = yield* what
              if (done(a) || Date.now() > end) return a
              yield* Effect.sleep(50)
            }
          })
        yield* withScheduler(
          Postgres.layer({ url: db.url }),
          { handlers: [steady.handler], pollInterval: 50, breakers },
          (two) =>
            withScheduler(
              Postgres.layer({ url: db.url }),
              { handlers: [flaky.handler], pollInterval: 50, breakers },
              (one) =>
                Effect.gen(function* () {
                  yield* two.schedule({
                    id: "o",
                    handler: steady.handler,
                    payload: {},
                    schedule: Schedule.fixedRate(200),
                    breaker: "smtp",
                  })
                  yield* waitFor(
                    Effect.sync(() => steady.runs.length),
                    (n) => n >= 1,
                  )
                  // The failing task runs only in the first process (only it has the handler).
                  yield* one.schedule({
                    id: "f",
                    handler: flaky.handler,
                    payload: {},
                    schedule: Schedule.once(0),
                    breaker: "smtp",
                  })
                  const state = yield* waitFor(two.status("o"), (s) => s === "paused")
                  expect(state).toBe("paused")
                  expect(flaky.runs.length).toBe(1)
                  const seen = Option.getOrThrow(yield* two.breaker("smtp"))
                  expect([seen.state, seen.held]).toEqual(["open", ["o"]])
                  expect(Option.getOrThrow(yield* two.info("o")).pausedReason).toBe("breaker")
                  // Held: no more runs of o in the second process.
                  const ran = steady.runs.length
                  yield* Effect.sleep(600)
                  expect(steady.runs.length).toBe(ran)
                }),
            ),
        )
        // A process started later finds the breaker open and the task held.
        yield* withScheduler(
          Postgres.layer({ url: db.url }),
          { handlers: [steady.handler], pollInterval: 50, breakers },
          (three) =>
            Effect.gen(function* () {
              const seen = Option.getOrThrow(yield* three.breaker("smtp"))
              expect([seen.state, seen.held]).toEqual(["open", ["o"]])
              expect(yield* three.status("f")).toBe("failed")
            }),
        )
      }),
    60_000,
  )

  it.live(
    "two processes failing tasks of one breaker at once move it in turn, without store errors",
    () =>
      Effect.gen(function* () {
        const boom = mail("boom")
        for (const id of ["t0", "t1", "t2", "t3", "t4", "t5"]) boom.failing.add(id)
        const options = {
          handlers: [boom.handler],
          pollInterval: 50,
          breakers: { smtp: { failures: 2, coolDown: 200 } },
        }
        yield* withScheduler(Postgres.layer({ url: db.url }), options, (one) =>
          withScheduler(Postgres.layer({ url: db.url }), options, (two) =>
            Effect.gen(function* () {
              for (const id of boom.failing) {
                yield* one.schedule({
                  id,
                  handler: boom.handler,
                  payload: {},
                  schedule: Schedule.fixedRate(100),
                  breaker: "smtp",
                })
              }
              yield* Effect.sleep(2_500)
              const stats = [yield* one.stats, yield* two.stats]
              // Lock order (breaker, then rows): no deadlock, no failed commit.
              expect(stats.map((x) => x.storeFailures)).toEqual([0, 0])
              const b = Option.getOrThrow(yield* two.breaker("smtp"))
              expect(["open", "half-open"]).toContain(b.state)
              expect(b.opens).toBeGreaterThanOrEqual(1)
              for (const h of b.held) expect(b.tasks).toContain(h)
              const events = (yield* Effect.forEach([...boom.failing], one.ledger)).flat()
              expect(events.some((o) => o.kind === "breaker" && o.cause === "open")).toBe(true)
            }),
          ),
        )
      }),
    60_000,
  )
})
