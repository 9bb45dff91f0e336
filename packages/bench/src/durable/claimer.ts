/**
 * A claiming process for the two-process measurements:
 *   claimer.ts <database url> <mode> <owner> [workers]
 * - `durable`: a DurableScheduler with a no-op handler ("noop"), `workers` runs in flight;
 *   prints `late <ms>` for every run when LATENESS=1;
 * - `durable-limit`: the same under a fleet-wide handler limit that never binds (SPEC §20: every
 *   claim decides by `Rules.admit` under the scope's advisory lock), the cost of a limit;
 * - `durable-limit-32`: the same under a fleet-wide limit of 32 runs of the handler at once;
 * - `raw-1`, `raw-50`: the same table claimed by hand with `FOR UPDATE SKIP LOCKED`, 1 or 50 rows
 *   per claim, each row then completed in its own transaction (update + ledger row), until
 *   nothing is left — the baseline of what the table itself allows.
 * Prints "ready" when it starts claiming.
 */
import { PgClient } from "@effect/sql-pg"
import { DurableScheduler, Handler, Postgres } from "@tickwork/durable"
import { Effect, Layer, Redacted, Schema } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"

const [url, mode, owner, workersArg] = process.argv.slice(2) as [string, string, string, string?]
const workers = Number(workersArg ?? 64)
const lateness = process.env.LATENESS === "1"

const noop = Handler.make("noop", Schema.Struct({ n: Schema.Number }), (_, run) =>
  lateness
    ? Effect.sync(() => console.log(`late ${run.startedAt - run.scheduledFor}`))
    : Effect.void,
)

/** The fleet-wide limit of the `durable-limit…` modes, on the handler's runs at once. */
const limit = mode === "durable-limit" ? 1_000_000 : mode === "durable-limit-32" ? 32 : undefined

const durable = Effect.gen(function* () {
  console.log("ready")
  yield* Effect.never
}).pipe(
  Effect.provide(
    DurableScheduler.layer({
      handlers: [noop],
      owner,
      workers,
      pollInterval: 200,
      ...(limit === undefined ? {} : { limits: { handlers: { noop: { concurrency: limit } } } }),
    }).pipe(Layer.provide(Postgres.layer({ url, maxConnections: 8 }))),
  ),
)

const raw = (batch: number) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    console.log("ready")
    let idle = 0
    for (;;) {
      const now = Date.now()
      const rows = yield* sql<{ id: string; slot: string; fence: string }>`
        WITH due AS (SELECT id FROM tickwork_tasks
          WHERE state IN ('scheduled', 'running') AND due_at <= ${now}
          ORDER BY due_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
        UPDATE tickwork_tasks t SET state = 'running', lease_owner = ${owner},
          due_at = ${now + 30_000}, fence = t.fence + 1, deliveries = t.deliveries + 1
        FROM due WHERE t.id = due.id
        RETURNING t.id, t.slot::text AS slot, t.fence::text AS fence`
      if (rows.length === 0) {
        if (++idle > 2_000) return
        yield* Effect.sleep(5)
        continue
      }
      idle = 0
      for (const r of rows) {
        const at = Date.now()
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`UPDATE tickwork_tasks SET state = 'done', lease_owner = NULL, deliveries = 0,
              finished_at = ${at}, updated_at = ${at}, run_number = run_number + 1
              WHERE id = ${r.id} AND fence = ${r.fence}::bigint AND state = 'running'`
            yield* sql`INSERT INTO tickwork_runs (task_id, generation, slot, attempt, run_at,
              started_at, finished_at, outcome, error, fence, owner, delivery, state, next_run_at)
              VALUES (${r.id}, 1, ${r.slot}::bigint, 1, ${r.slot}::bigint, ${at}, ${at},
              'succeeded', NULL, ${r.fence}::bigint, ${owner}, 1, 'done', NULL)
              ON CONFLICT DO NOTHING`
          }),
        )
      }
    }
  }).pipe(
    Effect.provide(
      Layer.effect(
        PgClient.PgClient,
        PgClient.make({ url: Redacted.make(url), maxConnections: 2 }),
      ).pipe(Layer.provide(Reactivity.layer)),
    ),
  )

await Effect.runPromise<void, unknown>(
  mode.startsWith("durable") ? durable : raw(mode === "raw-50" ? 50 : 1),
)
