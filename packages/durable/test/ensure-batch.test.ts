import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { type Declared, Schedule } from "@tickwork/core"
import { Effect, type Layer, Result } from "effect"
import * as Statement from "effect/sql/Statement"
import {
  type DurableScheduler,
  type Handler,
  Postgres,
  Sqlite,
  type TaskStore,
} from "../src/index.ts"
import { recording, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"
import { pgSnapshot, sqliteSnapshot } from "./snapshots.ts"

/** Every table an ensure writes, read in a fixed order: equal snapshots mean nothing changed. */
const TABLES = [
  "SELECT * FROM tickwork_tasks ORDER BY id",
  "SELECT * FROM tickwork_events ORDER BY id",
  "SELECT * FROM tickwork_runs ORDER BY task_id, slot, attempt",
  "SELECT * FROM tickwork_tags ORDER BY task_id, tag",
  "SELECT * FROM tickwork_breakers ORDER BY key",
]

interface Target {
  readonly layer: () => Layer.Layer<TaskStore.TaskStore, unknown>
  readonly snapshot: () => Promise<ReadonlyArray<ReadonlyArray<unknown>>>
}

/** A recurring task due in an hour (nothing runs during a test), every `period` ms. */
const task = (
  id: string,
  h: Handler.Any,
  period = 60_000,
  extra: Record<string, unknown> = {},
) => ({
  id,
  handler: h,
  payload: { n: 1 },
  schedule: Schedule.fixedRate(period, { delay: 3_600_000 }),
  ...extra,
})
const breaker = { breaker: { failures: 2, coolDown: 1_000 } }

/** One path through `ensure`: the store before it, the declaration, and the report it gives. */
interface Path {
  readonly name: string
  readonly before: (
    d: DurableScheduler.DurableSchedulerShape,
    h: Handler.Any,
  ) => Effect.Effect<unknown, unknown>
  readonly declared: (h: Handler.Any) => ReadonlyArray<Record<string, unknown>>
  readonly options?: Declared.EnsureOptions
  readonly report: Partial<Declared.Report>
}

const paths: ReadonlyArray<Path> = [
  {
    name: "creates (tags, an own breaker)",
    before: () => Effect.void,
    declared: (h) => [
      task("a", h, 60_000, { tags: ["x"] }),
      task("b", h, 60_000, breaker),
      task("c", h),
    ],
    options: { set: "app" },
    report: { created: ["a", "b", "c"] as never },
  },
  {
    name: "updates (schedule, payload, tags, breaker)",
    before: (d, h) => d.ensure([task("a", h), task("b", h), task("c", h, 60_000, breaker)]),
    declared: (h) => [
      task("a", h, 30_000),
      { ...task("b", h, 60_000, { tags: ["y"] }), payload: { n: 2 } },
      task("c", h),
    ],
    report: {
      updated: [
        { id: "a", fields: ["schedule"] },
        { id: "b", fields: ["tags", "payload"] },
        { id: "c", fields: ["breaker"] },
      ] as never,
    },
  },
  {
    name: "a set's cancels",
    before: (d, h) =>
      d.ensure([task("a", h), task("b", h, 60_000, breaker), task("c", h)], { set: "app" }),
    declared: (h) => [task("a", h)],
    options: { set: "app" },
    report: { unchanged: ["a"] as never, cancelled: ["b", "c"] as never },
  },
  {
    name: "mixed: create, update, unchanged, a final id's next generation, cancel",
    before: (d, h) =>
      Effect.gen(function* () {
        yield* d.ensure([task("a", h), task("b", h), task("c", h, 60_000, breaker), task("e", h)], {
          set: "app",
        })
        yield* d.cancel("e")
      }),
    declared: (h) => [task("e", h), task("d", h), task("b", h, 5_000), task("a", h)],
    options: { set: "app" },
    report: {
      created: ["e", "d"] as never,
      updated: [{ id: "b", fields: ["schedule"] }] as never,
      unchanged: ["a"] as never,
      cancelled: ["c"] as never,
    },
  },
]

/** A transformer that makes the `k`-th statement fail in the database; `count` counts them. */
const faultAt =
  (k: number, count: { n: number }): Statement.Transformer =>
  (self, sql) =>
    Effect.sync(() => {
      count.n += 1
      return count.n === k ? sql`SELECT missing FROM tickwork_injected_fault` : self
    })

const suite = (target: () => Target) => {
  for (const p of paths) {
    it.live(`${p.name}: a fault at any statement changes nothing`, () =>
      Effect.gen(function* () {
        const t = target()
        const { handler } = recording()
        yield* withScheduler(t.layer(), { handlers: [handler], pollInterval: 60_000 }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule(task("other", handler, 60_000, { tags: ["app-not"] }))
            yield* p.before(d, handler)
            const before = yield* Effect.promise(t.snapshot)
            const count = { n: 0 }
            let faulted = 0
            for (let k = 1; k <= 500; k++) {
              count.n = 0
              const result = yield* Effect.result(
                d
                  .ensure(p.declared(handler) as never, p.options)
                  .pipe(Effect.provideService(Statement.CurrentTransformer, faultAt(k, count))),
              )
              if (Result.isSuccess(result)) {
                // Past the last statement: the call got through, as it would have without faults.
                expect(count.n).toBe(k - 1)
                expect(result.success).toEqual({
                  created: [],
                  updated: [],
                  unchanged: [],
                  cancelled: [],
                  ...p.report,
                })
                break
              }
              faulted += 1
              expect(result.failure).toMatchObject({ _tag: "StoreError" })
              expect(yield* Effect.promise(t.snapshot)).toEqual(before)
            }
            // The batch wrote in more statements than its reads: faults hit its writes too.
            expect(faulted).toBeGreaterThan(3)
            expect(yield* Effect.promise(t.snapshot)).not.toEqual(before)
          }),
        )
      }),
    )
  }
}

describe("ensure on SQLite is all or nothing (SPEC §18.2)", () => {
  let dir: ReturnType<typeof tempDir>
  beforeEach(() => {
    dir = tempDir()
  })
  afterEach(() => dir.cleanup())
  suite(() => ({
    // Not exclusive, so that a second connection can read the tables while the scheduler runs.
    layer: () => Sqlite.layer({ filename: dir.file(), exclusive: false }),
    snapshot: () => sqliteSnapshot(dir.file(), TABLES),
  }))
})

describe("ensure on PostgreSQL is all or nothing (SPEC §18.2)", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })
  suite(() => ({
    layer: () => Postgres.layer({ url: db.url }),
    snapshot: () => pgSnapshot(db.url, TABLES),
  }))
})
