/**
 * PostgreSQL restarts under three workers: `pg_ctl restart -m fast` terminates every session
 * (queries, transactions, LISTEN) at once, again and again. Every worker must resume by itself
 * each time, and no slot may be lost. Runs on a private cluster (test/cluster.ts): the run's
 * shared server cannot be restarted under the other test files.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { type DurableScheduler, Handler, Postgres } from "../src/index.ts"
import { type Cluster, startCluster } from "./cluster.ts"
import { withScheduler } from "./helpers.ts"

let cluster: Cluster
beforeAll(async () => {
  cluster = await startCluster()
}, 60_000)
afterAll(() => {
  cluster?.remove()
})

const RESTARTS = 10
const TASKS = 12
const PERIOD = 200

/** Polls `check` every 100 ms until it holds; fails after `ms` (a generous bound, never asserted). */
const until = (what: string, check: Effect.Effect<boolean>, ms: number) =>
  Effect.gen(function* () {
    const end = Date.now() + ms
    while (!(yield* check)) {
      if (Date.now() > end) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(100)
    }
  })

/** A worker's stats, or undefined while the store cannot answer. */
const statsOf = (d: DurableScheduler.DurableSchedulerShape) =>
  Effect.option(d.stats).pipe(Effect.map((o) => (o._tag === "Some" ? o.value : undefined)))

describe("PostgreSQL restarts", () => {
  it.live(
    `${RESTARTS} restarts (pg_ctl restart -m fast) under 3 workers: every worker resumes by itself, no slot is lost`,
    () =>
      Effect.gen(function* () {
        const ran: Array<string> = []
        const handler = Handler.make("tick", Schema.Struct({ n: Schema.Number }), (_, run) =>
          Effect.andThen(
            Effect.sleep(50),
            Effect.sync(() => {
              ran.push(`${run.id}@${run.slot}`)
            }),
          ),
        )
        const store = () => Postgres.layer({ url: cluster.url, statementTimeout: "5 seconds" })
        const options = (owner: string) => ({
          handlers: [handler],
          owner,
          workers: 4,
          lease: 5_000,
          pollInterval: 100,
        })
        yield* withScheduler(store(), options("A"), (a) =>
          withScheduler(store(), options("B"), (b) =>
            withScheduler(store(), options("C"), (c) =>
              Effect.gen(function* () {
                const workers = [a, b, c]
                const ids = Array.from({ length: TASKS }, (_, k) => `t${k}`)
                yield* a.scheduleAll(
                  ids.map((id, k) => ({
                    id,
                    handler,
                    payload: { n: k },
                    schedule: Schedule.fixedRate(PERIOD, { delay: k }),
                  })),
                )
                const completed = (d: DurableScheduler.DurableSchedulerShape) =>
                  Effect.map(statsOf(d), (s) => s?.completed ?? -1)
                yield* until(
                  "every worker to complete runs",
                  Effect.map(Effect.forEach(workers, completed), (n) => n.every((x) => x > 0)),
                  60_000,
                )
                for (let i = 1; i <= RESTARTS; i++) {
                  const before = yield* Effect.forEach(workers, completed)
                  cluster.restart()
                  // Each worker commits new runs after the restart, by itself.
                  yield* until(
                    `every worker to resume after restart ${i}`,
                    Effect.map(Effect.forEach(workers, completed), (after) =>
                      after.every((n, k) => n > (before[k] as number)),
                    ),
                    90_000,
                  )
                }
                const restartedAt = Date.now()
                // Every task goes on past the last restart: none is left behind.
                yield* until(
                  "every task to run after the last restart",
                  Effect.map(
                    Effect.forEach(ids, (id) => Effect.orDie(a.info(id))),
                    (infos) => infos.every((o) => o._tag === "Some" && o.value.slot > restartedAt),
                  ),
                  90_000,
                )
                for (const id of ids) yield* Effect.orDie(a.cancel(id))
                yield* until(
                  "runs in flight to end",
                  Effect.map(Effect.forEach(workers, statsOf), (s) =>
                    s.every((x) => x !== undefined && x.inFlight === 0),
                  ),
                  60_000,
                )
                // No slot lost: each task's committed runs cover its grid without a gap.
                for (const id of ids) {
                  const ledger = yield* Effect.orDie(a.ledger(id))
                  const slots = ledger
                    .filter((o) => o.kind === "ran")
                    .map((o) => o.slot)
                    .sort((x, y) => x - y)
                  const first = slots[0] as number
                  expect(slots.length).toBeGreaterThan(RESTARTS)
                  expect(slots).toEqual(slots.map((_, k) => first + k * PERIOD))
                  // Every committed run's handler ran.
                  for (const slot of slots) expect(ran).toContain(`${id}@${slot}`)
                }
                const stats = yield* Effect.forEach(workers, (d) => Effect.orDie(d.stats))
                for (const s of stats) expect(s.uncommitted).toBe(0)
                console.log(
                  `pg restarts: ${RESTARTS} restarts; completed by A/B/C ${stats.map((s) => s.completed).join("/")}; ` +
                    `${ran.length - new Set(ran).size} run(s) repeated after a restart`,
                )
              }),
            ),
          ),
        )
      }),
    600_000,
  )
})
