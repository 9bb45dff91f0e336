/**
 * The fleet's safeguards, each driven directly against the store's statements (SPEC §17): a
 * completion counts only under its claim's fence; a renewal extends only the leases its owner
 * still holds; a take-over takes only the claims of owners whose database session ended; a claim
 * made "while the session is held" claims nothing without it. Times are the store's inputs (no
 * clock): every test runs in milliseconds. The slow stall and chaos tests are a second line.
 */

import { PgClient } from "@effect/sql-pg"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Retry, Schedule } from "@tickwork/core"
import { Deferred, Effect, Fiber, type Layer, Option, Redacted, Schema, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { TestClock } from "effect/testing"
import { DurableScheduler, Handler, Postgres, Sqlite, TaskStore } from "../src/index.ts"
import * as Fleet from "../src/internal/fleet.ts"
import { tempDir } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

let db: { url: string; drop: () => Promise<void> }
let files: ReturnType<typeof tempDir>
beforeEach(async () => {
  db = await freshDatabase()
  files = tempDir()
})
afterEach(async () => {
  files.cleanup()
  await db.drop()
})

const LEASE = 1_000

const newTask = (id: string, slot = 0): TaskStore.NewTask => ({
  id,
  handler: "record",
  payload: '{"n":1}',
  schedule: { kind: "once", at: slot },
  priority: 1,
  retry: Retry.none,
  missedRuns: "catch-up",
  pauseAfter: 0,
  timeoutMs: 0,
  slot,
  seq: 1,
  now: 0,
})

const claimAs = (
  owner: string,
  now: number,
  options?: { whileSessionHeld?: boolean; limit?: number },
) =>
  Effect.flatMap(TaskStore.TaskStore, (s) =>
    s.claim({
      owner,
      now,
      limit: options?.limit ?? 10,
      leaseMs: LEASE,
      handlers: ["record"],
      whileSessionHeld: options?.whileSessionHeld ?? false,
    }),
  )

/** The completion `owner` would commit for its claim `row`: the task done, its run recorded. */
const done = (row: TaskStore.TaskRow, owner: string, at: number): TaskStore.Change => ({
  id: row.id,
  fence: row.fence,
  update: {
    state: "done",
    slot: row.slot,
    runAt: row.runAt,
    claimableAt: row.runAt,
    attempt: 1,
    runNumber: 1,
    consecutiveFailures: 0,
    deliveries: 0,
    leaseOwner: null,
    finishedAt: at,
    lastError: null,
    seq: row.seq,
    updatedAt: at,
  },
  run: {
    taskId: row.id,
    generation: row.generation,
    slot: row.slot,
    attempt: 1,
    runAt: row.runAt,
    startedAt: at - 1,
    finishedAt: at,
    outcome: "succeeded",
    error: null,
    fence: row.fence,
    owner,
    delivery: row.deliveries,
    state: "done",
    nextRunAt: null,
  },
  events: [],
  fencedOut: {
    taskId: row.id,
    generation: row.generation,
    kind: "fenced-out",
    firstSlot: row.slot,
    lastSlot: row.slot,
    count: 1,
    cause: null,
    at,
    fence: row.fence,
    owner,
    detail: "attempt 1, succeeded",
  },
})

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<TaskStore.TaskStore, unknown>]> = [
  ["PostgreSQL", () => Postgres.layer({ url: db.url })],
  ["SQLite", () => Sqlite.layer({ filename: files.file() })],
]

describe.each(stores)("fleet safeguards on %s", (_name, layer) => {
  it.live("a completion under a fence that moved on is fenced out and changes nothing", () =>
    Effect.gen(function* () {
      const s = yield* TaskStore.TaskStore
      yield* s.insert([newTask("t")])
      const [a] = yield* claimAs("A", 100)
      // A's lease ran out at 1_100 without a renewal: B claims the run under a new fence.
      const [b] = yield* claimAs("B", 1_100)
      expect([a?.fence, b?.fence]).toEqual([1, 2])
      const late = yield* s.commit([done(a as TaskStore.TaskRow, "A", 1_200)])
      expect(late.results).toEqual(["fenced-out"])
      // B's claim is untouched: still running, still B's, still its lease.
      const row = (yield* s.get("t")).pipe((o) => (o._tag === "Some" ? o.value : undefined))
      expect([row?.state, row?.leaseOwner, row?.fence, row?.claimableAt, row?.runNumber]).toEqual([
        "running",
        "B",
        2,
        1_100 + LEASE,
        0,
      ])
      expect(yield* s.runs("t")).toEqual([])
      expect((yield* s.events("t")).map((e) => [e.kind, e.owner, e.fence])).toEqual([
        ["fenced-out", "A", 1],
      ])
      // B's own completion applies.
      expect((yield* s.commit([done(b as TaskStore.TaskRow, "B", 1_300)])).results).toEqual([
        "applied",
      ])
      expect((yield* s.runs("t")).map((r) => [r.owner, r.fence])).toEqual([["B", 2]])
    }).pipe(Effect.provide(layer())),
  )

  it.live("a renewal extends only the leases its owner holds under their fences", () =>
    Effect.gen(function* () {
      const s = yield* TaskStore.TaskStore
      yield* s.insert([newTask("a"), newTask("b")])
      expect((yield* claimAs("A", 100)).map((r) => r.fence)).toEqual([1, 1])
      expect([...(yield* s.renew("A", [{ id: "a", fence: 1 }], 600, LEASE))]).toEqual(["a"])
      // "b" was not renewed: its lease ran out at 1_100 and B claimed it under a new fence.
      expect((yield* claimAs("B", 1_100)).map((r) => [r.id, r.fence])).toEqual([["b", 2]])
      const renewed = yield* s.renew(
        "A",
        [
          { id: "a", fence: 1 },
          { id: "b", fence: 1 },
        ],
        1_200,
        LEASE,
      )
      expect([...renewed]).toEqual(["a"])
      const due = (id: string) =>
        Effect.map(s.get(id), (o) => (o._tag === "Some" ? o.value.claimableAt : undefined))
      expect([yield* due("a"), yield* due("b")]).toEqual([1_200 + LEASE, 1_100 + LEASE])
    }).pipe(Effect.provide(layer())),
  )
})

/** The PostgreSQL store, and a client of its own for the statements the store runs inside. */
const onPostgres = <A, E>(
  body: (
    s: TaskStore.TaskStoreShape,
    sql: PgClient.PgClient,
  ) => Effect.Effect<A, E, TaskStore.TaskStore>,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* PgClient.make({ url: Redacted.make(db.url), maxConnections: 1 })
      const s = yield* TaskStore.TaskStore
      return yield* body(s, sql)
    }),
  ).pipe(Effect.provide(Postgres.layer({ url: db.url })), Effect.provide(Reactivity.layer))

/** Holds `owner`'s liveness lock (its database session) while the enclosing scope lasts. */
const liveSession = (s: TaskStore.TaskStoreShape, owner: string) =>
  (s.session as NonNullable<TaskStore.TaskStoreShape["session"]>)(owner)

/**
 * Ends every liveness session on this test's database, and waits (at most 5 s, on the server)
 * until their backends are gone: their locks are free when it returns.
 */
const endSessions = (sql: PgClient.PgClient) =>
  sql`SELECT pg_terminate_backend(pid, 5000) AS ended FROM pg_stat_activity
    WHERE application_name = 'tickwork-session' AND datname = current_database()`.pipe(
    Effect.map((rows) => expect(rows.length).toBeGreaterThan(0)),
  )

const dueAt = (s: TaskStore.TaskStoreShape, id: string) =>
  Effect.map(s.get(id), (o) => (o._tag === "Some" ? o.value.claimableAt : undefined))

describe("fleet safeguards on PostgreSQL sessions", () => {
  it.live("a claim made while the session is held claims nothing without the claimer's lock", () =>
    onPostgres((s, sql) =>
      Effect.gen(function* () {
        yield* s.insert([newTask("t")])
        const mine = { whileSessionHeld: true }
        // Nobody holds A's lock: A's session ended (or never began).
        expect(yield* claimAs("A", 100, mine)).toEqual([])
        // Another owner's lock is not A's.
        yield* Effect.scoped(
          Effect.andThen(
            liveSession(s, "B"),
            Effect.flatMap(claimAs("A", 100, mine), (rows) =>
              Effect.sync(() => expect(rows).toEqual([])),
            ),
          ),
        )
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* liveSession(s, "A")
            const rows = yield* claimAs("A", 100, mine)
            expect(rows.map((r) => [r.id, r.leaseOwner])).toEqual([["t", "A"]])
            // A's session ends (its backend is gone, so is its lock): A claims nothing more.
            yield* endSessions(sql)
            yield* s.insert([newTask("u")])
            expect(yield* claimAs("A", 200, mine)).toEqual([])
          }),
        )
        expect(Option.getOrUndefined(yield* s.state("u"))).toBe("scheduled")
      }),
    ),
  )

  it.live("a take-over takes the claims of ended sessions only, never a live owner's", () =>
    onPostgres((s, sql) =>
      Effect.gen(function* () {
        yield* s.insert([newTask("a", 0), newTask("c", 1), newTask("d", 2)])
        const one = { limit: 1 }
        expect((yield* claimAs("A", 100, one)).map((r) => r.id)).toEqual(["a"])
        expect((yield* claimAs("C", 100, one)).map((r) => r.id)).toEqual(["c"])
        expect((yield* claimAs("D", 100, one)).map((r) => r.id)).toEqual(["d"])
        const leased = 100 + LEASE
        // A and C are alive (their sessions hold their locks); D's session ended.
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* liveSession(s, "A")
            yield* liveSession(s, "C")
            // Which owners look dead: D only, for any asker but D itself.
            expect(yield* Fleet.deadOwners(sql, "B", 200)).toEqual(["D"])
            expect(yield* Fleet.deadOwners(sql, "A", 200)).toEqual(["D"])
            // The statement itself checks again: an owner named as dead that is alive by now
            // (restarted under its name since it was found dead) keeps its claims.
            expect(yield* sql.withTransaction(Fleet.takeOver(sql, "B", 200, ["A", "C"]))).toEqual(
              [],
            )
            expect([yield* dueAt(s, "a"), yield* dueAt(s, "c")]).toEqual([leased, leased])
            const taken = yield* (s.takeOver as NonNullable<TaskStore.TaskStoreShape["takeOver"]>)(
              "B",
              200,
              false,
            )
            expect(taken.map((t) => [t.id, t.owner, t.fence])).toEqual([["d", "D", 1]])
            // Due again at its own time; A's and C's leases untouched.
            expect([yield* dueAt(s, "a"), yield* dueAt(s, "c"), yield* dueAt(s, "d")]).toEqual([
              leased,
              leased,
              2,
            ])
            expect((yield* s.events("d")).map((e) => [e.kind, e.cause, e.owner])).toEqual([
              ["recovered", "session-ended", "D"],
            ])
            // A starting (`mine`) takes over the claims left under its own name, and no one else's.
            const own = yield* (s.takeOver as NonNullable<TaskStore.TaskStoreShape["takeOver"]>)(
              "A",
              200,
              true,
            )
            expect(own.map((t) => [t.id, t.owner])).toEqual([["a", "A"]])
            expect([yield* dueAt(s, "a"), yield* dueAt(s, "c")]).toEqual([0, leased])
            expect(yield* s.events("c")).toEqual([])
          }),
        )
      }),
    ),
  )
})

/**
 * A handler whose runs signal `started`, then go on until `finish` is completed or they are
 * interrupted (counted). Each test completes `finish` however its body ends, before the
 * scheduler closes: its close then waits for no run (under the TestClock it would wait forever).
 */
const blocking = () => {
  const started = Deferred.makeUnsafe<void>()
  const finish = Deferred.makeUnsafe<void>()
  const interrupted = { count: 0 }
  const handler = Handler.make("record", Schema.Struct({ n: Schema.Number }), () =>
    Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(finish)).pipe(
      Effect.onInterrupt(() => Effect.sync(() => interrupted.count++)),
    ),
  )
  return { handler, started, finish, interrupted }
}

/**
 * Yields until `holds` (work the test started outside the clock has done its part), at most
 * 1,000 times: the assertion after it says what did not happen.
 */
const until = <E>(holds: Effect.Effect<boolean, E>): Effect.Effect<void, E> =>
  Effect.gen(function* () {
    for (let k = 0; k < 1_000 && !(yield* holds); k++) yield* Effect.yieldNow
  })

/** Runs `body` with a durable scheduler and its store (readable beside it) on `layer`. */
const withStore = <A, E, H extends Handler.Any>(
  layer: Layer.Layer<TaskStore.TaskStore, unknown>,
  options: DurableScheduler.DurableSchedulerOptions<H>,
  body: (
    d: DurableScheduler.DurableSchedulerShape,
    s: TaskStore.TaskStoreShape,
  ) => Effect.Effect<A, E>,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const s = yield* TaskStore.TaskStore
      const { durable } = yield* DurableScheduler.make(options)
      return yield* body(durable, s)
    }),
  ).pipe(Effect.provide(layer))

describe("fleet safeguards in the scheduler", () => {
  it.effect("a run's lease is renewed every third of a lease, so it never lapses", () =>
    Effect.gen(function* () {
      const { handler, started, finish } = blocking()
      const lease = 3_000
      yield* withStore(
        Sqlite.layer({ filename: files.file() }),
        { handlers: [handler], lease },
        (d, s) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "long",
              handler,
              payload: { n: 1 },
              schedule: Schedule.once(0),
            })
            yield* Deferred.await(started)
            expect(yield* dueAt(s, "long")).toBe(lease)
            // Over three leases, each third of one renews the lease from then.
            for (let t = 1_000; t <= 3 * lease; t += 1_000) {
              yield* TestClock.adjust(1_000)
              yield* until(Effect.map(dueAt(s, "long"), (due) => due === t + lease))
              expect([t, yield* dueAt(s, "long")]).toEqual([t, t + lease])
            }
            const stats = yield* d.stats
            expect([stats.leasesLost, stats.inFlight, stats.claimed]).toEqual([0, 1, 1])
            // The run ends, and commits under the fence it was claimed with.
            yield* Deferred.succeed(finish, undefined)
            yield* until(Effect.map(s.runs("long"), (runs) => runs.length > 0))
            expect((yield* s.runs("long")).map((r) => [r.outcome, r.fence])).toEqual([
              ["succeeded", 1],
            ])
          }).pipe(Effect.ensuring(Deferred.succeed(finish, undefined))),
      )
    }),
  )

  it.live(
    "a process that loses its database session hands its runs in flight back",
    () =>
      Effect.gen(function* () {
        const { handler, started, finish, interrupted } = blocking()
        yield* withStore(
          Postgres.layer({ url: db.url }),
          { handlers: [handler], owner: "A" },
          (d, s) =>
            Effect.gen(function* () {
              const released = yield* Effect.forkChild(
                Stream.runHead(
                  Stream.filter(d.occurrences, (o) => o.kind === "released" && o.taskId === "t"),
                ),
                { startImmediately: true },
              )
              yield* d.schedule({ id: "t", handler, payload: { n: 1 }, schedule: Schedule.once(0) })
              yield* Deferred.await(started).pipe(Effect.timeout("10 seconds"))
              yield* Effect.scoped(
                Effect.flatMap(
                  PgClient.make({ url: Redacted.make(db.url), maxConnections: 1 }),
                  endSessions,
                ),
              ).pipe(Effect.provide(Reactivity.layer))
              // Waits on the event itself, bounded generously for a loaded machine.
              const event = yield* Fiber.join(released).pipe(
                Effect.timeoutOption("10 seconds"),
                Effect.map(Option.flatten),
              )
              expect(
                Option.match(event, {
                  onNone: () => "no run handed back within 10 s of the session's end",
                  onSome: (e) => [e.kind, e.owner, e.fence],
                }),
              ).toEqual(["released", "A", 1])
              expect(interrupted.count).toBe(1)
              const stats = yield* d.stats
              expect([stats.sessionsLost, stats.leasesLost, stats.released]).toEqual([1, 1, 1])
              // Handed back under its fence: a later claim (this process's, once its session is
              // back, or another's) runs it again as its second delivery.
              const events = (yield* s.events("t")).map((e) => [e.kind, e.cause, e.fence])
              expect(events).toEqual([["released", "interrupted", 1]])
            }).pipe(Effect.ensuring(Deferred.succeed(finish, undefined))),
        )
      }),
    30_000,
  )
})
