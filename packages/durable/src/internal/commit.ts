/**
 * @internal
 * The commit of finished runs: row updates applied under their claim's fence (a few statements
 * per batch: one UPDATE per chunk, then multi-row INSERTs of ledger rows and events). A change
 * whose fence no longer matches is recorded as `fenced-out`; one whose task was cancelled while
 * it ran keeps its ledger row; one applied by an earlier attempt whose answer was lost is
 * recognised by its ledger row. A pause asked for while a row ran takes the change's decision
 * made with that request.
 */
import type { Task } from "@tickwork/core"
import { Array as Arr, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { Change, ChangeResult } from "../TaskStore.ts"
import { eventRecord, num, type Raw, runRecord } from "./codec.ts"

/** Rows per multi-row INSERT: 24 columns × 400 stays under both engines' parameter limits. */
const CHUNK = 400

/** Applies `changes` on `sql` (inside a transaction the caller opens). */
export const commitAll = (sql: SqlClient, requested: ReadonlyArray<Change>) => {
  /** Applies a chunk of row updates in one statement; returns the `id:fence` keys applied. */
  const updateChunk = (chunk: ReadonlyArray<Change>) =>
    Effect.map(
      sql<Raw>`
        WITH v (id, fence, state, slot, run_at, due_at, attempt, run_number,
                consecutive_failures, deliveries, lease_owner, finished_at, last_error, seq,
                updated_at, paused_reason, resume_from) AS (
          VALUES ${sql.csv(
            chunk.map((c) => {
              const u = c.update
              return sql`(${c.id}, ${c.fence}, ${u.state}, ${u.slot}, ${u.runAt}, ${u.dueAt},
                ${u.attempt}, ${u.runNumber}, ${u.consecutiveFailures}, ${u.deliveries},
                ${u.leaseOwner}, ${u.finishedAt}, ${u.lastError}, ${u.seq}, ${u.updatedAt},
                ${u.pausedReason ?? null}, ${u.resumeFrom ?? -1})`
            }),
          )})
        UPDATE tickwork_tasks SET state = v.state, slot = CAST(v.slot AS BIGINT),
          run_at = CAST(v.run_at AS BIGINT), due_at = CAST(v.due_at AS BIGINT),
          attempt = CAST(v.attempt AS INTEGER), run_number = CAST(v.run_number AS INTEGER),
          consecutive_failures = CAST(v.consecutive_failures AS INTEGER),
          deliveries = CAST(v.deliveries AS INTEGER), lease_owner = v.lease_owner,
          finished_at = CAST(v.finished_at AS BIGINT), last_error = v.last_error,
          seq = CAST(v.seq AS BIGINT), updated_at = CAST(v.updated_at AS BIGINT),
          paused_reason = v.paused_reason, resume_from = CAST(v.resume_from AS BIGINT)
        FROM v
        WHERE tickwork_tasks.id = v.id AND tickwork_tasks.fence = CAST(v.fence AS BIGINT)
          AND tickwork_tasks.state = 'running'
        RETURNING tickwork_tasks.id, tickwork_tasks.fence`,
      (rows) => new Set(rows.map((r) => `${String(r.id)}:${num(r.fence)}`)),
    )

  /**
   * Why a change did not apply: its task was cancelled while it ran, it was fenced out, or an
   * earlier attempt of this very commit did apply (its answer was lost: a timeout, a dropped
   * connection), which its ledger row under the same fence shows.
   */
  const whyNot = (c: Change) =>
    Effect.gen(function* () {
      const rows = yield* sql<Raw>`SELECT state, fence FROM tickwork_tasks WHERE id = ${c.id}`
      const row = rows[0]
      if (row !== undefined && num(row.fence) === c.fence && String(row.state) === "cancelled") {
        return "cancelled" as const
      }
      if (c.run !== undefined) {
        const done = yield* sql<Raw>`SELECT 1 AS one FROM tickwork_runs
          WHERE task_id = ${c.id} AND generation = ${c.run.generation} AND slot = ${c.run.slot}
            AND attempt = ${c.run.attempt} AND fence = ${c.fence}`
        if (done.length > 0) return "committed-before" as const
      }
      return "fenced-out" as const
    })

  // A few statements per batch, not per run: one UPDATE, then multi-row INSERTs.
  /**
   * Pauses asked for while these rows ran (SPEC §5): each such change takes its decision made
   * with the request.
   */
  const withRequests = (changes: ReadonlyArray<Change>) =>
    Effect.gen(function* () {
      const asking = changes.filter((c) => c.ifPauseRequested !== undefined)
      if (asking.length === 0) return changes
      const requests = new Map<string, Task.PauseReason>()
      for (const chunk of Arr.chunksOf(asking, 200)) {
        const rows = yield* sql<Raw>`SELECT id, fence, paused_reason FROM tickwork_tasks
          WHERE state = 'running' AND paused_reason IS NOT NULL
            AND id IN ${sql.in(chunk.map((c) => c.id))}`
        for (const r of rows) {
          requests.set(
            `${String(r.id)}:${num(r.fence)}`,
            String(r.paused_reason) as Task.PauseReason,
          )
        }
      }
      if (requests.size === 0) return changes
      return changes.map((c): Change => {
        const reason = requests.get(`${c.id}:${c.fence}`)
        if (reason === undefined || c.ifPauseRequested === undefined) return c
        held.add(c)
        return { ...c, ...c.ifPauseRequested(reason) }
      })
    })

  /** The changes that take their decision made with a pause request. */
  const held = new Set<Change>()
  return Effect.gen(function* () {
    held.clear()
    const changes = yield* withRequests(requested)
    const applied = new Set<string>()
    for (const chunk of Arr.chunksOf(changes, 200)) {
      for (const key of yield* updateChunk(chunk)) applied.add(key)
    }
    const results: Array<ChangeResult> = []
    const runs: Array<ReturnType<typeof runRecord>> = []
    const events: Array<ReturnType<typeof eventRecord>> = []
    for (let k = 0; k < changes.length; k++) {
      const c = changes[k] as Change
      const why = applied.has(`${c.id}:${c.fence}`) ? "applied" : yield* whyNot(c)
      if (why === "committed-before") {
        // Written by an earlier attempt: nothing more to write.
        results.push("applied")
        continue
      }
      const result: ChangeResult = why
      results.push(result === "applied" && held.has(requested[k] as Change) ? "held" : result)
      if (result === "fenced-out") {
        events.push(eventRecord(c.fencedOut))
        continue
      }
      if (c.run !== undefined) {
        runs.push(
          runRecord(
            result === "cancelled" ? { ...c.run, state: "cancelled", nextRunAt: null } : c.run,
          ),
        )
      }
      if (result === "applied") for (const e of c.events) events.push(eventRecord(e))
    }
    for (const chunk of Arr.chunksOf(runs, CHUNK)) {
      yield* sql`INSERT INTO tickwork_runs ${sql.insert(chunk)} ON CONFLICT DO NOTHING`
    }
    for (const chunk of Arr.chunksOf(events, CHUNK)) {
      yield* sql`INSERT INTO tickwork_events ${sql.insert(chunk)}`
    }
    return results
  })
}
