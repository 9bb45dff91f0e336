/**
 * SPEC §18 on stored rows: declared tasks created once, left untouched (nothing written: the
 * SQLite file's data version does not move), updated in place with an `updated` event, a set's
 * undeclared tasks cancelled, a final id's next generation, a bad batch that writes nothing —
 * and three processes booting at once on one PostgreSQL database converging.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import Database from "better-sqlite3"
import { Effect, Option } from "effect"
import { Postgres } from "../src/index.ts"
import { inFile, recording, sqlite, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

const { handler } = recording()
const options = { handlers: [handler] }
const empty = { created: [], updated: [], unchanged: [], cancelled: [] }

const reportOf = (n = 1) => ({
  id: "report",
  handler,
  payload: { n },
  schedule: Schedule.cron("0 3 * * *"),
})
const sweepOf = (period: number) => ({
  id: "sweep",
  handler,
  payload: { n: 0 },
  schedule: Schedule.fixedRate(period, { delay: 3_600_000 }),
  tags: ["ops"],
})
const declared = (period: number, n = 1) => [reportOf(n), sweepOf(period)]

describe("ensure on SQLite (SPEC §18)", () => {
  it.effect(
    "SPEC §18.1: a second boot with the same declarations writes nothing; a changed one updates in place",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          yield* withScheduler(sqlite(file), options, (d) =>
            Effect.gen(function* () {
              expect(yield* d.ensure(declared(60_000))).toEqual({
                ...empty,
                created: ["report", "sweep"],
              })
            }),
          )
          // The file between boots: every task row as stored, and the ledger's size.
          const snapshot = () => {
            const db = new Database(file, { readonly: true })
            try {
              return {
                tasks: db.prepare("SELECT * FROM tickwork_tasks ORDER BY id").all(),
                events: db.prepare("SELECT count(*) AS n FROM tickwork_events").get(),
              }
            } finally {
              db.close()
            }
          }
          const before = snapshot()
          yield* withScheduler(sqlite(file), options, (d) =>
            Effect.gen(function* () {
              expect(yield* d.ensure(declared(60_000))).toEqual({
                ...empty,
                unchanged: ["report", "sweep"],
              })
            }),
          )
          expect(snapshot()).toEqual(before)
          // The third boot changes the period and the report's payload.
          yield* withScheduler(sqlite(file), options, (d) =>
            Effect.gen(function* () {
              const before2 = Option.getOrThrow(yield* d.info("sweep"))
              expect(yield* d.ensure(declared(30_000, 2))).toEqual({
                ...empty,
                updated: [
                  { id: "report", fields: ["payload"] },
                  { id: "sweep", fields: ["schedule"] },
                ],
              })
              const after = Option.getOrThrow(yield* d.info("sweep"))
              expect(after.generation).toBe(before2.generation)
              expect(after.schedule).toMatchObject({ kind: "fixed-rate", period: 30_000 })
              expect(Option.getOrThrow(yield* d.info("report")).payload).toEqual({ n: 2 })
              // A plain update is recorded the same way (and as the in-memory ledger does).
              expect(yield* d.update("sweep", { priority: "high" })).toBe(true)
              const events = (yield* d.ledger("sweep")).filter((o) => o.kind === "updated")
              expect(events).toMatchObject([
                { detail: "schedule", cause: "ensure" },
                { detail: "priority", cause: "update" },
              ])
            }),
          )
        }),
      ),
  )

  it.effect("SPEC §18.2: a bad declaration or a changed handler fails and writes nothing", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const other = recording("other").handler
        yield* withScheduler(sqlite(file), { handlers: [handler, other] }, (d) =>
          Effect.gen(function* () {
            yield* d.ensure(declared(60_000))
            const bad = yield* Effect.flip(
              d.ensure([
                { ...sweepOf(30_000), priority: "high" as const },
                { id: "x", handler, payload: { n: "no" } as never, schedule: Schedule.once(1) },
              ]),
            )
            expect(bad).toMatchObject({ _tag: "InvalidPayload" })
            expect(yield* d.status("x")).toBe("unknown")
            expect(Option.getOrThrow(yield* d.info("sweep")).priority).toBe("normal")
            const moved = yield* Effect.flip(
              d.ensure([
                { id: "y", handler, payload: { n: 1 }, schedule: Schedule.fixedRate(1000) },
                { ...reportOf(), handler: other },
              ]),
            )
            expect(moved).toMatchObject({ field: "tasks[1].handler", value: "other" })
            expect(yield* d.status("y")).toBe("unknown")
          }),
        )
      }),
    ),
  )

  it.effect(
    "SPEC §18.3, §18.4: a set cancels its undeclared tasks; a final id gets a new generation",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          yield* withScheduler(sqlite(file), options, (d) =>
            Effect.gen(function* () {
              const report = reportOf()
              const sweep = sweepOf(60_000)
              yield* d.schedule({
                id: "by-hand",
                handler,
                payload: { n: 9 },
                schedule: Schedule.fixedRate(1000),
              })
              expect((yield* d.ensure([report, sweep], { set: "app" })).created).toEqual([
                "report",
                "sweep",
              ])
              expect(yield* d.ensure([report], { set: "app" })).toEqual({
                ...empty,
                unchanged: ["report"],
                cancelled: ["sweep"],
              })
              expect(yield* d.status("sweep")).toBe("cancelled")
              expect(yield* d.status("by-hand")).toBe("scheduled")
              // Declared again, the cancelled task comes back as its next generation.
              expect((yield* d.ensure([report, sweep], { set: "app" })).created).toEqual(["sweep"])
              const info = Option.getOrThrow(yield* d.info("sweep"))
              expect([info.state, info.generation]).toEqual(["scheduled", 2])
            }),
          )
        }),
      ),
  )
})

describe("ensure records what it reports (SPEC §18.1)", () => {
  it.effect("a task's own breaker, changed: `breaker` in the report and in the ledger", () =>
    inFile((file) =>
      withScheduler(sqlite(file), options, (d) =>
        Effect.gen(function* () {
          const guarded = (failures: number) => [
            { ...sweepOf(60_000), breaker: { failures, coolDown: 1_000 } },
          ]
          yield* d.ensure(guarded(3))
          expect(yield* d.ensure(guarded(5))).toEqual({
            ...empty,
            updated: [{ id: "sweep", fields: ["breaker"] }],
          })
          const events = (yield* d.ledger("sweep")).filter((o) => o.kind === "updated")
          expect(events).toMatchObject([{ detail: "breaker", cause: "ensure" }])
        }),
      ),
    ),
  )
})

describe("ensure on PostgreSQL: a fleet booting at once (SPEC §18.5)", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  const boot = <A>(
    owner: string,
    body: Parameters<typeof withScheduler<A, unknown, never, typeof handler>>[2],
  ) =>
    withScheduler(
      Postgres.layer({ url: db.url }),
      { ...options, owner, pollInterval: 60_000 },
      body,
    )

  it.live("three processes with the same declarations: one create per id, no error", () =>
    Effect.gen(function* () {
      const reports = yield* Effect.all(
        ["p1", "p2", "p3"].map((owner) => boot(owner, (d) => d.ensure(declared(60_000)))),
        { concurrency: "unbounded" },
      )
      for (const id of ["report", "sweep"]) {
        expect(reports.filter((r) => r.created.includes(id as never)).length).toBe(1)
        expect(reports.filter((r) => r.unchanged.includes(id as never)).length).toBe(2)
      }
      yield* boot("check", (d) =>
        Effect.gen(function* () {
          const info = Option.getOrThrow(yield* d.info("sweep"))
          expect([info.generation, info.state]).toEqual([1, "scheduled"])
        }),
      )
    }),
  )

  it.live("three processes with different versions: one of them wins, every change recorded", () =>
    Effect.gen(function* () {
      yield* boot("p0", (d) => d.ensure(declared(60_000)))
      const periods = [10_000, 20_000, 30_000]
      const reports = yield* Effect.all(
        periods.map((p, k) => boot(`p${k + 1}`, (d) => d.ensure(declared(p)))),
        { concurrency: "unbounded" },
      )
      yield* boot("check", (d) =>
        Effect.gen(function* () {
          const info = Option.getOrThrow(yield* d.info("sweep"))
          expect(info.generation).toBe(1)
          const period = (info.schedule as { period: number }).period
          expect(periods).toContain(period)
          const updates = (yield* d.ledger("sweep")).filter((o) => o.kind === "updated")
          const reported = reports.filter((r) => r.updated.some((u) => u.id === "sweep")).length
          // Each process that changed the row recorded it; the last write is the state seen.
          expect(updates.length).toBe(reported)
          expect(reported).toBeGreaterThanOrEqual(1)
          expect(reports.every((r) => r.created.length === 0)).toBe(true)
        }),
      )
    }),
  )
})
