import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, type Layer } from "effect"
import { type Handler, Postgres, Sqlite, type TaskStore } from "../src/index.ts"
import { recording, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"
import { pgSnapshot, sqliteSnapshot } from "./snapshots.ts"

/** Every table a batch writes, read in a fixed order: equal snapshots mean nothing changed. */
const TABLES = [
  "SELECT * FROM tickwork_tasks ORDER BY id",
  "SELECT * FROM tickwork_events ORDER BY id",
  "SELECT * FROM tickwork_runs ORDER BY task_id, slot, attempt",
  "SELECT * FROM tickwork_tags ORDER BY task_id, tag",
  "SELECT * FROM tickwork_breakers ORDER BY key",
]

/** A store under test: its layer and a way to read every table beside the scheduler. */
interface Target {
  readonly layer: () => Layer.Layer<TaskStore.TaskStore, unknown>
  readonly snapshot: () => Promise<ReadonlyArray<ReadonlyArray<unknown>>>
}

/** A bad batch and the typed error (and field) it must fail with. */
interface Case {
  readonly name: string
  readonly tag: string
  readonly field: string
  readonly batch: (h: Handler.Any) => ReadonlyArray<Record<string, unknown>>
}

const ok = (id: string, h: Handler.Any, extra: Record<string, unknown> = {}) => ({
  id,
  handler: h,
  payload: { n: 1 },
  schedule: Schedule.once(0),
  ...extra,
})

/** `n` good tasks due now, with `extra` options each, and `bad` at index `at`. */
const many = (
  h: Handler.Any,
  n: number,
  extra: Record<string, unknown> = {},
  at = -1,
  bad: Record<string, unknown> = {},
) => Array.from({ length: n }, (_, k) => (k === at ? bad : ok(`t${k}`, h, extra)))

const tagged = { tags: ["batch"] }
const ownBreaker = { breaker: { failures: 2, coolDown: 1_000 } }

const cases: ReadonlyArray<Case> = [
  // A live id in the store, as the last task: every shape of batch.
  ...[
    ["two tasks", 2, {}],
    ["two tasks with tags", 2, tagged],
    ["two tasks with a breaker", 2, ownBreaker],
    ["several chunks", 900, {}],
    ["several chunks with tags", 900, tagged],
    ["several chunks with a breaker", 900, ownBreaker],
  ].map(
    ([what, n, extra]): Case => ({
      name: `an id live in the store (${what})`,
      tag: "DuplicateTaskId",
      field: "id",
      batch: (h) =>
        many(h, n as number, extra as Record<string, unknown>, (n as number) - 1, {
          ...ok("live", h, extra as Record<string, unknown>),
        }),
    }),
  ),
  {
    name: "an id live in the store (first of several chunks)",
    tag: "DuplicateTaskId",
    field: "id",
    batch: (h) => many(h, 900, {}, 0, ok("live", h)),
  },
  {
    name: "an id live in the store (alone)",
    tag: "DuplicateTaskId",
    field: "id",
    batch: (h) => [ok("live", h)],
  },
  {
    name: "an id twice in the batch",
    tag: "DuplicateTaskId",
    field: "id",
    batch: (h) => many(h, 5, tagged, 3, ok("t1", h)),
  },
  {
    name: "an id twice in the batch (several chunks)",
    tag: "DuplicateTaskId",
    field: "id",
    batch: (h) => many(h, 900, {}, 850, ok("t2", h)),
  },
  {
    name: "an invalid task in the middle",
    tag: "InvalidOption",
    field: "pauseAfterConsecutiveFailures",
    batch: (h) => many(h, 5, {}, 2, ok("bad", h, { pauseAfterConsecutiveFailures: -1 })),
  },
  {
    name: "an unknown handler in the middle",
    tag: "UnknownHandler",
    field: "handler",
    batch: (h) => many(h, 5, ownBreaker, 2, { ...ok("bad", h), handler: "nobody" }),
  },
  {
    name: "a payload the schema rejects, last",
    tag: "InvalidPayload",
    field: "payload.n",
    batch: (h) => many(h, 5, tagged, 4, { ...ok("bad", h), payload: { n: "one" } }),
  },
]

/** Runs every case against `target`. */
const suite = (target: () => Target) => {
  for (const c of cases) {
    it.live(`${c.name}: fails with ${c.tag} and changes nothing`, () =>
      Effect.gen(function* () {
        const t = target()
        const { seen, handler } = recording()
        yield* withScheduler(t.layer(), { handlers: [handler], pollInterval: 20 }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              ...ok("live", handler, tagged),
              schedule: Schedule.once("1 hour"),
            })
            const before = yield* Effect.promise(t.snapshot)
            const error = yield* Effect.flip(d.scheduleAll(c.batch(handler) as never))
            expect([error._tag, (error as { field?: unknown }).field]).toEqual([c.tag, c.field])
            expect(yield* Effect.promise(t.snapshot)).toEqual(before)
            // Anything the batch left due now would run before this task, due after it.
            yield* d.schedule(ok("sentinel", handler))
            for (let k = 0; k < 3_000 && (yield* d.status("sentinel")) !== "done"; k++) {
              yield* Effect.sleep(10)
            }
            expect(seen.map((s) => s.id)).toEqual(["sentinel"])
            expect((yield* d.stats).tasks).toMatchObject({ scheduled: 1, done: 1 })
          }),
        )
      }),
    )
  }
}

describe("scheduleAll on SQLite is all or nothing", () => {
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

describe("scheduleAll on PostgreSQL is all or nothing", () => {
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
