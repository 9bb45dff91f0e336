/**
 * A store written before the controls (migrations 0001 and 0002 only) is brought up to
 * `0003_controls` when it is opened: its tasks keep running, with no tags, the layer's window
 * and no breaker, and take every control from then on. SQLite and PostgreSQL.
 */
import { PgClient } from "@effect/sql-pg"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Retry, Schedule } from "@tickwork/core"
import { Effect, Option, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import { Postgres, SqliteClient } from "../src/index.ts"
import { migrateWith, migrations } from "../src/internal/migrations.ts"
import { advance, recording, sqlite, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

/**
 * Migrates with `record` and writes one pending fixed-rate task as the 0002 version stored it
 * (the columns later migrations add take their defaults).
 */
const oldStore = (record: Record<string, Effect.Effect<void, unknown, SqlClient>>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    yield* migrateWith(record)
    yield* sql`INSERT INTO tickwork_tasks ${sql.insert({
      id: "old",
      generation: 1,
      handler: "record",
      payload: JSON.stringify({ n: 7 }),
      schedule: JSON.stringify({ kind: "fixed-rate", first: 0, period: 100 }),
      priority: 1,
      retry: JSON.stringify(Retry.none),
      missed_runs: "catch-up",
      pause_after: 0,
      timeout_ms: 0,
      state: "scheduled",
      slot: 0,
      run_at: 0,
      due_at: 0,
      attempt: 1,
      run_number: 0,
      consecutive_failures: 0,
      deliveries: 0,
      fence: 0,
      lease_owner: null,
      seq: 1,
      created_at: 0,
      updated_at: 0,
      finished_at: null,
      last_error: null,
      paused_reason: null,
      resume_from: -1,
    })}`
  })

/** A store at 0002 with one old task. */
const at0002 = oldStore({
  "0001_tasks": migrations["0001_tasks"],
  "0002_paused": migrations["0002_paused"],
})

/** A store at 0006, before the column a trigger keeps its pending run in, with one old task. */
const at0006 = oldStore(
  // Every migration before 0007 (a later one recorded first would keep 0007 from running).
  Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0007")),
)

describe("migrating a 0002 store to 0003_controls", () => {
  it.effect("SQLite: an old task runs on, and takes tags and a breaker by update", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      yield* Effect.scoped(
        Effect.flatMap(SqliteClient.make({ filename: file }), ({ client }) =>
          Effect.provideService(at0002, SqlClient, client),
        ),
      ).pipe(Effect.provide(Reactivity.layer))
      const { seen, handler } = recording()
      yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          const info = Option.getOrThrow(yield* d.info("old"))
          expect([info.tags, info.window, info.breaker]).toEqual([[], undefined, undefined])
          yield* advance(d, 100)
          expect(
            yield* d.update("old", { tags: ["legacy"], breaker: { failures: 3, coolDown: 10 } }),
          ).toBe(true)
          expect((yield* d.tasks({ tag: "legacy" })).map((x) => x.id)).toEqual(["old"])
          expect(Option.getOrThrow(yield* d.breaker("old")).state).toBe("closed")
        }),
      )
      expect(seen.map((s) => s.slot)).toEqual([0, 100])
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

    it.live("an old task is there with no tags and no breaker, and takes them by update", () =>
      Effect.gen(function* () {
        yield* Effect.scoped(
          Effect.flatMap(PgClient.make({ url: Redacted.make(db.url), maxConnections: 1 }), (c) =>
            Effect.provideService(at0002, SqlClient, c),
          ),
        ).pipe(Effect.provide(Reactivity.layer))
        const { handler } = recording()
        yield* withScheduler(
          Postgres.layer({ url: db.url }),
          { handlers: [handler], claim: false },
          (d) =>
            Effect.gen(function* () {
              const info = Option.getOrThrow(yield* d.info("old"))
              expect([info.state, info.tags, info.breaker]).toEqual(["scheduled", [], undefined])
              expect(yield* d.update("old", { tags: ["legacy"] })).toBe(true)
              expect((yield* d.tasks({ tag: "legacy" })).map((x) => x.id)).toEqual(["old"])
            }),
        )
      }),
    )
  })
})

describe("migrating a 0006 store to 0007_manual (SPEC §19.1)", () => {
  it.effect("SQLite: an old task has no manual run, and a trigger keeps its grid", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      yield* Effect.scoped(
        Effect.flatMap(SqliteClient.make({ filename: file }), ({ client }) =>
          Effect.provideService(at0006, SqlClient, client),
        ),
      ).pipe(Effect.provide(Reactivity.layer))
      const { seen, handler } = recording()
      yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          yield* advance(d, 30)
          yield* d.trigger("old")
          yield* advance(d, 0)
          const info = Option.getOrThrow(yield* d.info("old"))
          expect([info.slot, info.scheduledFor, info.attempt]).toEqual([100, 100, 1])
        }),
      )
      expect(seen.map((s) => s.slot)).toEqual([0, 30])
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

    it.live("an old task takes a trigger, set aside in the new column", () =>
      Effect.gen(function* () {
        yield* Effect.scoped(
          Effect.flatMap(PgClient.make({ url: Redacted.make(db.url), maxConnections: 1 }), (c) =>
            Effect.provideService(at0006, SqlClient, c),
          ),
        ).pipe(Effect.provide(Reactivity.layer))
        const { handler } = recording()
        yield* withScheduler(
          Postgres.layer({ url: db.url }),
          { handlers: [handler], claim: false },
          (d) =>
            Effect.gen(function* () {
              yield* d.trigger("old")
              // Not claimed here: the trigger waits, and a second one is refused.
              expect(yield* Effect.flip(d.trigger("old"))).toMatchObject({
                _tag: "ManualRunRefused",
                state: "scheduled",
              })
              const info = Option.getOrThrow(yield* d.info("old"))
              expect(info.attempt).toBe(1)
              expect(info.slot).toBeGreaterThan(0)
            }),
        )
      }),
    )
  })
})

/** A store at 0008, before the flow-control columns, with one old task. */
const at0008 = oldStore(
  Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0009")),
)

describe("migrating a 0008 store to 0009_limits (SPEC §20)", () => {
  it.effect("SQLite: an old task has no group, key or wait, and runs under a handler limit", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      yield* Effect.scoped(
        Effect.flatMap(SqliteClient.make({ filename: file }), ({ client }) =>
          Effect.provideService(at0008, SqlClient, client),
        ),
      ).pipe(Effect.provide(Reactivity.layer))
      const { seen, handler } = recording()
      yield* withScheduler(
        sqlite(file),
        { handlers: [handler], limits: { handlers: { record: { concurrency: 1 } } } },
        (d) =>
          Effect.gen(function* () {
            const info = Option.getOrThrow(yield* d.info("old"))
            expect([info.group, info.key, info.waiting]).toEqual([undefined, undefined, undefined])
            yield* advance(d, 200)
          }),
      )
      expect(seen.map((s) => s.slot)).toEqual([0, 100, 200])
      t.cleanup()
    }),
  )
})

/** A store at 0009, before the deduplication columns, with one old task. */
const at0009 = oldStore(
  Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0010")),
)

describe("migrating a 0009 store to 0010_dedup (SPEC §20.3)", () => {
  it.effect("SQLite: an old task has no key, holds none, and a key's first request creates", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      yield* Effect.scoped(
        Effect.flatMap(SqliteClient.make({ filename: file }), ({ client }) =>
          Effect.provideService(at0009, SqlClient, client),
        ),
      ).pipe(Effect.provide(Reactivity.layer))
      const { handler } = recording()
      const seen = yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          const old = Option.getOrThrow(yield* d.info("old")).dedup
          const keysBefore = (yield* d.stats).dedup.keys
          const created = yield* d.scheduleDeduplicated({
            id: "new",
            handler: "record",
            payload: { n: 1 },
            schedule: Schedule.once(3_600_000),
            dedup: { key: "k" },
          })
          return { old, keysBefore, created, keysAfter: (yield* d.stats).dedup.keys }
        }),
      )
      expect(seen).toEqual({
        old: undefined,
        keysBefore: 0,
        created: { id: "new", outcome: "created" },
        keysAfter: 1,
      })
      t.cleanup()
    }),
  )
})
