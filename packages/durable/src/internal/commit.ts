/**
 * @internal
 * The commit of finished runs: row updates applied under their claim's fence (a few statements
 * per batch: one UPDATE per chunk, then multi-row INSERTs of ledger rows and events). A change
 * whose fence no longer matches is recorded as `fenced-out`; one whose task was cancelled while
 * it ran keeps its ledger row; one applied by an earlier attempt whose answer was lost is
 * recognised by its ledger row. A row that changed while it ran (a pause asked for, an update)
 * or that has a circuit breaker is decided again on the row as it is in the transaction, and its
 * breaker counts the slot in that same transaction (SPEC §7: a fleet shares the breaker).
 */
import { Array as Arr, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { StoreError } from "../Errors.ts"
import * as Breakers from "./breakers.ts"
import { decodeRow, eventRecords, num, type Raw, runRecord } from "./codec.ts"
import * as Failure from "./failure.ts"
import type {
  Change,
  ChangeResult,
  CommitContext,
  Committed,
  Decided,
  EventEntry,
} from "./model.ts"
import * as PgBatch from "./pgBatch.ts"
import * as Settle from "./settle.ts"
import * as Write from "./write.ts"

/** Rows per multi-row INSERT: 24 columns × 400 stays under both engines' parameter limits. */
const CHUNK = 400

/** What a commit needs besides the changes (see `CommitContext`). */
export type Context = CommitContext

/** Applies `changes` on `sql` (inside a transaction the caller opens). */
export const commitAll = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  requested: ReadonlyArray<Change>,
  context: Context,
) => {
  /**
   * Applies a chunk of row updates in one statement; returns the `id:fence` keys applied. On
   * PostgreSQL a statement of one text whatever the chunk's size (see `pgBatch.ts`).
   */
  const updateChunk = (chunk: ReadonlyArray<Change>) =>
    Effect.map(
      dialect === "pg"
        ? PgBatch.updateRows(sql, chunk)
        : sql<Raw>`
        WITH v (id, fence, state, slot, run_at, due_at, attempt, run_number,
                consecutive_failures, deliveries, lease_owner, finished_at, last_error, seq,
                updated_at, paused_reason, resume_from, kept_cleared) AS (
          VALUES ${sql.csv(
            chunk.map((c) => {
              const u = c.update
              return sql`(${c.id}, ${c.fence}, ${u.state}, ${u.slot}, ${u.runAt}, ${u.claimableAt},
                ${u.attempt}, ${u.runNumber}, ${u.consecutiveFailures}, ${u.deliveries},
                ${u.leaseOwner}, ${u.finishedAt}, ${u.lastError}, ${u.seq}, ${u.updatedAt},
                ${u.pausedReason ?? null}, ${u.resumeFrom ?? -1}, ${u.kept === null ? 1 : 0})`
            }),
          )})
        UPDATE tickwork_tasks SET state = v.state, slot = CAST(v.slot AS BIGINT),
          run_at = CAST(v.run_at AS BIGINT), due_at = CAST(v.due_at AS BIGINT),
          attempt = CAST(v.attempt AS INTEGER), run_number = CAST(v.run_number AS INTEGER),
          consecutive_failures = CAST(v.consecutive_failures AS INTEGER),
          deliveries = CAST(v.deliveries AS INTEGER), lease_owner = v.lease_owner,
          finished_at = CAST(v.finished_at AS BIGINT), last_error = v.last_error,
          seq = CAST(v.seq AS BIGINT), updated_at = CAST(v.updated_at AS BIGINT),
          paused_reason = v.paused_reason, resume_from = CAST(v.resume_from AS BIGINT),
          -- A run's change only ever clears the run a trigger set aside (its manual run ended).
          kept = CASE WHEN CAST(v.kept_cleared AS INTEGER) = 1 THEN NULL ELSE tickwork_tasks.kept END
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

  /**
   * The changes to decide again on the row as it is now (SPEC §5, §7, §15): a pause was asked
   * for while it ran, it was updated (its revision moved), or it has a circuit breaker (whose
   * stored state the decision reads and the slot then moves). The rest apply as decided.
   */
  const needing = (changes: ReadonlyArray<Change>) =>
    Effect.gen(function* () {
      const asking = changes.filter((c) => c.again !== undefined || c.redecide !== undefined)
      const need = new Set<string>()
      const breakers = new Set<string>()
      for (const chunk of Arr.chunksOf(asking, 200)) {
        // Rows never updated, with no breaker and no pause asked for are not even returned.
        const ids = chunk.map((c) => c.id)
        const rows =
          dialect === "pg"
            ? yield* PgBatch.changedRows(sql, ids)
            : yield* sql<Raw>`SELECT id, fence, paused_reason, breaker, revision
                FROM tickwork_tasks WHERE state = 'running' AND id IN ${sql.in(ids)}
                  AND (paused_reason IS NOT NULL OR breaker IS NOT NULL OR revision <> 0)`
        const byKey = new Map(rows.map((r) => [`${String(r.id)}:${num(r.fence)}`, r]))
        for (const c of chunk) {
          const r = byKey.get(`${c.id}:${c.fence}`)
          if (r === undefined) continue
          if (
            r.paused_reason !== null ||
            r.breaker !== null ||
            num(r.revision) !== (c.revision ?? 0)
          )
            need.add(`${c.id}:${c.fence}`)
          if (r.breaker !== null) breakers.add(String(r.breaker))
        }
      }
      return { need, breakers: [...breakers].sort() }
    })

  /**
   * Decides `c` again on its row as it is in this transaction and writes it at once (a breaker
   * moved by an earlier change of this batch may have asked it to pause); then its breaker counts
   * the slot. `undefined` when the row is no longer running under the change's fence.
   */
  const redecide = (c: Change, tx: Breakers.Tx) =>
    Effect.gen(function* () {
      const rows =
        tx.dialect === "pg"
          ? yield* sql<Raw>`SELECT * FROM tickwork_tasks
              WHERE id = ${c.id} AND fence = ${c.fence} AND state = 'running' FOR UPDATE`
          : yield* sql<Raw>`SELECT * FROM tickwork_tasks
              WHERE id = ${c.id} AND fence = ${c.fence} AND state = 'running'`
      if (rows[0] === undefined) return undefined
      const fresh = decodeRow(rows[0])
      const breaker = fresh.breaker === null ? undefined : yield* Breakers.load(tx, fresh.breaker)
      const breakerOpens =
        breaker === undefined ? undefined : () => Breakers.opensOnFailure(breaker, fresh)
      const decided =
        c.again !== undefined
          ? Settle.decide(
              fresh,
              c.again,
              Settle.replaying(c.again.draws, context.random),
              breakerOpens,
            )
          : (c.redecide as NonNullable<Change["redecide"]>)(fresh, breakerOpens)
      if (!(yield* Write.row(sql, fresh, decided.update))) return undefined
      const at = decided.update.updatedAt
      const moved =
        breaker === undefined
          ? []
          : decided.slot?.ended === true
            ? yield* Breakers.afterSlot(tx, breaker, fresh, decided.slot.failed, at)
            : decided.leaves === true
              ? yield* Breakers.leave(tx, breaker.key, fresh, at)
              : []
      return { decided, held: fresh.pausedReason !== null, moved }
    })

  return Effect.gen(function* () {
    const tx: Breakers.Tx = { sql, dialect, seq: context.seq, owner: context.owner }
    const { need, breakers } = yield* needing(requested)
    // Breakers first, in key order, then task rows: the lock order of every step that moves a
    // breaker, so two processes completing runs of one breaker wait for each other, never deadlock.
    if (dialect === "pg" && breakers.length > 0) {
      yield* sql`SELECT key FROM tickwork_breakers WHERE key IN ${sql.in(breakers)}
        ORDER BY key FOR UPDATE`
    }
    const decided: Array<Decided> = requested.map((c) => ({
      update: c.update,
      run: c.run,
      events: c.events,
    }))
    const held = new Set<number>()
    const moved: Array<EventEntry> = []
    const applied = new Set<string>()
    // A few statements per batch for the plain changes: one UPDATE per chunk, then INSERTs.
    const plain = requested.filter((c) => !need.has(`${c.id}:${c.fence}`))
    for (const chunk of Arr.chunksOf(plain, 200)) {
      for (const key of yield* updateChunk(chunk)) applied.add(key)
    }
    // A schedule change that waited for this slot took effect (SPEC §15): the new schedule is
    // stored and the waiting change cleared, as `Write.row` does on the decided-again path, so
    // that it takes effect once. Rare: one statement each.
    for (const c of plain) {
      if (c.update.schedule === undefined || !applied.has(`${c.id}:${c.fence}`)) continue
      yield* sql`UPDATE tickwork_tasks SET schedule = ${JSON.stringify(c.update.schedule)},
        restart = NULL WHERE id = ${c.id} AND fence = ${c.fence}`
    }
    for (let k = 0; k < requested.length; k++) {
      const c = requested[k] as Change
      if (!need.has(`${c.id}:${c.fence}`)) continue
      const again = yield* redecide(c, tx)
      if (again === undefined) continue
      applied.add(`${c.id}:${c.fence}`)
      decided[k] = again.decided
      if (again.held) held.add(k)
      moved.push(...again.moved)
    }
    const results: Array<ChangeResult> = []
    const runs: Array<ReturnType<typeof runRecord>> = []
    const events: Array<EventEntry> = []
    for (let k = 0; k < requested.length; k++) {
      const c = requested[k] as Change
      const d = decided[k] as Decided
      const why = applied.has(`${c.id}:${c.fence}`) ? "applied" : yield* whyNot(c)
      if (why === "committed-before") {
        // Written by an earlier attempt: nothing more to write.
        results.push("applied")
        continue
      }
      const result: ChangeResult = why
      if (result === "cancelled") {
        // The row stays cancelled, but its run happened: it counts among the task's runs, as
        // the kernel counts it from the run's start (SPEC §8.3: a cancel lets the run finish).
        yield* sql`UPDATE tickwork_tasks SET run_number = ${c.update.runNumber}
          WHERE id = ${c.id} AND fence = ${c.fence} AND state = 'cancelled'`
      }
      results.push(result === "applied" && held.has(k) ? "held" : result)
      if (result === "fenced-out") {
        events.push(c.fencedOut)
        continue
      }
      if (d.run !== undefined) {
        runs.push(
          runRecord(
            result === "cancelled" ? { ...d.run, state: "cancelled", nextRunAt: null } : d.run,
          ),
        )
      }
      if (result === "applied") for (const e of d.events) events.push(e)
    }
    for (const e of moved) events.push(e)
    for (const chunk of Arr.chunksOf(runs, CHUNK)) {
      if (dialect === "pg") yield* PgBatch.insertRuns(sql, chunk)
      else yield* sql`INSERT INTO tickwork_runs ${sql.insert(chunk)} ON CONFLICT DO NOTHING`
    }
    for (const chunk of Arr.chunksOf(events, CHUNK)) {
      if (dialect === "pg") yield* PgBatch.insertEvents(sql, eventRecords(chunk))
      else yield* sql`INSERT INTO tickwork_events ${sql.insert(eventRecords(chunk))}`
    }
    const out: Committed = { results, decided, events: moved }
    return out
  })
}

/**
 * Applies `changes` in one transaction of its own, each under its fence (see `commitAll`);
 * `context` gives the tasks a breaker lets go their push order.
 */
export const commit = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  changes: ReadonlyArray<Change>,
  context: CommitContext = { seq: () => 0, owner: null },
): Effect.Effect<Committed, StoreError> =>
  changes.length === 0
    ? Effect.succeed({ results: [], decided: [], events: [] })
    : sql
        .withTransaction(commitAll(sql, dialect, changes, context))
        .pipe(Effect.mapError(Failure.failing("complete runs")))
