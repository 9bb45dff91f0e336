/**
 * `StoreAdmin`: a store opened for an operator, with no scheduler. Read-only opens write nothing
 * and refuse controls; the controls are the scheduler's (a paused task is seen paused by a
 * scheduler, a resume skips the slots that passed); tags given at schedule are filtered on;
 * bad filters are typed errors naming the field. SQLite in virtual time, and PostgreSQL (real
 * time) for the read-only session.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Postgres, StoreAdmin } from "../src/index.ts"
import { advance, recording, sqlite, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

/** A SQLite store with a fixed-rate task `r` (period 100) that ran twice, and a one-shot `o`. */
const seeded = (file: string) =>
  Effect.gen(function* () {
    const { handler } = recording()
    yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
      Effect.gen(function* () {
        yield* d.schedule({
          id: "r",
          handler,
          payload: { n: 1 },
          schedule: Schedule.fixedRate(100),
          tags: ["billing", "nightly"],
        })
        yield* d.schedule({
          id: "o",
          handler,
          payload: { n: 2 },
          schedule: Schedule.once(10_000),
          tags: ["billing-eu"],
        })
        yield* advance(d, 150)
      }),
    )
    return handler
  })

describe("StoreAdmin on SQLite", () => {
  it.effect("read-only: reads the store, writes nothing, and refuses the controls", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      yield* seeded(file)
      const before = sha(file)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const admin = yield* StoreAdmin.open(file, { readOnly: true })
          expect([admin.store, admin.readOnly, admin.tags]).toEqual(["sqlite", true, true])
          const page = yield* admin.tasks()
          expect(page.tasks.map((x) => [x.id, x.state, x.runNumber])).toEqual([
            ["r", "scheduled", 2],
            ["o", "scheduled", 0],
          ])
          const refused = yield* Effect.flip(admin.pause("r"))
          expect(refused).toMatchObject({ _tag: "ReadOnlyStore", operation: "pause" })
          const stats = yield* admin.stats
          expect(stats.tasks.scheduled).toBe(2)
          expect(stats.lateness.runs).toBe(2)
          const recent = yield* admin.recent(10)
          expect(recent.map((o) => o.kind)).toEqual(["ran", "ran"])
        }),
      )
      expect(sha(file)).toBe(before)
      t.cleanup()
    }),
  )

  it.effect(
    "a pause is the scheduler's: a scheduler that opens the store later runs nothing of it until resumed",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const file = t.file()
        const handler = yield* seeded(file)
        const admin = (body: (a: StoreAdmin.StoreAdminShape) => Effect.Effect<unknown, unknown>) =>
          Effect.scoped(Effect.flatMap(StoreAdmin.open(file), body))
        yield* admin((a) =>
          Effect.map(a.pause("r"), (r) =>
            expect(r).toEqual({ id: "r", changed: true, state: "paused", pausedReason: "manual" }),
          ),
        )
        const { seen, handler: again } = recording(handler.name)
        yield* withScheduler(sqlite(file), { handlers: [again] }, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 500)
            expect(seen.filter((s) => s.id === "r")).toEqual([])
            expect(yield* d.status("r")).toBe("paused")
          }),
        )
        // It is 650 now: slots 200…600 passed while paused; resume goes on at 700.
        yield* admin((a) =>
          Effect.gen(function* () {
            const r = yield* a.resume("r")
            expect(r.state).toBe("scheduled")
            const ledger = yield* a.ledger("r")
            const skipped = ledger.find((o) => o.kind === "skipped")
            expect(skipped).toMatchObject({
              cause: "paused",
              firstSlot: 200,
              lastSlot: 600,
              count: 5,
            })
            expect((yield* a.info("r")).scheduledFor).toBe(700)
          }),
        )
        yield* withScheduler(sqlite(file), { handlers: [again] }, (d) => advance(d, 100))
        expect(seen.filter((s) => s.id === "r").map((s) => s.slot)).toEqual([700])
        t.cleanup()
      }),
  )

  it.effect(
    "a control's origin is recorded on its ledger event; a scheduler's own events carry none",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const file = t.file()
        yield* seeded(file)
        yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(file)
            const bad = yield* Effect.flip(admin.pause("r", { origin: "" }))
            expect(bad).toMatchObject({ _tag: "InvalidOption", field: "origin", value: "" })
            expect((yield* admin.info("r")).state).toBe("scheduled")
            // A millisecond apart: the ledger orders events of one instant by kind, not by call.
            yield* admin.pause("r", { origin: "ops-console" })
            yield* TestClock.adjust(250)
            yield* admin.resume("r", { origin: "ops-console" })
            yield* TestClock.adjust(1)
            yield* admin.cancel("o", { origin: "ops-console" })
            yield* TestClock.adjust(1)
            yield* admin.pause("r")
            const events = (yield* admin.ledger("r")).filter((o) => o.kind !== "ran")
            // The slots that passed while paused are skipped by the same resume: its origin too.
            expect(events.map((o) => [o.kind, "origin" in o ? o.origin : "none"])).toEqual([
              ["paused", "ops-console"],
              ["skipped", "ops-console"],
              ["resumed", "ops-console"],
              ["paused", "none"],
            ])
            const cancelled = (yield* admin.ledger("o")).find((o) => o.kind === "cancelled")
            expect(cancelled).toMatchObject({ cause: "scheduled", origin: "ops-console" })
            const recent = yield* admin.recent(3)
            expect(recent.map((o) => o.kind)).toEqual(["paused", "cancelled", "resumed"])
            expect(recent.map((o) => ("origin" in o ? o.origin : null))).toEqual([
              null,
              "ops-console",
              "ops-console",
            ])
          }),
        )
        t.cleanup()
      }),
  )

  it.effect("a store from before origins (no origin column) records the control without one", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      yield* seeded(file)
      const db = new Database(file)
      db.exec("ALTER TABLE tickwork_events DROP COLUMN origin")
      db.close()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const admin = yield* StoreAdmin.open(file)
          expect((yield* admin.pause("r", { origin: "cli" })).changed).toBe(true)
          const paused = (yield* admin.ledger("r")).find((o) => o.kind === "paused")
          expect(paused).toMatchObject({ cause: "manual" })
          expect(paused !== undefined && "origin" in paused).toBe(false)
        }),
      )
      t.cleanup()
    }),
  )

  it.effect("filters by tag when the store's tasks keep tags; bad filters name the field", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      yield* seeded(file)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const admin = yield* StoreAdmin.open(file, { readOnly: true })
          expect(admin.tags).toBe(true)
          const billing = yield* admin.tasks({ tag: "billing" })
          expect(billing.tasks.map((x) => [x.id, x.tags])).toEqual([["r", ["billing", "nightly"]]])
          expect(billing.total).toBe(1)
          expect((yield* admin.tasks({ tag: "billing-eu" })).tasks.map((x) => x.id)).toEqual(["o"])
          expect((yield* admin.info("o")).tags).toEqual(["billing-eu"])
          for (const [filter, field] of [
            [{ state: "asleep" }, "state"],
            [{ limit: 0 }, "limit"],
            [{ limit: 1.5 }, "limit"],
            [{ handler: "" }, "handler"],
          ] as const) {
            const error = yield* Effect.flip(admin.tasks(filter))
            expect(error).toMatchObject({ _tag: "InvalidOption", field })
          }
          expect(yield* Effect.flip(admin.info("nope"))).toMatchObject({
            _tag: "UnknownTask",
            field: "id",
            value: "nope",
          })
        }),
      )
      t.cleanup()
    }),
  )

  it("parseTarget: a path, a postgres URL, or an InvalidOption naming store", () => {
    expect(StoreAdmin.parseTarget("./tasks.db")).toEqual({ kind: "sqlite", filename: "./tasks.db" })
    expect(StoreAdmin.parseTarget("C:\\data\\tasks.db")).toMatchObject({ kind: "sqlite" })
    expect(StoreAdmin.parseTarget("postgresql://u:p@db:6543/app")).toMatchObject({
      kind: "postgres",
      where: "db:6543/app",
    })
    for (const bad of ["mysql://db/x", "file:tasks.db", "postgres://", "  "]) {
      expect(StoreAdmin.parseTarget(bad)).toMatchObject({ _tag: "InvalidOption", field: "store" })
    }
  })
})

describe("StoreAdmin on PostgreSQL", () => {
  it.live(
    "a read-only open reads the shared store and refuses the controls; a writable one cancels",
    () =>
      Effect.gen(function* () {
        const db = yield* Effect.promise(() => freshDatabase())
        const { handler } = recording()
        // The store is created by a scheduler (claim: false: it only writes the task).
        yield* withScheduler(
          Postgres.layer({ url: db.url }),
          { handlers: [handler], claim: false },
          (d) =>
            d.schedule({
              id: "r",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(60_000),
              tags: ["billing"],
            }),
        )
        yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(db.url, { readOnly: true })
            expect((yield* admin.info("r")).state).toBe("scheduled")
            expect(
              (yield* admin.tasks({ tag: "billing" })).tasks.map((x) => [x.id, x.tags]),
            ).toEqual([["r", ["billing"]]])
            expect((yield* admin.tasks({ tag: "bill" })).total).toBe(0)
            expect(yield* Effect.flip(admin.cancel("r"))).toMatchObject({ _tag: "ReadOnlyStore" })
          }),
        )
        const writable = yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(db.url)
            return yield* admin.cancel("r")
          }),
        )
        expect(writable).toEqual({ id: "r", changed: true, state: "cancelled", pausedReason: null })
        yield* Effect.promise(() => db.drop())
      }),
    120_000,
  )
})
