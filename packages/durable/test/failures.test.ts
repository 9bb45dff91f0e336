/**
 * Faults of the store and bad options, each a typed error naming what is wrong (issue "Nothing
 * stops silently"): ids no store can keep, a lease too short to renew, a full disk, a read-only
 * file, an unknown database, a lost LISTEN connection. Each outage is logged once, in one line.
 */
import { execFileSync } from "node:child_process"
import { chmodSync } from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Retry, Schedule } from "@tickwork/core"
import { Effect, Exit, Layer, Logger, Redacted, Schema } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import { Handler, Postgres, SqliteClient, TaskStore } from "../src/index.ts"
import { fixture, repoRoot, tsxArgs } from "./children.ts"
import { advance, recording, sqlite, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

let db: { url: string; drop: () => Promise<void> }
beforeEach(async () => {
  db = await freshDatabase()
})
afterEach(async () => {
  await db.drop()
})

/** A logger keeping each line's level and text. */
const capture = () => {
  const lines: Array<{ level: string; text: string }> = []
  const logger = Logger.make((o) => {
    const parts = Array.isArray(o.message) ? o.message : [o.message]
    lines.push({ level: o.logLevel, text: parts.map((p) => String(p)).join(" ") })
  })
  return { lines, layer: Logger.layer([logger]) }
}

const badIds = [
  ["NUL", "a\u0000b"],
  ["10 KB", "x".repeat(10_240)],
  ["lone surrogate", "a\uD800b"],
] as const

describe("bad options", () => {
  it.effect("a lease under 1 second is InvalidOption naming lease and its value", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const { handler } = recording()
      for (const lease of [1, 30, 999]) {
        const exit = yield* withScheduler(
          sqlite(t.file()),
          { handlers: [handler], lease },
          () => Effect.void,
        ).pipe(Effect.exit)
        const error = Exit.isFailure(exit)
          ? (
              exit.cause.reasons[0] as {
                error?: { _tag: string; field: string; value: unknown; message: string }
              }
            ).error
          : undefined
        expect(error).toMatchObject({ _tag: "InvalidOption", field: "lease", value: lease })
        expect(error?.message).toBe(
          `lease must be at least 1000 ms (1 second; renewals need time on a loaded machine), got ${lease}`,
        )
      }
      yield* withScheduler(
        sqlite(t.file()),
        { handlers: [handler], lease: 1_000 },
        () => Effect.void,
      )
      t.cleanup()
    }),
  )

  for (const store of ["sqlite", "postgres"] as const) {
    it.live(
      `${store}: ids no store can keep are InvalidOption naming the id; nothing is written`,
      () =>
        Effect.gen(function* () {
          const t = tempDir()
          const layer = store === "sqlite" ? sqlite(t.file()) : Postgres.layer({ url: db.url })
          const { handler } = recording()
          yield* withScheduler(layer, { handlers: [handler], claim: false }, (d) =>
            Effect.gen(function* () {
              for (const [what, id] of badIds) {
                const e = yield* Effect.flip(
                  d.schedule({ id, handler, payload: { n: 1 }, schedule: Schedule.once(10) }),
                )
                expect({ what, tag: e._tag, field: (e as { field?: string }).field }).toEqual({
                  what,
                  tag: "InvalidOption",
                  field: "id",
                })
                expect((e as { value?: unknown }).value).toBe(id)
                expect(e.message).toMatch(/^id must /)
                const all = yield* Effect.flip(
                  d.scheduleAll([
                    { id: "fine", handler, payload: { n: 1 }, schedule: Schedule.once(10) },
                    { id, handler, payload: { n: 1 }, schedule: Schedule.once(10) },
                  ]),
                )
                expect(all._tag).toBe("InvalidOption")
                // Lookups of such an id find nothing (no statement fails on it).
                expect(yield* d.status(id)).toBe("unknown")
                expect(yield* d.cancel(id)).toBe(false)
                expect(yield* d.ledger(id)).toEqual([])
              }
              expect((yield* d.stats).tasks.scheduled).toBe(0)
              // The store itself refuses them too, whoever calls it.
              const s = yield* TaskStore.TaskStore
              const direct = yield* Effect.flip(
                s.insert([
                  {
                    id: "a\u0000b",
                    handler: "record",
                    payload: "{}",
                    schedule: { kind: "once", at: 1 },
                    priority: 1,
                    retry: Retry.none,
                    missedRuns: "catch-up",
                    pauseAfter: 0,
                    timeoutMs: 0,
                    slot: 1,
                    seq: 1,
                    now: 0,
                  },
                ]),
              )
              expect(direct).toMatchObject({ _tag: "InvalidOption", field: "id" })
            }).pipe(Effect.provide(layer)),
          )
          t.cleanup()
        }),
    )
  }
})

describe("store faults", () => {
  it.effect(
    "a full disk (SQLite) is a StoreError of reason disk-full, logged once per outage in one line; runs commit when space returns",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const log = capture()
        const big = Handler.make("big", Schema.Struct({ size: Schema.Number }), (p) =>
          Effect.fail(new Error("x".repeat(p.size))),
        )
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { client, db: file } = yield* SqliteClient.make({ filename: t.file() })
            const store = yield* TaskStore.make({ exclusive: true }).pipe(
              Effect.provideService(SqlClient, client),
            )
            const layer = Layer.succeed(TaskStore.TaskStore, store)
            yield* withScheduler(layer, { handlers: [big], runtime: { logFailures: false } }, (d) =>
              Effect.gen(function* () {
                yield* d.schedule({
                  id: "f",
                  handler: big,
                  payload: { size: 200_000 },
                  schedule: Schedule.once(10),
                  retry: Retry.none,
                })
                // Fill the file to its limit: no free page is left, none may be added.
                file.exec("CREATE TABLE filler (x BLOB)")
                file.pragma(`max_page_count = ${file.pragma("page_count", { simple: true })}`)
                const insert = file.prepare("INSERT INTO filler VALUES (randomblob(?))")
                for (const size of [4_000, 500, 50, 1]) {
                  try {
                    for (;;) insert.run(size)
                  } catch (error) {
                    expect((error as { code?: string }).code).toBe("SQLITE_FULL")
                  }
                }
                // The run fails with a 200 KB error: its commit needs pages it cannot get.
                for (let k = 0; k < 8; k++) yield* advance(d, 1_000)
                expect(yield* d.status("f")).toBe("running")
                const stats = yield* d.stats
                expect(stats.storeFailures).toBeGreaterThan(2)
                const warnings = log.lines.filter((l) => l.level === "Warn")
                expect(warnings).toHaveLength(1)
                expect(warnings[0]?.text).toBe(
                  "tickwork durable: the task store failed to complete runs: the disk is full: database or disk is full (SQLITE_FULL); retrying until the store works again (logged once per outage)",
                )
                const e = yield* Effect.flip(
                  d.schedule({
                    handler: big,
                    payload: { size: 1 },
                    schedule: Schedule.once(10),
                    id: "y".repeat(1_000),
                  }),
                )
                expect(e).toMatchObject({ _tag: "StoreError", reason: "disk-full" })
                expect(e.message).toBe(
                  "the task store failed to insert: the disk is full: database or disk is full (SQLITE_FULL)",
                )
                // Space again: the pending commit goes through; the end of the outage is logged.
                file.exec("DELETE FROM filler")
                file.pragma("max_page_count = 1073741823")
                for (let k = 0; k < 8 && (yield* d.status("f")) === "running"; k++) {
                  yield* advance(d, 1_000)
                }
                expect(yield* d.status("f")).toBe("failed")
                expect(log.lines.some((l) => l.text.includes("the task store works again"))).toBe(
                  true,
                )
              }),
            )
          }),
        ).pipe(Effect.provide(Reactivity.layer), Effect.provide(log.layer))
        t.cleanup()
      }),
  )

  it.live(
    "a SQLite file this process may not write is StoreUnavailable of reason read-only, not 'disk I/O error'",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const file = t.file()
        yield* Effect.scoped(Layer.build(sqlite(file)))
        // As root, permissions do not stop a write: drop the capabilities that override them
        // (setpriv), so the file's mode applies as it does to any other user. Another user could
        // not read a checkout in a private directory, which CI's may be.
        chmodSync(t.dir, 0o755)
        chmodSync(file, 0o444)
        const root = process.getuid?.() === 0
        const args = [...tsxArgs, fixture("open-store.ts"), file]
        const out = execFileSync(
          root ? "setpriv" : process.execPath,
          root
            ? [
                "--inh-caps=-dac_override,-dac_read_search",
                "--bounding-set=-dac_override,-dac_read_search",
                "--",
                process.execPath,
                ...args,
              ]
            : args,
          { cwd: repoRoot, encoding: "utf8" },
        )
        const result = JSON.parse(out.trim().split("\n").pop() as string)
        expect(result).toMatchObject({ ok: false, tag: "StoreUnavailable", reason: "read-only" })
        expect(result.message).toContain(
          `cannot open the SQLite store ${JSON.stringify(file)}: the database is read-only: this process may not write the file or its directory`,
        )
        t.cleanup()
      }),
    60_000,
  )

  it.live("an unknown PostgreSQL database is StoreUnavailable of reason unknown-database", () =>
    Effect.gen(function* () {
      const url = new URL(db.url)
      url.pathname = "/no_such_database"
      const e = yield* Effect.flip(
        Layer.build(Postgres.layer({ url: url.toString() })).pipe(Effect.scoped),
      )
      expect(e).toMatchObject({ _tag: "StoreUnavailable", reason: "unknown-database" })
      expect(e.message).toContain(
        'the database does not exist: database "no_such_database" does not exist (3D000)',
      )
    }),
  )

  it.live(
    "a lost session connection (its lock and LISTEN) is logged with the server's reason, then held again",
    () =>
      Effect.gen(function* () {
        const log = capture()
        const { handler } = recording()
        const terminateListener = Effect.scoped(
          Effect.flatMap(PgClient.make({ url: Redacted.make(db.url), maxConnections: 1 }), (sql) =>
            sql.unsafe(
              "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tickwork-session' AND pid <> pg_backend_pid()",
            ),
          ),
        ).pipe(Effect.provide(Reactivity.layer))
        yield* withScheduler(Postgres.layer({ url: db.url }), { handlers: [handler] }, () =>
          Effect.gen(function* () {
            const lost = () => log.lines.filter((l) => l.text.includes("lost its database session"))
            for (let k = 0; k < 200 && lost().length === 0; k++) {
              yield* Effect.orDie(terminateListener)
              yield* Effect.sleep(100)
            }
            expect(lost()).toHaveLength(1)
            expect(lost()[0]?.text).toContain(
              "the connection to the database was lost: terminating connection due to administrator command (57P01)",
            )
            for (let k = 0; k < 300; k++) {
              if (log.lines.some((l) => l.text.includes("holds its database session again"))) break
              yield* Effect.sleep(100)
            }
            expect(log.lines.some((l) => l.text.includes("holds its database session again"))).toBe(
              true,
            )
            expect(lost()).toHaveLength(1)
          }),
        ).pipe(Effect.provide(log.layer))
      }),
    60_000,
  )
})
