/**
 * SPEC §8.5: a cancel decides on the row it locked (PostgreSQL). When another transaction ends
 * the task while the cancel waits — a second cancel (two processes booting with
 * `ensure({ set })`, or the CLI and the dashboard at once) or a completion — the cancel finds it
 * final, answers that it was not live, and writes nothing. The other transaction is the test's
 * own: it holds the row while the store's cancel starts, cancels the task and commits. Real
 * time: the test waits (bound 30 s) until the store's cancel waits on a lock.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Fiber, Option, Redacted, Schema } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { DurableScheduler, Handler, Postgres, TaskStore } from "../src/index.ts"
import { freshDatabase } from "./pg.ts"

const noop = Handler.make("noop", Schema.Struct({}), () => Effect.void)

describe("cancel on PostgreSQL", () => {
  it.live(
    "a cancel waiting on a row another transaction ended finds it final, writes nothing",
    () =>
      Effect.gen(function* () {
        const db = yield* Effect.promise(() => freshDatabase())
        yield* Effect.gen(function* () {
          const { durable: d } = yield* DurableScheduler.make({ handlers: [noop], claim: false })
          const store = yield* TaskStore.TaskStore
          yield* d.schedule({
            id: "x",
            handler: noop,
            payload: {},
            schedule: Schedule.fixedRate(60_000, { delay: 60_000 }),
          })
          const other = yield* PgClient.make({ url: Redacted.make(db.url), maxConnections: 1 })
          const waiting = Effect.map(
            other<{ readonly n: unknown }>`SELECT count(*) AS n FROM pg_locks WHERE NOT granted`,
            (rows) => Number(rows[0]?.n) > 0,
          )
          const cancel = yield* other.withTransaction(
            Effect.gen(function* () {
              yield* other`SELECT id FROM tickwork_tasks WHERE id = 'x' FOR UPDATE`
              const fiber = yield* Effect.forkChild(store.cancel("x", Date.now()), {
                startImmediately: true,
              })
              // The store's cancel now waits on the row this transaction holds.
              const bound = Date.now() + 30_000
              while (!(yield* waiting)) {
                if (Date.now() > bound) throw new Error("the store's cancel never waited")
                yield* Effect.sleep(10)
              }
              yield* other`UPDATE tickwork_tasks SET state = 'cancelled' WHERE id = 'x'`
              return fiber
            }),
          )
          expect(Option.isNone(yield* Fiber.join(cancel))).toBe(true)
          // The store's cancel wrote no event (the test's own cancel is a bare UPDATE).
          const events = yield* other<{ readonly n: unknown }>`SELECT count(*) AS n
          FROM tickwork_events WHERE task_id = 'x' AND kind = 'cancelled'`
          expect(Number(events[0]?.n)).toBe(0)
          expect(yield* d.status("x")).toBe("cancelled")
        }).pipe(
          Effect.scoped,
          Effect.provide(Postgres.layer({ url: db.url })),
          Effect.provide(Reactivity.layer),
        )
        yield* Effect.promise(() => db.drop())
      }),
  )
})
