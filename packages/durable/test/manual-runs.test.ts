/**
 * SPEC §19.2 on stored rows: a failed durable task retried by hand — through the scheduler and
 * through `StoreAdmin` from another connection — runs one more attempt of its failed slot, its
 * ledger kept; a refusal is typed and changes nothing. SQLite on virtual time; PostgreSQL with
 * two processes claiming, where the retried run happens once (real time, generous deadlines).
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { Handler, Postgres, StoreAdmin } from "../src/index.ts"
import { advance, inFile, sqlite, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

/** A handler that fails while `gate.fail` is set, recording every attempt it is given. */
const gated = () => {
  const gate = { fail: true }
  const attempts: Array<[slot: number, attempt: number]> = []
  const handler = Handler.make("charge", Schema.Struct({}), (_, run) =>
    Effect.suspend(() => {
      attempts.push([run.slot, run.attempt])
      return gate.fail ? Effect.fail("declined") : Effect.void
    }),
  )
  return { gate, attempts, handler }
}

describe("retry on SQLite (SPEC §19.2)", () => {
  it.effect("a failed task gets one more attempt now; a failure ends it failed again", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { gate, attempts, handler } = gated()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "c",
              handler,
              payload: {},
              schedule: Schedule.once(10),
              retry: { maxRetries: 1, base: 5 },
            })
            yield* advance(d, 100)
            expect(yield* d.status("c")).toBe("failed")
            yield* d.retry("c")
            yield* advance(d, 0)
            expect(yield* d.status("c")).toBe("failed")
            gate.fail = false
            yield* d.retry("c")
            yield* advance(d, 0)
            expect(yield* d.status("c")).toBe("done")
            expect(attempts).toEqual([
              [10, 1],
              [10, 2],
              [10, 3],
              [10, 4],
            ])
            const ledger = yield* d.ledger("c")
            expect(
              ledger.flatMap((o) => (o.kind === "ran" ? [[o.attempt, o.outcome]] : [])),
            ).toEqual([
              [1, "failed"],
              [2, "failed"],
              [3, "failed"],
              [4, "succeeded"],
            ])
            expect(ledger.filter((o) => o.kind === "manual-retry")).toHaveLength(2)
            const refused = yield* Effect.flip(d.retry("c"))
            expect(refused).toMatchObject({
              _tag: "ManualRunRefused",
              action: "retry",
              id: "c",
              state: "done",
            })
            expect(yield* Effect.flip(d.retry("ghost"))).toMatchObject({ state: "unknown" })
            expect((yield* d.ledger("c")).length).toBe(ledger.length)
          }),
        )
      }),
    ),
  )

  it.effect("an expired one-shot runs the attempt it never ran, its deadline dropped", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { gate, attempts, handler } = gated()
        gate.fail = false
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "late",
              handler,
              payload: {},
              schedule: Schedule.once(10),
              window: 5,
            })
            yield* d.pause("late")
            yield* advance(d, 100)
            yield* d.resume("late")
            yield* advance(d, 0)
            expect(yield* d.status("late")).toBe("failed")
            expect(attempts).toEqual([])
            yield* d.retry("late")
            yield* advance(d, 0)
            expect(yield* d.status("late")).toBe("done")
            expect(attempts).toEqual([[10, 1]])
          }),
        )
      }),
    ),
  )

  it.effect("StoreAdmin retries from another connection; the scheduler runs it", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { gate, attempts, handler } = gated()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({ id: "c", handler, payload: {}, schedule: Schedule.once(0) })
            yield* advance(d, 10)
            expect(yield* d.status("c")).toBe("failed")
          }),
        )
        const first = yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(file)
            const refused = yield* admin.resume("c")
            const done = yield* admin.retry("c", { origin: "cli" })
            const again = yield* admin.retry("c")
            return { refused, done, again }
          }),
        )
        expect(first.refused).toMatchObject({ changed: false, state: "failed" })
        expect(first.done).toEqual({
          id: "c",
          changed: true,
          state: "scheduled",
          pausedReason: null,
        })
        expect(first.again).toMatchObject({ changed: false, state: "scheduled" })
        gate.fail = false
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 10)
            expect(yield* d.status("c")).toBe("done")
            const event = (yield* d.ledger("c")).find((o) => o.kind === "manual-retry")
            expect(event).toMatchObject({ origin: "cli" })
          }),
        )
        expect(attempts).toEqual([
          [0, 1],
          [0, 2],
        ])
      }),
    ),
  )
})

describe("retry on PostgreSQL, two processes claiming (SPEC §19.6)", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  it.live("a retry from StoreAdmin is claimed once by the fleet", () =>
    Effect.gen(function* () {
      const { gate, attempts, handler } = gated()
      const options = { handlers: [handler], pollInterval: 50 }
      const until = (d: { status: (id: string) => Effect.Effect<string, unknown> }, s: string) =>
        Effect.gen(function* () {
          const end = Date.now() + 20_000
          while ((yield* d.status("c")) !== s && Date.now() < end) yield* Effect.sleep(25)
          return yield* d.status("c")
        })
      yield* withScheduler(Postgres.layer({ url: db.url }), options, (a) =>
        withScheduler(Postgres.layer({ url: db.url }), options, (b) =>
          Effect.gen(function* () {
            yield* a.schedule({ id: "c", handler, payload: {}, schedule: Schedule.once(0) })
            expect(yield* until(b, "failed")).toBe("failed")
            gate.fail = false
            const r = yield* Effect.scoped(
              Effect.flatMap(StoreAdmin.open(db.url), (admin) => admin.retry("c")),
            )
            // Told by NOTIFY, a worker may have claimed it before the state is read back.
            expect(r).toMatchObject({ changed: true })
            expect(yield* until(a, "done")).toBe("done")
            // Both processes poll; the new attempt of the same slot ran once.
            yield* Effect.sleep(300)
            expect(attempts.map(([, attempt]) => attempt)).toEqual([1, 2])
            expect(new Set(attempts.map(([slot]) => slot)).size).toBe(1)
          }),
        ),
      )
    }),
  )
})
