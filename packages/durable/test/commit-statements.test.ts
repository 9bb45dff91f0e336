/**
 * The commit's multi-row statements (`src/internal/pgBatch.ts` on PostgreSQL): one statement
 * text whatever the batch's size and whichever of its values are NULL, and the same rows, ledger
 * rows and events written as on SQLite, values with quotes, newlines and non-ASCII text included.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Retry } from "@tickwork/core"
import { Effect, type Layer, Option, Tracer } from "effect"
import { Postgres, Sqlite, TaskStore } from "../src/index.ts"
import * as Events from "../src/internal/events.ts"
import { tempDir } from "./helpers.ts"
import { databasePerTest } from "./pg.ts"

const db = databasePerTest()
let files: ReturnType<typeof tempDir>
beforeEach(() => {
  files = tempDir()
})
afterEach(() => {
  files.cleanup()
})

const LEASE = 1_000

const newTask = (id: string): TaskStore.NewTask => ({
  id,
  handler: "record",
  payload: '{"n":1}',
  schedule: { kind: "once", at: 0 },
  priority: 1,
  retry: Retry.none,
  missedRuns: "catch-up",
  pauseAfter: 0,
  timeoutMs: 0,
  slot: 0,
  seq: 1,
  now: 0,
})

const claimAll = (now: number) =>
  Effect.flatMap(TaskStore.TaskStore, (s) =>
    s.claim({
      owner: "A",
      now,
      limit: 10,
      leaseMs: LEASE,
      handlers: ["record"],
      whileSessionHeld: false,
    }),
  )

const ERROR = `it's "bad"\n\\ naïve — 失败`

/**
 * A change of claimed `row`: `failed` ends it with an error and an event naming an origin;
 * otherwise it is due again at 5_000 (its lease owner, finish time and error NULL). Either way
 * it asks to be decided again if the row changed while it ran (it did not: never called).
 */
const change = (row: TaskStore.TaskRow, at: number, failed: boolean): TaskStore.Change => ({
  id: row.id,
  fence: row.fence,
  update: {
    state: failed ? "failed" : "scheduled",
    slot: row.slot,
    runAt: failed ? row.runAt : 5_000,
    claimableAt: failed ? row.runAt : 5_000,
    attempt: failed ? 2 : 1,
    runNumber: 1,
    consecutiveFailures: failed ? 1 : 0,
    deliveries: row.deliveries,
    leaseOwner: null,
    finishedAt: failed ? at : null,
    lastError: failed ? ERROR : null,
    seq: row.seq + 10,
    updatedAt: at,
  },
  redecide: () => {
    throw new Error("the row did not change while it ran: nothing to decide again")
  },
  run: {
    taskId: row.id,
    generation: row.generation,
    slot: row.slot,
    attempt: 1,
    runAt: row.runAt,
    startedAt: at - 1,
    finishedAt: at,
    outcome: failed ? "failed" : "succeeded",
    error: failed ? ERROR : null,
    fence: row.fence,
    owner: "A",
    delivery: row.deliveries,
    state: failed ? "failed" : "scheduled",
    nextRunAt: failed ? null : 5_000,
    result: failed ? null : '{"ok":"ja — ✓"}',
    manual: failed,
  },
  events: failed
    ? [
        Events.make("released", row, at, "A", {
          cause: "interrupted",
          detail: ERROR,
          origin: "tool 'x'",
        }),
      ]
    : [],
  fencedOut: Events.make("fenced-out", row, at, "A"),
})

/** A tracer that keeps the text of every statement whose span ends. */
const recorder = () => {
  const texts: Array<string> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      const end = span.end.bind(span)
      span.end = (at, exit) => {
        end(at, exit)
        const text = span.attributes.get("db.query.text")
        if (typeof text === "string") texts.push(text)
      }
      return span
    },
  })
  return { texts, tracer }
}

/** The commit's writes among `texts`: the row updates, the changed-rows read, the INSERTs. */
const writes = (texts: ReadonlyArray<string>) =>
  [
    ...new Set(
      texts.filter(
        (t) =>
          /UPDATE tickwork_tasks|INSERT INTO tickwork_(runs|events)/.test(t) ||
          t.includes("revision <> 0"),
      ),
    ),
  ].sort()

describe("the commit on PostgreSQL", () => {
  it.live("uses one statement text whatever the batch's size and NULLs", () =>
    Effect.gen(function* () {
      const s = yield* TaskStore.TaskStore
      yield* s.insert([newTask("a"), ...["b", "c", "d", "e", "f"].map(newTask)])
      const rows = yield* claimAll(100)
      expect(rows.length).toBe(6)
      const [a, b, c, d, e, f] = rows as ReadonlyArray<TaskStore.TaskRow>
      const one = recorder()
      yield* s
        .commit([change(a as TaskStore.TaskRow, 200, true)])
        .pipe(Effect.withTracer(one.tracer))
      const three = recorder()
      yield* s
        .commit([
          change(b as TaskStore.TaskRow, 200, false),
          change(c as TaskStore.TaskRow, 200, true),
          change(d as TaskStore.TaskRow, 200, false),
        ])
        .pipe(Effect.withTracer(three.tracer))
      const two = recorder()
      yield* s
        .commit([
          change(e as TaskStore.TaskRow, 300, false),
          change(f as TaskStore.TaskRow, 300, false),
        ])
        .pipe(Effect.withTracer(two.tracer))
      const first = writes(one.texts)
      // The update, the read of rows changed while they ran, the ledger and event INSERTs.
      expect(first.length).toBe(4)
      expect(writes(three.texts)).toEqual(first)
      // No event written: the same texts, less the events' INSERT.
      expect(writes(two.texts)).toEqual(first.filter((t) => !t.includes("tickwork_events")))
    }).pipe(Effect.provide(Postgres.layer({ url: db.url }))),
  )
})

describe("the commit on PostgreSQL, free text", () => {
  it.live("stores a lone surrogate as U+FFFD, as a bound string is, and commits", () =>
    Effect.gen(function* () {
      const s = yield* TaskStore.TaskStore
      yield* s.insert([newTask("a")])
      const [a] = (yield* claimAll(100)) as ReadonlyArray<TaskStore.TaskRow>
      // Half of "😀" (U+1F600) at the end, as a message cut by UTF-16 length leaves it.
      const cut = "failed: \uD83D"
      const c = change(a as TaskStore.TaskRow, 200, true)
      const committed = yield* s.commit([
        {
          ...c,
          update: { ...c.update, lastError: cut },
          run: { ...(c.run as NonNullable<typeof c.run>), error: cut, result: "\uDE00 half" },
          events: c.events.map((e) => ({ ...e, detail: cut })),
        },
      ])
      expect(committed.results).toEqual(["applied"])
      const row = Option.getOrThrow(yield* s.get("a"))
      expect([row.state, row.lastError]).toEqual(["failed", "failed: \uFFFD"])
      expect((yield* s.runs("a")).map((r) => [r.error, r.result])).toEqual([
        ["failed: \uFFFD", "\uFFFD half"],
      ])
      expect((yield* s.events("a")).map((e) => e.detail)).toEqual(["failed: \uFFFD"])
    }).pipe(Effect.provide(Postgres.layer({ url: db.url }))),
  )
})

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<TaskStore.TaskStore, unknown>]> = [
  ["PostgreSQL", () => Postgres.layer({ url: db.url })],
  ["SQLite", () => Sqlite.layer({ filename: files.file() })],
]

describe.each(stores)("the commit on %s", (_name, layer) => {
  it.live("writes each row, ledger row and event as the change says, under its fence", () =>
    Effect.gen(function* () {
      const s = yield* TaskStore.TaskStore
      yield* s.insert([newTask("a"), newTask("b"), newTask("c")])
      const [a, b, c] = (yield* claimAll(100)) as [TaskStore.TaskRow, ...Array<TaskStore.TaskRow>]
      // c's claim is stale: its fence moved on (claimed again by B after the lease lapsed).
      const stale = { ...(c as TaskStore.TaskRow), fence: (c as TaskStore.TaskRow).fence - 1 }
      const committed = yield* s.commit([
        change(a, 200, true),
        change(b as TaskStore.TaskRow, 200, false),
        change(stale, 200, false),
      ])
      expect(committed.results).toEqual(["applied", "applied", "fenced-out"])
      const row = (id: string) =>
        Effect.map(s.get(id), (o) => {
          const r = Option.getOrThrow(o)
          return [
            r.state,
            r.slot,
            r.runAt,
            r.claimableAt,
            r.attempt,
            r.runNumber,
            r.consecutiveFailures,
            r.leaseOwner,
            r.finishedAt,
            r.lastError,
            r.seq,
            r.pausedReason,
            r.resumeFrom,
          ]
        })
      expect(yield* row("a")).toEqual(["failed", 0, 0, 0, 2, 1, 1, null, 200, ERROR, 11, null, -1])
      expect(yield* row("b")).toEqual([
        "scheduled",
        0,
        5_000,
        5_000,
        1,
        1,
        0,
        null,
        null,
        null,
        11,
        null,
        -1,
      ])
      // The stale change wrote nothing: c is still running under its claim.
      expect(yield* row("c")).toEqual([
        "running",
        0,
        0,
        100 + LEASE,
        1,
        0,
        0,
        "A",
        null,
        null,
        1,
        null,
        -1,
      ])
      const ran = (id: string) =>
        Effect.map(s.runs(id), (list) =>
          list.map((r) => [
            r.outcome,
            r.error,
            r.state,
            r.nextRunAt,
            r.result ?? null,
            r.manual === true,
            r.fence,
            r.owner,
          ]),
        )
      expect(yield* ran("a")).toEqual([["failed", ERROR, "failed", null, null, true, 1, "A"]])
      expect(yield* ran("b")).toEqual([
        ["succeeded", null, "scheduled", 5_000, '{"ok":"ja — ✓"}', false, 1, "A"],
      ])
      expect(yield* ran("c")).toEqual([])
      const events = (id: string) =>
        Effect.map(s.events(id), (list) =>
          list.map((e) => [e.kind, e.cause, e.detail, e.origin ?? null, e.fence]),
        )
      expect(yield* events("a")).toEqual([["released", "interrupted", ERROR, "tool 'x'", 1]])
      expect(yield* events("b")).toEqual([])
      expect(yield* events("c")).toEqual([["fenced-out", null, null, null, 0]])
      // Committed again (its answer lost, say): nothing is written twice.
      const again = yield* s.commit([change(a, 200, true)])
      expect(again.results).toEqual(["applied"])
      expect((yield* s.runs("a")).length).toBe(1)
    }).pipe(Effect.provide(layer())),
  )
})
