/**
 * @internal
 * The commit's multi-row statements on PostgreSQL, each with a text that does not depend on how
 * many rows it carries: the rows go as one JSON parameter (expanded by the server with
 * `json_to_recordset` / `json_populate_recordset`), the ids as one `text[]`. A multi-row
 * `VALUES` list made a new statement for every batch size and every pattern of NULLs (the client
 * keys its prepared statements by text and parameter types), so each commit paid a compile and
 * a long cache key in the worker and a parse and plan in the server; one text is prepared once
 * per connection and its plan reused. Measured in `packages/bench` part 7 (README, issue 27).
 *
 * Every condition of the statements they replace holds as before: a row is updated only under
 * its claim's fence while it is running, and a ledger row already written is left as it is.
 */
import type { SqlClient } from "effect/sql/SqlClient"
import type { Raw } from "./codec.ts"
import type { Change } from "./model.ts"

/** A lone surrogate (half of a UTF-16 pair with no other half). */
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * Free text (an error, a result, a detail) as the statements it replaces stored it: a bound
 * string is sent as UTF-8, which turns each lone surrogate into U+FFFD, while PostgreSQL refuses
 * JSON holding one (`\udXXX` unpaired) and would fail the whole commit, again at every retry.
 */
const text = (value: string | null): string | null =>
  value === null ? null : value.replace(LONE, "\uFFFD")

/** `records` with every string value made storable as by `text`. */
const texts = (records: ReadonlyArray<Record<string, unknown>>) =>
  records.map((r) => {
    const out: Record<string, unknown> = {}
    for (const key in r) {
      const v = r[key]
      out[key] = typeof v === "string" ? text(v) : v
    }
    return out
  })

/** A change's row update as one JSON object; its keys are `updateRows`' columns. */
const updateRecord = (c: Change) => {
  const u = c.update
  return {
    id: c.id,
    fence: c.fence,
    state: u.state,
    slot: u.slot,
    run_at: u.runAt,
    due_at: u.claimableAt,
    attempt: u.attempt,
    run_number: u.runNumber,
    consecutive_failures: u.consecutiveFailures,
    deliveries: u.deliveries,
    lease_owner: u.leaseOwner,
    finished_at: u.finishedAt,
    last_error: text(u.lastError),
    seq: u.seq,
    updated_at: u.updatedAt,
    paused_reason: u.pausedReason ?? null,
    resume_from: u.resumeFrom ?? -1,
    kept_cleared: u.kept === null,
  }
}

/**
 * Applies `chunk`'s row updates in one statement, each only while its row is running under the
 * change's fence; returns the `id`/`fence` of the rows updated. The `id = ANY` condition lets the
 * planner, which cannot see how many rows the JSON holds (it assumes 100), walk the primary key
 * for the chunk's rows instead of scanning the table to join them.
 */
export const updateRows = (sql: SqlClient, chunk: ReadonlyArray<Change>) =>
  sql<Raw>`
    WITH v AS (
      SELECT * FROM json_to_recordset(${JSON.stringify(chunk.map(updateRecord))}::json) AS v (
        id TEXT, fence BIGINT, state TEXT, slot BIGINT, run_at BIGINT, due_at BIGINT,
        attempt INTEGER, run_number INTEGER, consecutive_failures INTEGER, deliveries INTEGER,
        lease_owner TEXT, finished_at BIGINT, last_error TEXT, seq BIGINT, updated_at BIGINT,
        paused_reason TEXT, resume_from BIGINT, kept_cleared BOOLEAN))
    UPDATE tickwork_tasks SET state = v.state, slot = v.slot, run_at = v.run_at,
      due_at = v.due_at, attempt = v.attempt, run_number = v.run_number,
      consecutive_failures = v.consecutive_failures, deliveries = v.deliveries,
      lease_owner = v.lease_owner, finished_at = v.finished_at, last_error = v.last_error,
      seq = v.seq, updated_at = v.updated_at, paused_reason = v.paused_reason,
      resume_from = v.resume_from,
      -- A run's change only ever clears the run a trigger set aside (its manual run ended).
      kept = CASE WHEN v.kept_cleared THEN NULL ELSE tickwork_tasks.kept END
    FROM v
    WHERE tickwork_tasks.id = ANY(${chunk.map((c) => c.id)}::text[])
      AND tickwork_tasks.id = v.id AND tickwork_tasks.fence = v.fence
      AND tickwork_tasks.state = 'running'
    RETURNING tickwork_tasks.id, tickwork_tasks.fence`

/**
 * The running rows among `ids` that must be decided again in the commit (paused, with a
 * breaker, or updated while they ran); the others are not returned.
 */
export const changedRows = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  sql<Raw>`SELECT id, fence, paused_reason, breaker, revision
    FROM tickwork_tasks WHERE state = 'running' AND id = ANY(${ids}::text[])
      AND (paused_reason IS NOT NULL OR breaker IS NOT NULL OR revision <> 0)`

/** `tickwork_runs`' columns, as `runRecord` names them. */
const RUN_COLUMNS = `task_id, generation, slot, attempt, run_at, started_at, finished_at, outcome,
  error, fence, owner, delivery, state, next_run_at, result, result_error, manual`

/**
 * Inserts ledger rows (`runRecord`s); one already there (an earlier attempt of this commit whose
 * answer was lost) is kept. The JSON's values take the table's column types.
 */
export const insertRuns = (sql: SqlClient, records: ReadonlyArray<Record<string, unknown>>) =>
  sql.unsafe(
    `INSERT INTO tickwork_runs (${RUN_COLUMNS})
      SELECT ${RUN_COLUMNS} FROM json_populate_recordset(NULL::tickwork_runs, $1::json)
      ON CONFLICT DO NOTHING`,
    [JSON.stringify(texts(records))],
  )

/** `tickwork_events`' columns written by `eventRecord`; `origin` only when one is named. */
const EVENT_COLUMNS = `task_id, generation, kind, first_slot, last_slot, count, cause, at, fence,
  owner, detail, breaker`

/** Inserts event rows (`eventRecords`: all of them name `origin`, or none does). */
export const insertEvents = (sql: SqlClient, records: ReadonlyArray<Record<string, unknown>>) => {
  const columns = records.some((r) => "origin" in r) ? `${EVENT_COLUMNS}, origin` : EVENT_COLUMNS
  return sql.unsafe(
    `INSERT INTO tickwork_events (${columns})
      SELECT ${columns} FROM json_populate_recordset(NULL::tickwork_events, $1::json)`,
    [JSON.stringify(texts(records))],
  )
}
