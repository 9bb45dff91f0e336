/**
 * Circuit breakers on stored rows (`src/internal/breakers.ts`), on their own: each step called
 * directly on an in-memory SQLite store, and what it writes to the breaker's row and its tasks'
 * rows, and the events it returns, read back (SPEC §7). The scheduler's breaker tests
 * (`breakers.test.ts`) drive the same steps through runs under `TestClock`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Breaker, Retry } from "@tickwork/core"
import { Effect, Option } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import * as Breakers from "../src/internal/breakers.ts"
import type { EventEntry, NewTask, TaskRow } from "../src/internal/model.ts"
import * as SqliteClient from "../src/SqliteClient.ts"
import * as TaskStore from "../src/TaskStore.ts"

/** Two failures open it for 100 ms (then 200 ms, up to 400 ms). */
const policy = Breaker.resolve({
  failures: 2,
  coolDown: 100,
  factor: 2,
  maxCoolDown: 400,
}) as Breaker.Resolved
const SMTP = { key: Breakers.sharedKey("smtp"), name: "smtp", policy }

const task = (id: string, breaker = SMTP): NewTask => ({
  id,
  handler: "mail",
  payload: "{}",
  schedule: { kind: "once", at: 1_000 },
  priority: 1,
  retry: Retry.none,
  missedRuns: "catch-up",
  pauseAfter: 0,
  timeoutMs: 0,
  slot: 1_000,
  seq: 1,
  now: 0,
  breaker,
})

interface Fixture {
  readonly tx: Breakers.Tx
  readonly store: TaskStore.TaskStoreShape
  /** Task `id`'s row. */
  readonly row: (id: string) => Effect.Effect<TaskRow, unknown>
  /** Sets task `id`'s state and paused reason. */
  readonly set: (
    id: string,
    state: TaskRow["state"],
    reason: TaskRow["pausedReason"],
  ) => Effect.Effect<void, unknown>
}

/** A fresh in-memory store holding `ids` (all in breaker smtp, scheduled), and its fixture. */
const withStore = <A>(
  ids: ReadonlyArray<string>,
  body: (f: Fixture) => Effect.Effect<A, unknown>,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { client } = yield* SqliteClient.make({ filename: ":memory:" })
      const store = yield* TaskStore.make({ exclusive: false }).pipe(
        Effect.provideService(SqlClient, client),
      )
      let seq = 100
      const tx: Breakers.Tx = { sql: client, dialect: "sqlite", seq: () => ++seq, owner: "p1" }
      // The layer defines its shared breakers; an insert writes the tasks' memberships.
      yield* Breakers.define(tx, [{ ...SMTP, shared: true }], 0)
      if (ids.length > 0) yield* store.insert(ids.map((id) => task(id)) as never)
      return yield* body({
        tx,
        store,
        row: (id) => Effect.map(store.get(id), Option.getOrThrow),
        set: (id, state, reason) =>
          Effect.asVoid(
            client`UPDATE tickwork_tasks SET state = ${state}, paused_reason = ${reason} WHERE id = ${id}`,
          ),
      })
    }),
  ).pipe(Effect.provide(Reactivity.layer))

/** The breaker row of smtp. */
const smtp = (f: Fixture) =>
  Effect.map(Breakers.load(f.tx, SMTP.key), (b) => b as NonNullable<typeof b>)

/** Events as `<kind> <task> <cause>`. */
const brief = (events: ReadonlyArray<EventEntry>) =>
  events.map((e) => `${e.kind} ${e.taskId} ${e.cause}`)

/** Fails task `id`'s slot at `now` (its retries used up). */
const fail = (f: Fixture, id: string, now: number) =>
  Effect.gen(function* () {
    const b = yield* smtp(f)
    return yield* Breakers.afterSlot(f.tx, b, yield* f.row(id), true, now)
  })

describe("breaker row keys", () => {
  it("a shared breaker by its name, a task's own by the task's id", () => {
    expect(Breakers.sharedKey("smtp")).toBe("shared:smtp")
    expect(Breakers.ownKey("t1")).toBe("task:t1")
  })
})

describe("a breaker's rows, step by step (SPEC §7)", () => {
  it.effect("load reads a breaker's row, or nothing for an unknown key", () =>
    withStore(["a"], (f) =>
      Effect.gen(function* () {
        expect(yield* Breakers.load(f.tx, "shared:nope")).toBeUndefined()
        expect(yield* Breakers.load(f.tx, SMTP.key)).toMatchObject({
          key: "shared:smtp",
          name: "smtp",
          shared: true,
          state: "closed",
          failures: 0,
          probe: null,
        })
        expect(yield* Breakers.nextHalfOpen(f.tx.sql)).toBeUndefined()
      }),
    ),
  )

  it.effect(
    "opening holds its tasks: a scheduled one paused, a running one asked to pause, others left",
    () =>
      withStore(["a", "b", "c", "d"], (f) =>
        Effect.gen(function* () {
          yield* f.set("c", "running", null)
          yield* f.set("d", "paused", "manual")
          // One failure: counted, nothing held.
          expect(yield* fail(f, "a", 1_000)).toEqual([])
          expect(yield* smtp(f)).toMatchObject({ state: "closed", failures: 1 })
          const events = yield* fail(f, "a", 1_010)
          expect(brief(events)).toEqual(["breaker a open", "paused b breaker"])
          expect(events[0]).toMatchObject({
            breaker: "smtp",
            at: 1_010,
            owner: "p1",
            detail:
              "closed -> open: slot 1000 of task a failed; cool-down 100 ms, half-open at 1110",
          })
          expect(events[1]).toMatchObject({ owner: "p1", at: 1_010 })
          expect(yield* smtp(f)).toMatchObject({
            state: "open",
            opens: 1,
            openedAt: 1_010,
            halfOpenAt: 1_110,
          })
          expect(yield* f.row("b")).toMatchObject({ state: "paused", pausedReason: "breaker" })
          expect(yield* f.row("c")).toMatchObject({ state: "running", pausedReason: "breaker" })
          expect(yield* f.row("d")).toMatchObject({ state: "paused", pausedReason: "manual" })
          expect(yield* Breakers.nextHalfOpen(f.tx.sql)).toBe(1_110)
        }),
      ),
  )

  it.effect(
    "after the cool-down a held task probes; its success closes the breaker and unholds the rest",
    () =>
      withStore(["a", "b", "c", "r"], (f) =>
        Effect.gen(function* () {
          yield* f.set("r", "running", null)
          yield* fail(f, "a", 1_000)
          yield* fail(f, "a", 1_010)
          // Not yet due: nothing moves.
          expect(yield* Breakers.halfOpen(f.tx, 1_109)).toEqual([])
          const half = yield* Breakers.halfOpen(f.tx, 1_110)
          expect(brief(half)).toEqual(["breaker b half-open", "resumed b breaker"])
          expect(half[0]?.detail).toBe(
            "open -> half-open: cool-down ended; task b runs as the probe",
          )
          // A one-shot held past its time is due at once, at its own time (catch-up).
          expect(half[1]?.detail).toBe("due at 1000")
          const b = yield* f.row("b")
          expect(yield* smtp(f)).toMatchObject({
            state: "half-open",
            probe: "b",
            probeGeneration: b.generation,
            halfOpenAt: null,
          })
          expect(b).toMatchObject({ state: "scheduled", pausedReason: null, runAt: 1_000 })
          // The probe's slot succeeds: closed; the held task and the running one are let go.
          yield* f.set("b", "running", null)
          const closed = yield* Breakers.afterSlot(
            f.tx,
            yield* smtp(f),
            yield* f.row("b"),
            false,
            1_200,
          )
          expect(brief(closed)).toEqual(["breaker b closed", "resumed c breaker"])
          expect(closed[0]?.detail).toBe("half-open -> closed: slot 1000 of task b succeeded")
          expect(yield* smtp(f)).toMatchObject({ state: "closed", opens: 0, probe: null })
          expect(yield* f.row("c")).toMatchObject({ state: "scheduled", pausedReason: null })
          expect(yield* f.row("r")).toMatchObject({ state: "running", pausedReason: null })
          expect(yield* Breakers.nextHalfOpen(f.tx.sql)).toBeUndefined()
        }),
      ),
  )

  it.effect("with no held task to probe, the next task to come is the probe", () =>
    withStore(["a"], (f) =>
      Effect.gen(function* () {
        yield* fail(f, "a", 1_000)
        yield* fail(f, "a", 1_010)
        const half = yield* Breakers.halfOpen(f.tx, 1_200)
        expect(half).toHaveLength(1)
        expect(half[0]).toMatchObject({
          taskId: "",
          detail:
            "open -> half-open: cool-down ended; no held task to probe (the next task to come is the probe)",
        })
        // Joining the half-open breaker, a scheduled task is its probe and runs.
        expect(yield* Breakers.join(f.tx, SMTP.key, yield* f.row("a"), 1_300)).toEqual([])
        const a = yield* f.row("a")
        expect(a.state).toBe("scheduled")
        expect(yield* smtp(f)).toMatchObject({ probe: "a", probeGeneration: a.generation })
        // The next one is held (an insert joins its task's breaker).
        yield* f.store.insert([task("n")])
        const n = yield* f.row("n")
        expect(n).toMatchObject({ state: "paused", pausedReason: "breaker" })
        const again = yield* Breakers.join(f.tx, SMTP.key, { ...n, state: "scheduled" }, 1_310)
        expect(brief(again)).toEqual(["paused n breaker"])
        expect(again[0]).toMatchObject({ at: 1_310, owner: "p1" })
        expect(yield* Breakers.join(f.tx, "shared:nope", n, 1_300)).toEqual([])
      }),
    ),
  )

  it.effect("joining a closed breaker changes nothing; joining an open one holds", () =>
    withStore(["a", "b"], (f) =>
      Effect.gen(function* () {
        expect(yield* Breakers.join(f.tx, SMTP.key, yield* f.row("b"), 900)).toEqual([])
        expect(yield* f.row("b")).toMatchObject({ state: "scheduled" })
        yield* fail(f, "a", 1_000)
        yield* fail(f, "a", 1_010)
        yield* f.store.insert([task("j")])
        const running = { ...(yield* f.row("j")), state: "running" as const }
        yield* f.set("j", "running", null)
        // A running task joining an open breaker is asked to pause when its run ends.
        expect(yield* Breakers.join(f.tx, SMTP.key, running, 1_020)).toEqual([])
        expect(yield* f.row("j")).toMatchObject({ state: "running", pausedReason: "breaker" })
      }),
    ),
  )

  it.effect(
    "a probe paused by hand lets another held task through; another task's pause does not",
    () =>
      withStore(["a", "b", "c"], (f) =>
        Effect.gen(function* () {
          yield* fail(f, "a", 1_000)
          yield* fail(f, "a", 1_010)
          yield* Breakers.halfOpen(f.tx, 1_110)
          expect(yield* smtp(f)).toMatchObject({ probe: "b" })
          // Not the probe: nothing.
          expect(yield* Breakers.unprobe(f.tx, SMTP.key, yield* f.row("c"), 1_120)).toEqual([])
          expect(yield* Breakers.unprobe(f.tx, "shared:nope", yield* f.row("b"), 1_120)).toEqual([])
          // An earlier generation of the probe's id is not the probe.
          const b = yield* f.row("b")
          const older = { id: "b", generation: b.generation - 1 }
          expect(yield* Breakers.unprobe(f.tx, SMTP.key, older, 1_120)).toEqual([])
          expect(yield* smtp(f)).toMatchObject({ probe: "b" })
          yield* f.set("b", "paused", "manual")
          const moved = yield* Breakers.unprobe(f.tx, SMTP.key, b, 1_120)
          expect(brief(moved)).toEqual(["resumed c breaker"])
          const c = yield* f.row("c")
          expect(yield* smtp(f)).toMatchObject({ probe: "c", probeGeneration: c.generation })
        }),
      ),
  )

  it.effect("the probe leaving lets another held task through; a task's own breaker goes", () =>
    withStore(["a", "b", "c"], (f) =>
      Effect.gen(function* () {
        yield* fail(f, "a", 1_000)
        yield* fail(f, "a", 1_010)
        yield* Breakers.halfOpen(f.tx, 1_110)
        const b = yield* f.row("b")
        // A task of an earlier generation leaving is not the probe leaving.
        yield* Breakers.leave(f.tx, SMTP.key, { id: "b", generation: b.generation - 1 }, 1_120)
        expect(yield* smtp(f)).toMatchObject({ probe: "b" })
        yield* f.tx.sql`UPDATE tickwork_tasks SET breaker = NULL WHERE id = 'b'`
        const left = yield* Breakers.leave(f.tx, SMTP.key, b, 1_120)
        expect(brief(left)).toEqual(["resumed c breaker"])
        expect(yield* smtp(f)).toMatchObject({ probe: "c" })
        expect(yield* Breakers.leave(f.tx, "shared:nope", b, 1_120)).toEqual([])
        // A task's own breaker row is dropped when the task leaves it.
        const own = { key: Breakers.ownKey("o"), name: "o", policy }
        yield* f.store.insert([task("o", own)])
        expect(yield* Breakers.load(f.tx, own.key)).toBeDefined()
        expect(yield* Breakers.leave(f.tx, own.key, yield* f.row("o"), 1_130)).toEqual([])
        expect(yield* Breakers.load(f.tx, own.key)).toBeUndefined()
        expect((yield* Breakers.all(f.tx.sql)).map((x) => x.key)).toEqual(["shared:smtp"])
      }),
    ),
  )

  it.effect(
    "define re-defines a shared breaker's policy but keeps its state; an own one starts closed",
    () =>
      withStore(["a"], (f) =>
        Effect.gen(function* () {
          yield* fail(f, "a", 1_000)
          yield* fail(f, "a", 1_010)
          const wider = Breaker.resolve({ failures: 5, coolDown: 100 }) as Breaker.Resolved
          yield* Breakers.define(f.tx, [{ ...SMTP, shared: true, policy: wider }], 1_020)
          expect(yield* smtp(f)).toMatchObject({ state: "open", policy: wider })
          const own = { key: Breakers.ownKey("o"), name: "o", shared: false, policy }
          yield* Breakers.define(f.tx, [own], 1_020)
          yield* f.tx
            .sql`UPDATE tickwork_breakers SET state = 'open', failures = 2, opens = 1 WHERE key = ${own.key}`
          yield* Breakers.define(f.tx, [{ ...own, policy: wider }], 1_030)
          expect(yield* Breakers.load(f.tx, own.key)).toMatchObject({
            state: "closed",
            failures: 0,
            opens: 0,
            policy: wider,
            shared: false,
          })
        }),
      ),
  )
})

describe("a half-open breaker's probe, in full (SPEC §7)", () => {
  it.effect(
    "only the probe's own failure reopens it; its generation and the opening time are kept",
    () =>
      withStore(["a", "b", "c", "r"], (f) =>
        Effect.gen(function* () {
          yield* f.set("r", "running", null)
          yield* fail(f, "a", 1_000)
          yield* fail(f, "a", 1_010)
          yield* Breakers.halfOpen(f.tx, 1_110)
          const b = yield* f.row("b")
          const c = yield* f.row("c")
          // Same generation, another id: not the probe.
          expect(c.generation).toBe(b.generation)
          const half = yield* smtp(f)
          expect(Breakers.opensOnFailure(half, b)).toBe(true)
          expect(Breakers.opensOnFailure(half, c)).toBe(false)
          expect(half).toMatchObject({ state: "half-open", openedAt: 1_010 })
          // A run that went on while it was open ends: the probe stays, generation and all.
          yield* Breakers.afterSlot(f.tx, half, yield* f.row("r"), false, 1_150)
          expect(yield* smtp(f)).toMatchObject({
            state: "half-open",
            probe: "b",
            probeGeneration: b.generation,
            openedAt: 1_010,
          })
        }),
      ),
  )
})
