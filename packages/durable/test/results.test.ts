/**
 * Kept results (SPEC §19.3): a handler that declares a `result` schema has the value its run
 * succeeds with kept, encoded, with the run's ledger entry; `ledger` gives it back decoded, the
 * store admin as JSON text. Past `maxResultBytes`, or not encodable, the run still succeeds and
 * carries the typed error instead. SQLite and PostgreSQL.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Errors as CoreErrors, Schedule } from "@tickwork/core"
import { Effect, type Layer, Schema, type Scope } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import {
  type DurableScheduler,
  Handler,
  Postgres,
  SqliteClient,
  StoreAdmin,
  type TaskStore,
} from "../src/index.ts"
import { migrateWith, migrations } from "../src/internal/migrations.ts"
import { advance, sqlite, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

/** A charge: returns its receipt, whose `at` is a Date (encoded to an ISO string). */
const Receipt = Schema.Struct({ charged: Schema.Number, at: Schema.DateFromString })
const charge = Handler.make(
  "charge",
  Schema.Struct({ cents: Schema.Number }),
  (p) => Effect.succeed({ charged: p.cents, at: new Date(Date.UTC(2026, 0, 1)) }),
  { result: Receipt },
)
/** Returns a string of `n` characters: large on demand. */
const big = Handler.make(
  "big",
  Schema.Struct({ n: Schema.Number }),
  (p) => Effect.succeed("x".repeat(p.n)),
  {
    result: Schema.String,
  },
)
/** Returns a value its own schema refuses (a negative number for a positive schema). */
const refused = Handler.make("refused", Schema.Struct({}), () => Effect.succeed(-1), {
  result: Schema.Number.check(Schema.isGreaterThan(0)),
})
/** Returns a value, but declares no result schema: nothing is kept (as before). */
const plain = Handler.make("plain", Schema.Struct({}), () => Effect.succeed({ ignored: true }))

const handlers = [charge, big, refused, plain]

const ranOf = (ledger: ReadonlyArray<DurableScheduler.DurableOccurrence>) =>
  ledger.filter((o): o is DurableScheduler.Ran => o.kind === "ran")

/** The five tasks' ids. */
const ids = ["c", "fits", "over", "bad", "p"]

/**
 * Waits until every task of the story is final: on PostgreSQL, in real time (completions commit
 * on the store's own schedule), polling under a generous bound.
 */
const allFinal = (d: DurableScheduler.DurableSchedulerShape) =>
  Effect.gen(function* () {
    const end = Date.now() + 30_000
    const final = () =>
      Effect.map(
        Effect.forEach(ids, (id) => d.status(id)),
        (states) => states.every((s) => s === "done"),
      )
    while (!(yield* final()) && Date.now() < end) yield* Effect.sleep(20)
  })

/**
 * The story on one store; `admin` opens the same store for an operator; `run` makes the tasks
 * (due at 10) run.
 */
const story = (
  store: Layer.Layer<TaskStore.TaskStore, unknown>,
  admin: Effect.Effect<StoreAdmin.StoreAdminShape, unknown, Scope.Scope>,
  run: (d: DurableScheduler.DurableSchedulerShape) => Effect.Effect<void, unknown>,
) =>
  Effect.gen(function* () {
    yield* withScheduler(store, { handlers, maxResultBytes: 100 }, (d) =>
      Effect.gen(function* () {
        yield* d.schedule({
          id: "c",
          handler: charge,
          payload: { cents: 250 },
          schedule: Schedule.once(10),
        })
        // 98 characters: 100 bytes of JSON, exactly the limit; 99: one past it.
        yield* d.schedule({
          id: "fits",
          handler: big,
          payload: { n: 98 },
          schedule: Schedule.once(10),
        })
        yield* d.schedule({
          id: "over",
          handler: big,
          payload: { n: 99 },
          schedule: Schedule.once(10),
        })
        yield* d.schedule({ id: "bad", handler: refused, payload: {}, schedule: Schedule.once(10) })
        yield* d.schedule({ id: "p", handler: plain, payload: {}, schedule: Schedule.once(10) })
        yield* run(d)

        const [c] = ranOf(yield* d.ledger("c"))
        expect(c).toMatchObject({
          outcome: "succeeded",
          result: '{"charged":250,"at":"2026-01-01T00:00:00.000Z"}',
          resultError: null,
          value: { charged: 250, at: new Date(Date.UTC(2026, 0, 1)) },
        })
        expect(ranOf(yield* d.ledger("fits"))[0]).toMatchObject({
          result: JSON.stringify("x".repeat(98)),
          value: "x".repeat(98),
        })

        // Past the bound: the run succeeded and the task is done; the value is not kept.
        const [over] = ranOf(yield* d.ledger("over"))
        expect(over).toMatchObject({ outcome: "succeeded", state: "done", result: null })
        expect(over?.value).toBeUndefined()
        expect(over?.resultError).toContain("ResultTooLarge")
        expect(over?.resultError).toContain('task "over"')
        expect(over?.resultError).toContain("101 bytes")
        expect(over?.resultError).toContain("limit of 100 bytes")
        expect(yield* d.status("over")).toBe("done")

        const [bad] = ranOf(yield* d.ledger("bad"))
        expect(bad).toMatchObject({ outcome: "succeeded", result: null })
        expect(bad?.resultError).toMatch(/^ResultEncodeError: .*task "bad".*handler "refused"/)

        const [p] = ranOf(yield* d.ledger("p"))
        expect(p).toMatchObject({ outcome: "succeeded", result: null, resultError: null })
        expect(p?.value).toBeUndefined()
      }),
    )
    // An operator's view: the same text, with no schema at hand.
    yield* Effect.scoped(
      Effect.gen(function* () {
        const a = yield* admin
        const [c] = ranOf(yield* a.ledger("c"))
        expect(c?.result).toBe('{"charged":250,"at":"2026-01-01T00:00:00.000Z"}')
        expect(c).not.toHaveProperty("value")
        const recent = ranOf(yield* a.recent(20)).find((r) => r.taskId === "fits")
        expect(recent?.result).toBe(JSON.stringify("x".repeat(98)))
      }),
    )
  })

describe("kept results (SPEC §19.3)", () => {
  it.effect("SQLite: kept, decoded, bounded, and refused with typed errors", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      yield* story(sqlite(file), StoreAdmin.open(file, { readOnly: true }), (d) => advance(d, 10))
      t.cleanup()
    }),
  )

  describe("PostgreSQL", () => {
    let db: { url: string; drop: () => Promise<void> }
    beforeEach(async () => {
      db = await freshDatabase()
    })
    afterEach(async () => {
      await db.drop()
    })
    it.live(
      "kept, decoded, bounded, and refused with typed errors",
      () =>
        story(
          Postgres.layer({ url: db.url }),
          StoreAdmin.open(db.url, { readOnly: true }),
          allFinal,
        ),
      120_000,
    )
  })

  it.effect("maxResultBytes and a result that is not a schema are InvalidOptions naming them", () =>
    Effect.gen(function* () {
      const t = tempDir()
      for (const [options, field, value] of [
        [{ handlers, maxResultBytes: 0 }, "maxResultBytes", 0],
        [{ handlers, maxResultBytes: 8_388_609 }, "maxResultBytes", 8_388_609],
        [
          { handlers: [{ ...plain, result: { not: "a schema" } }] },
          'handlers["plain"].result',
          { not: "a schema" },
        ],
      ] as const) {
        const e = yield* Effect.flip(
          withScheduler(
            sqlite(t.file()),
            options as unknown as { handlers: ReadonlyArray<typeof plain> },
            () => Effect.void,
          ),
        )
        expect(e).toBeInstanceOf(CoreErrors.InvalidOption)
        expect(e).toMatchObject({ field, value })
      }
      t.cleanup()
    }),
  )

  it.effect("a store from before 0006 is migrated: its old runs read with no result", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      // Every migration before 0006 (a later one recorded first would keep 0006 from running).
      const before = Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0006"))
      yield* Effect.scoped(
        Effect.flatMap(SqliteClient.make({ filename: file }), ({ client }) =>
          Effect.provideService(
            Effect.gen(function* () {
              yield* migrateWith(before)
              const sql = yield* SqlClient
              yield* sql`INSERT INTO tickwork_runs ${sql.insert({
                task_id: "old",
                generation: 1,
                slot: 0,
                attempt: 1,
                run_at: 0,
                started_at: 0,
                finished_at: 1,
                outcome: "succeeded",
                error: null,
                fence: 1,
                owner: "o",
                delivery: 1,
                state: "done",
                next_run_at: null,
              })}`
            }),
            SqlClient,
            client,
          ),
        ),
      ).pipe(Effect.provide(Reactivity.layer))
      yield* withScheduler(sqlite(file), { handlers }, (d) =>
        Effect.gen(function* () {
          expect(ranOf(yield* d.ledger("old"))).toMatchObject([
            { outcome: "succeeded", result: null, resultError: null },
          ])
          yield* d.schedule({
            id: "c",
            handler: charge,
            payload: { cents: 1 },
            schedule: Schedule.once(5),
          })
          yield* advance(d, 5)
          expect(ranOf(yield* d.ledger("c"))[0]?.value).toEqual({
            charged: 1,
            at: new Date(Date.UTC(2026, 0, 1)),
          })
        }),
      )
      t.cleanup()
    }),
  )
})
