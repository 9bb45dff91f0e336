/**
 * @internal
 * The store's insert: new tasks as rows, all or none, in chunks of multi-row upserts (an id whose
 * task is final is reused under generation + 1), with their tags and breaker memberships in the
 * same transaction, and a cross-process notice when asked for (SPEC §17).
 */
import { Errors } from "@tickwork/core"
import { Array as Arr, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { StoreError } from "../Errors.ts"
import * as Breakers from "./breakers.ts"
import { NEW_TASK_LITERALS, num, pushTaskValues, TASK_COLUMNS, taskRecord } from "./codec.ts"
import * as Direct from "./direct.ts"
import * as Failure from "./failure.ts"
import type { NewTask } from "./model.ts"
import * as Write from "./write.ts"

/** Rows per multi-row INSERT: 42 columns × 400 stays under both engines' parameter limits. */
export const CHUNK = 400

/**
 * What an insert does on a live id's row, and what it returns: an id whose task is final is
 * reused under generation + 1 (fence + 1); a live one's row is skipped (not returned).
 */
const UPSERT = `ON CONFLICT (id) DO UPDATE SET
  generation = tickwork_tasks.generation + 1,
  handler = excluded.handler, payload = excluded.payload, schedule = excluded.schedule,
  priority = excluded.priority, retry = excluded.retry,
  missed_runs = excluded.missed_runs, pause_after = excluded.pause_after,
  timeout_ms = excluded.timeout_ms, state = excluded.state, slot = excluded.slot,
  run_at = excluded.run_at, due_at = excluded.due_at, attempt = excluded.attempt,
  run_number = excluded.run_number,
  consecutive_failures = excluded.consecutive_failures,
  deliveries = excluded.deliveries, fence = tickwork_tasks.fence + 1,
  lease_owner = excluded.lease_owner, seq = excluded.seq,
  created_at = excluded.created_at,
  updated_at = excluded.updated_at, finished_at = excluded.finished_at,
  last_error = excluded.last_error, paused_reason = excluded.paused_reason,
  resume_from = excluded.resume_from, tags = excluded.tags,
  window_ms = excluded.window_ms, breaker = excluded.breaker,
  restart = excluded.restart, revision = excluded.revision, kept = excluded.kept,
  task_group = excluded.task_group, task_key = excluded.task_key,
  wait_cause = NULL, wait_scope = NULL, wait_since = NULL, wait_until = NULL,
  dedup_key = excluded.dedup_key, dedup_mode = excluded.dedup_mode,
  dedup_window_ms = excluded.dedup_window_ms
WHERE tickwork_tasks.state IN ('done', 'failed', 'cancelled')
RETURNING id, generation`

/** SQLite's upsert text per chunk length: built once each (the columns never change). */
const sqliteTexts = new Map<number, string>()

/**
 * SQLite's upsert of `chunk` from a statement text kept per chunk length, its parameters laid
 * out flat: the same statement `sql.insert` builds, without compiling it again for each call
 * (in a profile of `scheduleAll` on SQLite, compiling cost about as much as validating and
 * encoding the tasks). The columns every new task starts alike in are literals in its text
 * (`NEW_TASK_LITERALS`): the same row, 23 values bound instead of 42. The parameters go as one array, which better-sqlite3 binds positionally
 * (`SqliteClient` hands its parameters to the statement as they are): the statement compiler
 * then copies one value, not 23 per row, and the driver gets no call of 9,200 arguments.
 */
const sqliteUpsert = (sql: SqlClient, chunk: Arr.NonEmptyReadonlyArray<NewTask>) => {
  let text = sqliteTexts.get(chunk.length)
  if (text === undefined) {
    const tuple = `(${TASK_COLUMNS.map((c) => NEW_TASK_LITERALS[c] ?? "?").join(", ")})`
    text = `INSERT INTO tickwork_tasks (${TASK_COLUMNS.join(", ")}) VALUES ${Array.from(chunk, () => tuple).join(", ")} ${UPSERT}`
    sqliteTexts.set(chunk.length, text)
  }
  const params: Array<unknown> = []
  for (const t of chunk) pushTaskValues(t, params)
  return Direct.statement<{ id: string; generation: unknown }>(sql, text, [params])
}

/**
 * The generation each task of `chunk` was written under, from the upsert's returned rows (in no
 * particular order): 1 for every task when every row came back new, without a lookup by id.
 */
const generations = (
  chunk: Arr.NonEmptyReadonlyArray<NewTask>,
  rows: ReadonlyArray<{ id: string; generation: unknown }>,
): Array<number> => {
  if (rows.every((r) => num(r.generation) === 1)) return chunk.map(() => 1)
  const byId = new Map(rows.map((r) => [String(r.id), num(r.generation)]))
  return chunk.map((t) => byId.get(t.id) as number)
}

/** `tasks` in consecutive slices of at most `size` (effect's `chunksOf` copies the rest at each cut). */
const chunked = <A>(
  tasks: Arr.NonEmptyReadonlyArray<A>,
  size: number,
): Arr.NonEmptyReadonlyArray<Arr.NonEmptyReadonlyArray<A>> => {
  if (tasks.length <= size) return [tasks]
  const out: Array<Arr.NonEmptyReadonlyArray<A>> = []
  for (let k = 0; k < tasks.length; k += size) {
    out.push(tasks.slice(k, k + size) as unknown as Arr.NonEmptyReadonlyArray<A>)
  }
  return out as unknown as Arr.NonEmptyReadonlyArray<Arr.NonEmptyReadonlyArray<A>>
}

/**
 * Upserts one chunk of rows in one statement (with `notify` and a channel, `pg_notify` in that
 * statement); a live id's row is skipped, which fails the chunk with `DuplicateTaskId`.
 */
const insertChunk = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  channel: string | undefined,
  chunk: Arr.NonEmptyReadonlyArray<NewTask>,
  notify = false,
) =>
  Effect.suspend(() => {
    const upsert =
      dialect === "sqlite"
        ? sqliteUpsert(sql, chunk)
        : sql<{ id: string; generation: unknown }>`
            INSERT INTO tickwork_tasks ${sql.insert(Arr.map(chunk, taskRecord))}
            ${sql.literal(UPSERT)}`
    // NOTIFY is transactional: delivered when this statement commits, never for no row.
    const statement =
      notify && channel !== undefined
        ? sql<{ id: string; generation: unknown }>`
          WITH ins AS (${upsert})
          SELECT id, generation, (SELECT pg_notify(${channel}, '')) AS notified FROM ins`
        : upsert
    // One flatMap, not a generator: every schedule() call passes here.
    return Effect.flatMap(
      statement,
      (rows): Effect.Effect<Array<number>, Errors.DuplicateTaskId> => {
        if (rows.length === chunk.length) return Effect.succeed(generations(chunk, rows))
        const written = new Set(rows.map((r) => String(r.id)))
        const live = chunk.find((t) => !written.has(t.id)) as NewTask
        return Effect.fail(
          new Errors.DuplicateTaskId({
            field: "id",
            value: live.id,
            message: `id ${Errors.show(live.id)} belongs to a task that is still scheduled or running`,
          }),
        )
      },
    )
  })

/**
 * Inserts `tasks`, all or none (see `TaskStoreShape.insert`). `options.channel` is the channel
 * an insert notifies on in its own statement (PostgreSQL); without it, `options.signal.notify`
 * follows the insert.
 */
export const insert = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  options: {
    readonly channel: string | undefined
    readonly signal: { readonly notify: Effect.Effect<void, StoreError> } | undefined
  },
  tasks: Arr.NonEmptyReadonlyArray<NewTask>,
  insertOptions?: { readonly notify?: boolean | undefined },
): Effect.Effect<ReadonlyArray<number>, Errors.DuplicateTaskId | StoreError> => {
  const channel = dialect === "pg" ? options.channel : undefined
  // One task cannot repeat an id: schedule() skips the set.
  const seen = new Set<string>()
  if (tasks.length > 1)
    for (const t of tasks) {
      if (seen.has(t.id)) {
        return Effect.fail(
          new Errors.DuplicateTaskId({
            field: "id",
            value: t.id,
            message: `id ${Errors.show(t.id)} appears twice in one batch`,
          }),
        )
      }
      seen.add(t.id)
    }
  const chunks = chunked(tasks, CHUNK)
  // Tags and breakers are written beside the rows: then one transaction holds them all.
  const extras = tasks.some((t) => (t.tags?.length ?? 0) > 0 || t.breaker !== undefined)
  const notify = insertOptions?.notify === true && options.signal !== undefined
  // All or none: the upsert skips a live id's row and writes the others, so any batch of
  // more than one row runs in a transaction that the `DuplicateTaskId` rolls back. One row
  // and nothing beside it is one statement, atomic by itself, and saves BEGIN/COMMIT.
  const all =
    tasks.length === 1 && !extras
      ? insertChunk(sql, dialect, channel, chunks[0], notify)
      : sql.withTransaction(
          Effect.gen(function* () {
            const gs = (yield* Effect.forEach(chunks, (c) =>
              insertChunk(sql, dialect, channel, c),
            )).flat()
            if (notify && channel !== undefined) yield* sql`SELECT pg_notify(${channel}, '')`
            if (!extras) return gs
            // A reused id's old tags go; a task's own breaker starts closed.
            yield* Write.tags(
              sql,
              tasks.map((t, k) => ({
                id: t.id,
                generation: gs[k] as number,
                tags: t.tags ?? [],
              })),
            )
            const tx: Breakers.Tx = { sql, dialect, seq: () => 0, owner: null }
            const now = tasks[0].now
            const own = tasks.flatMap((t) =>
              t.breaker !== undefined && t.breaker.key === Breakers.ownKey(t.id)
                ? [{ ...t.breaker, shared: false }]
                : [],
            )
            yield* Breakers.define(tx, own, now)
            for (let k = 0; k < tasks.length; k++) {
              const t = tasks[k] as NewTask
              if (t.breaker === undefined) continue
              const joined = yield* Breakers.join(
                tx,
                t.breaker.key,
                {
                  id: t.id,
                  generation: gs[k] as number,
                  slot: t.slot,
                  fence: 0,
                  state: "scheduled",
                },
                now,
              )
              yield* Write.events(sql, joined)
            }
            return gs
          }),
        )
  const inserted = Effect.mapError(all, (e) =>
    e._tag === "DuplicateTaskId" ? e : Failure.storeError("insert", e),
  )
  // A store that cannot notify in the insert's statement notifies after it.
  return notify && channel === undefined && options.signal !== undefined
    ? Effect.tap(inserted, () => Effect.ignore(options.signal?.notify ?? Effect.void))
    : inserted
}
