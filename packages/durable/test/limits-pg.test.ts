/**
 * SPEC §20 on PostgreSQL with two schedulers claiming one store: a group's concurrency limit
 * and a key's rate limit hold across both, counted from the handlers' own effects log (one
 * process here, so the log's order is the order things happened). Real time: each wait is on a
 * condition with a generous bound, and nothing checked depends on how fast the machine is.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { Handler, Postgres } from "../src/index.ts"
import { withScheduler } from "./helpers.ts"
import { peak } from "./limits-fixtures.ts"
import { freshDatabase } from "./pg.ts"

interface Line {
  readonly kind: "start" | "end"
  readonly id: string
  readonly at: number
  /** When the run was claimed, epoch ms: the start the store counted. */
  readonly claimedAt: number
  readonly owner: string
}

const handlerOf = (log: Array<Line>) =>
  Handler.make("work", Schema.Struct({ ms: Schema.Number }), (p, run) =>
    Effect.gen(function* () {
      const line = (kind: Line["kind"]) => ({
        kind,
        id: run.id,
        at: Date.now(),
        claimedAt: run.claimedAt,
        owner: String(run.fence),
      })
      log.push(line("start"))
      yield* Effect.sleep(p.ms)
      log.push(line("end"))
    }),
  )

const waitFor = (check: () => boolean, what: string) =>
  Effect.gen(function* () {
    const end = Date.now() + 60_000
    while (!check()) {
      if (Date.now() > end) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(20)
    }
  })

describe("limits across two processes on PostgreSQL (SPEC §20)", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  it.live("a group's concurrency limit holds across both; waiters are late, never lost", () =>
    Effect.gen(function* () {
      const log: Array<Line> = []
      const handler = handlerOf(log)
      const options = {
        handlers: [handler],
        workers: 4,
        pollInterval: 50,
        limits: { groups: { mail: { concurrency: 2 } } },
      }
      yield* withScheduler(Postgres.layer({ url: db.url }), options, (a) =>
        withScheduler(Postgres.layer({ url: db.url }), options, (b) =>
          Effect.gen(function* () {
            for (let k = 0; k < 12; k++) {
              yield* (k % 2 === 0 ? a : b).schedule({
                id: `m${k}`,
                handler,
                payload: { ms: 40 },
                schedule: Schedule.once(0),
                group: "mail",
              })
            }
            // An unlimited task due after them all still runs while they wait.
            yield* a.schedule({
              id: "free",
              handler,
              payload: { ms: 0 },
              schedule: Schedule.once(1),
            })
            yield* waitFor(() => log.filter((l) => l.kind === "end").length === 13, "13 ends")
            const waiting = (yield* a.tasks({ state: "scheduled" })).filter((t) => t.waiting)
            expect(waiting).toEqual([])
          }),
        ),
      )
      expect(peak(log, (id) => id !== "free")).toBe(2)
      const ran = log.filter((l) => l.kind === "start").map((l) => l.id)
      expect(new Set(ran).size).toBe(13)
      expect(ran.length).toBe(13)
    }),
  )

  it.live("a key's rate limit holds across both: no max+1 claims within per of each other", () =>
    Effect.gen(function* () {
      const log: Array<Line> = []
      const handler = handlerOf(log)
      const per = 300
      const options = {
        handlers: [handler],
        workers: 4,
        pollInterval: 50,
        limits: { keys: { rate: { max: 2, per } } },
      }
      yield* withScheduler(Postgres.layer({ url: db.url }), options, (a) =>
        withScheduler(Postgres.layer({ url: db.url }), options, (b) =>
          Effect.gen(function* () {
            for (let k = 0; k < 6; k++) {
              yield* (k % 2 === 0 ? a : b).schedule({
                id: `r${k}`,
                handler,
                payload: { ms: 0 },
                schedule: Schedule.once(0),
                key: "customer-1",
              })
            }
            yield* waitFor(() => log.filter((l) => l.kind === "end").length >= 2, "two runs")
            // The others wait on the window, and say so until when.
            const info = (yield* a.tasks({ state: "scheduled" })).find((t) => t.waiting)
            if (info !== undefined) {
              expect(info.waiting).toMatchObject({ cause: "rate-limited", scope: "key:customer-1" })
              expect(info.waiting?.until).toBeGreaterThan(info.waiting?.since ?? 0)
            }
            yield* waitFor(() => log.filter((l) => l.kind === "end").length === 6, "6 ends")
          }),
        ),
      )
      const claims = log
        .filter((l) => l.kind === "start")
        .map((l) => l.claimedAt)
        .sort((x, y) => x - y)
      expect(claims.length).toBe(6)
      // Sliding window: the claim max (2) places after any claim is at least `per` later.
      for (let k = 2; k < claims.length; k++) {
        expect((claims[k] as number) - (claims[k - 2] as number)).toBeGreaterThanOrEqual(per)
      }
    }),
  )
})
