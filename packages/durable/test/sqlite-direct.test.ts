/**
 * The SQLite store runs its task inserts straight on the connection (`internal/direct.ts`),
 * not through effect/sql's statement layer: under the client's own rules (a statement outside a
 * transaction waits for another fiber's open one and is not part of it; one inside a
 * transaction runs on it), and through effect/sql, its span included, under a tracer that records spans.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Deferred, Effect, Exit, Fiber, Tracer } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { Sqlite } from "../src/index.ts"
import * as Direct from "../src/internal/direct.ts"
import * as SqliteClient from "../src/SqliteClient.ts"
import { recording, tempDir, withScheduler } from "./helpers.ts"

let t = tempDir()
afterEach(() => {
  t.cleanup()
  t = tempDir()
})

/** A SQLite client on a fresh file with a one-column table `t`. */
const client = Effect.gen(function* () {
  const { client } = yield* SqliteClient.make({ filename: t.file() })
  yield* client`CREATE TABLE t (x TEXT NOT NULL)`
  return client
})

/** Lets other fibers run for a while: enough turns for a waiting statement to finish. */
const turns = Effect.repeat(Effect.yieldNow, { times: 50 })

describe("SQLite statements straight on the connection", () => {
  it.live(
    "outside a transaction, one waits for another fiber's open transaction and is not rolled back with it",
    () =>
      Effect.gen(function* () {
        const sql = yield* client
        const inside = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        const tx = yield* Effect.forkChild(
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`INSERT INTO t VALUES ('in the transaction')`
              yield* Deferred.succeed(inside, undefined)
              yield* Deferred.await(gate)
              return yield* Effect.fail("roll back")
            }),
          ),
        )
        yield* Deferred.await(inside)
        const outside = yield* Effect.forkChild(
          Direct.statement(sql, "INSERT INTO t VALUES (?) RETURNING x", ["outside"]),
        )
        yield* turns
        // Still waiting for the transaction's permit.
        expect(outside.pollUnsafe()).toBeUndefined()
        yield* Deferred.succeed(gate, undefined)
        expect(Exit.isFailure(yield* Fiber.await(tx))).toBe(true)
        expect(yield* Fiber.join(outside)).toEqual([{ x: "outside" }])
        expect(yield* sql`SELECT x FROM t`).toEqual([{ x: "outside" }])
      }).pipe(Effect.scoped, Effect.provide(Reactivity.layer)),
  )

  it.live("inside a transaction, one runs on it and is rolled back with it", () =>
    Effect.gen(function* () {
      const sql = yield* client
      const exit = yield* sql
        .withTransaction(
          Effect.andThen(
            Direct.statement(sql, "INSERT INTO t VALUES (?) RETURNING x", ["inside"]),
            Effect.fail("roll back"),
          ),
        )
        // A statement that waited for the permit its own transaction holds would never end.
        .pipe(Effect.timeout("20 seconds"), Effect.exit)
      expect(exit).toEqual(Exit.fail("roll back"))
      expect(yield* sql`SELECT x FROM t`).toEqual([])
      const committed = yield* sql.withTransaction(
        Direct.statement(sql, "INSERT INTO t VALUES (?) RETURNING x", ["committed"]),
      )
      expect(committed).toEqual([{ x: "committed" }])
      expect(yield* sql`SELECT x FROM t`).toEqual([{ x: "committed" }])
    }).pipe(Effect.scoped, Effect.provide(Reactivity.layer)),
  )

  it.live("under a tracer that records spans, schedule()'s insert has its statement span", () =>
    Effect.gen(function* () {
      const spans: Array<{ name: string; query: unknown }> = []
      const tracer = Tracer.make({
        span: (options) => {
          const span = new Tracer.NativeSpan(options)
          const end = span.end.bind(span)
          span.end = (at, exit) => {
            end(at, exit)
            spans.push({ name: span.name, query: span.attributes.get("db.query.text") })
          }
          return span
        },
      })
      const { handler } = recording()
      yield* withScheduler(Sqlite.layer({ filename: t.file() }), { handlers: [handler] }, (d) =>
        d
          .schedule({ id: "a", handler, payload: { n: 1 }, schedule: Schedule.once(60_000) })
          .pipe(Effect.withTracer(tracer)),
      )
      const inserts = spans.filter(
        (s) => typeof s.query === "string" && s.query.startsWith("INSERT INTO tickwork_tasks"),
      )
      // effect/sql names a statement's span after the database system.
      expect(inserts.map((s) => s.name)).toEqual(["sqlite"])
    }),
  )
})
