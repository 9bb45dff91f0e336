/**
 * SPEC §19.1: a manual run was not scheduled, so no lateness figure counts it. The ledger
 * records which runs were manual (`tickwork_runs.manual`, migration 0008); `StoreAdmin.stats`
 * leaves them out of its lateness; a store from before 0008 reads its runs as not manual.
 * SQLite on virtual time; PostgreSQL for the column's type there.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import { type DurableScheduler, Postgres, SqliteClient, StoreAdmin } from "../src/index.ts"
import { migrateWith, migrations } from "../src/internal/migrations.ts"
import { advance, inFile, recording, sqlite, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

const ranOf = (ledger: ReadonlyArray<DurableScheduler.DurableOccurrence>) =>
  ledger.flatMap((o) => (o.kind === "ran" ? [o] : []))

describe("manual runs in the ledger and the store's lateness (SPEC §19.1)", () => {
  it.effect("SQLite: a trigger's run is recorded manual and left out of the lateness", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { handler } = recording()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "r",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(100),
            })
            yield* advance(d, 30)
            yield* d.trigger("r")
            yield* advance(d, 170)
            expect(ranOf(yield* d.ledger("r")).map((o) => [o.slot, o.manual])).toEqual([
              [0, false],
              [30, true],
              [100, false],
              [200, false],
            ])
          }),
        )
        yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(file, { readOnly: true })
            expect(ranOf(yield* admin.ledger("r")).map((o) => o.manual)).toEqual([
              false,
              true,
              false,
              false,
            ])
            // Four runs, one manual: three are measured.
            expect((yield* admin.stats).lateness.runs).toBe(3)
          }),
        )
      }),
    ),
  )

  it.effect("a store from before 0008 is migrated: its old runs read as not manual", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const before = Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0008"))
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
                  started_at: 40,
                  finished_at: 41,
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
        // Read before any scheduler migrates it: no `manual` column yet.
        yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(file, { readOnly: true })
            expect(ranOf(yield* admin.ledger("old")).map((o) => o.manual)).toEqual([false])
            expect((yield* admin.stats).lateness).toMatchObject({ runs: 1, max: 40 })
          }),
        )
        const { handler } = recording()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            expect(ranOf(yield* d.ledger("old")).map((o) => o.manual)).toEqual([false])
          }),
        )
      }),
    ),
  )

  describe("PostgreSQL", () => {
    let db: { url: string; drop: () => Promise<void> }
    beforeEach(async () => {
      db = await freshDatabase()
    })
    afterEach(async () => {
      await db.drop()
    })

    it.live("a trigger's run reads back manual; the stats leave it out", () =>
      Effect.gen(function* () {
        const { handler } = recording()
        const hour = 3_600_000
        yield* withScheduler(
          Postgres.layer({ url: db.url }),
          { handlers: [handler], pollInterval: 50 },
          (d) =>
            Effect.gen(function* () {
              yield* d.schedule({
                id: "r",
                handler,
                payload: { n: 1 },
                schedule: Schedule.fixedRate(hour, { delay: hour }),
              })
              yield* d.trigger("r")
              // Recorded once its completion committed; a bound, not a sleep to wait it out.
              const end = Date.now() + 20_000
              while (!(yield* d.ledger("r")).some((o) => o.kind === "ran") && Date.now() < end)
                yield* Effect.sleep(25)
            }),
        )
        yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(db.url, { readOnly: true })
            expect(ranOf(yield* admin.ledger("r")).map((o) => o.manual)).toEqual([true])
            expect((yield* admin.stats).lateness.runs).toBe(0)
          }),
        )
      }),
    )
  })
})
