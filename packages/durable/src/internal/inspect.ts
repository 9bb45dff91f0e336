/**
 * @internal
 * Read-only queries over a store's tables for operators (`StoreAdmin`): tasks by filter, lease
 * owners, the recent ledger of the whole store, lateness. Nothing here writes; the controls go
 * through the scheduler's own modules (`controls`, `TaskStore.cancel`).
 */
import { Task } from "@tickwork/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { decodeEvent, decodeRow, decodeRun, num, type Raw, strOrNull } from "./codec.ts"
import type { EventEntry, RunEntry, TaskRow } from "./model.ts"

/** Whether the store's tables exist (a scheduler created and migrated them). */
export const isStore = (sql: SqlClient): Effect.Effect<boolean, SqlError> =>
  sql
    .onDialectOrElse({
      pg: () => sql<Raw>`SELECT to_regclass('tickwork_tasks') IS NOT NULL AS present`,
      orElse: () =>
        sql<Raw>`SELECT COUNT(*) AS present FROM sqlite_master
          WHERE type = 'table' AND name = 'tickwork_tasks'`,
    })
    .pipe(Effect.map((rows) => rows[0] !== undefined && Boolean(num(rows[0].present))))

/**
 * Whether `tickwork_tasks` has a `tags` column (added by a later migration). Tag filters use it
 * when it is there.
 */
export const hasTags = (sql: SqlClient): Effect.Effect<boolean, SqlError> =>
  sql
    .onDialectOrElse({
      pg: () => sql<Raw>`SELECT COUNT(*) AS n FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'tickwork_tasks'
          AND column_name = 'tags'`,
      orElse: () =>
        sql<Raw>`SELECT COUNT(*) AS n FROM pragma_table_info('tickwork_tasks') WHERE name = 'tags'`,
    })
    .pipe(Effect.map((rows) => rows[0] !== undefined && num(rows[0].n) > 0))

/**
 * Whether the store's ledger events can say who asked for a control (migration 0005 added
 * `tickwork_events.origin`; an admin opens a store without migrating it).
 */
export const hasOrigin = (sql: SqlClient): Effect.Effect<boolean, SqlError> =>
  sql
    .onDialectOrElse({
      pg: () => sql<Raw>`SELECT COUNT(*) AS n FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'tickwork_events'
          AND column_name = 'origin'`,
      orElse: () =>
        sql<Raw>`SELECT COUNT(*) AS n FROM pragma_table_info('tickwork_events') WHERE name = 'origin'`,
    })
    .pipe(Effect.map((rows) => rows[0] !== undefined && num(rows[0].n) > 0))

/**
 * The tags of a stored `tags` value: a JSON array of strings, or comma-separated text; `[]` for
 * none.
 */
export const readTags = (value: unknown): ReadonlyArray<string> => {
  if (value === null || value === undefined) return []
  if (Array.isArray(value)) return value.map(String)
  const text = String(value).trim()
  if (text === "") return []
  if (text.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(text)
      if (Array.isArray(parsed)) return parsed.map(String)
    } catch {
      // Not JSON: read it as a list.
    }
  }
  return text
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "")
}

/** What to list. */
export interface Filter {
  readonly state?: Task.TaskState | undefined
  readonly handler?: string | undefined
  /** Only when the store has a `tags` column. */
  readonly tag?: string | undefined
  readonly limit: number
}

/** A listed row with its tags. */
export interface Listed {
  readonly row: TaskRow
  readonly tags: ReadonlyArray<string>
}

/**
 * Tasks matching `filter`: live ones in due order, then final ones, most recent first; at most
 * `limit`, with the number that matched.
 */
export const list = (
  sql: SqlClient,
  filter: Filter,
  tags: boolean,
): Effect.Effect<{ readonly rows: ReadonlyArray<Listed>; readonly total: number }, SqlError> =>
  Effect.gen(function* () {
    const clauses = [
      ...(filter.state === undefined ? [] : [sql`state = ${filter.state}`]),
      ...(filter.handler === undefined ? [] : [sql`handler = ${filter.handler}`]),
      // A coarse pre-filter; the exact match is made on the parsed tags below.
      ...(filter.tag === undefined || !tags
        ? []
        : [sql`CAST(tags AS TEXT) LIKE ${`%${filter.tag}%`}`]),
    ]
    const where = clauses.length === 0 ? sql.literal("1 = 1") : sql.and(clauses)
    const order =
      sql.literal(`CASE WHEN state IN ('scheduled', 'running', 'paused') THEN 0 ELSE 1 END,
      CASE WHEN state IN ('scheduled', 'running', 'paused') THEN run_at ELSE -COALESCE(finished_at, updated_at) END,
      id`)
    const tagged = filter.tag !== undefined && tags
    if (!tagged) {
      const rows = yield* sql<Raw>`SELECT * FROM tickwork_tasks WHERE ${where}
        ORDER BY ${order} LIMIT ${filter.limit}`
      const counted = yield* sql<Raw>`SELECT COUNT(*) AS n FROM tickwork_tasks WHERE ${where}`
      return {
        rows: rows.map((r) => ({ row: decodeRow(r), tags: tags ? readTags(r.tags) : [] })),
        total: num(counted[0]?.n ?? 0),
      }
    }
    const rows = yield* sql<Raw>`SELECT * FROM tickwork_tasks WHERE ${where} ORDER BY ${order}`
    const matching = rows
      .map((r) => ({ raw: r, tags: readTags(r.tags) }))
      .filter((r) => r.tags.includes(filter.tag as string))
    return {
      rows: matching.slice(0, filter.limit).map((r) => ({ row: decodeRow(r.raw), tags: r.tags })),
      total: matching.length,
    }
  })

/** The tags of one task (`[]` without a `tags` column). */
export const tagsOf = (
  sql: SqlClient,
  id: string,
  tags: boolean,
): Effect.Effect<ReadonlyArray<string>, SqlError> =>
  tags
    ? Effect.map(sql<Raw>`SELECT tags FROM tickwork_tasks WHERE id = ${id}`, (rows) =>
        readTags(rows[0]?.tags),
      )
    : Effect.succeed([])

/** A process seen in the store: the runs it holds now and the runs it completed lately. */
export interface Owner {
  readonly owner: string
  /** Rows `running` under its lease now. */
  readonly running: number
  /** When its latest lease runs out (epoch ms), or `null` when it holds none. */
  readonly leaseExpiresAt: number | null
  /** Runs it completed since `since`. */
  readonly completed: number
  /** When its last run ended, or `null`. */
  readonly lastFinishedAt: number | null
}

/** Lease owners now, and owners of runs that ended since `since`. */
export const owners = (
  sql: SqlClient,
  since: number,
): Effect.Effect<ReadonlyArray<Owner>, SqlError> =>
  Effect.gen(function* () {
    const leases = yield* sql<Raw>`SELECT lease_owner, COUNT(*) AS n, MAX(due_at) AS until
      FROM tickwork_tasks WHERE state = 'running' AND lease_owner IS NOT NULL
      GROUP BY lease_owner`
    const runs = yield* sql<Raw>`SELECT owner, COUNT(*) AS n, MAX(finished_at) AS last
      FROM tickwork_runs WHERE finished_at >= ${since} GROUP BY owner`
    const byOwner = new Map<string, Owner>()
    for (const r of leases) {
      const owner = String(r.lease_owner)
      byOwner.set(owner, {
        owner,
        running: num(r.n),
        leaseExpiresAt: num(r.until),
        completed: 0,
        lastFinishedAt: null,
      })
    }
    for (const r of runs) {
      const owner = String(r.owner)
      const known = byOwner.get(owner)
      byOwner.set(owner, {
        owner,
        running: known?.running ?? 0,
        leaseExpiresAt: known?.leaseExpiresAt ?? null,
        completed: num(r.n),
        lastFinishedAt: num(r.last),
      })
    }
    return [...byOwner.values()].sort((a, b) => a.owner.localeCompare(b.owner))
  })

/** The latest `limit` runs and events of the whole store. */
export const recent = (
  sql: SqlClient,
  limit: number,
): Effect.Effect<
  { readonly runs: ReadonlyArray<RunEntry>; readonly events: ReadonlyArray<EventEntry> },
  SqlError
> =>
  Effect.gen(function* () {
    const runs = yield* sql<Raw>`SELECT * FROM tickwork_runs
      ORDER BY finished_at DESC, fence DESC LIMIT ${limit}`
    const events = yield* sql<Raw>`SELECT * FROM tickwork_events ORDER BY id DESC LIMIT ${limit}`
    return { runs: runs.map(decodeRun), events: events.map(decodeEvent) }
  })

/**
 * The lateness (core's `Task.countedLateness`, SPEC §6.8) of the latest `limit` runs, ms, in no
 * particular order: counted from acceptance for a run of the task's current generation whose
 * due time lies before it was accepted. A row keeps only its current generation's acceptance,
 * so an earlier generation's runs count from their due time. Manual runs among them count
 * none (SPEC §19.1) and are left out. `r.*`: a store before migration 0008 has no `manual`
 * column, and its runs read as not manual.
 */
export const lateness = (
  sql: SqlClient,
  limit: number,
): Effect.Effect<ReadonlyArray<number>, SqlError> =>
  Effect.map(
    sql<Raw>`SELECT r.*, t.created_at AS accepted_at FROM tickwork_runs r
      LEFT JOIN tickwork_tasks t ON t.id = r.task_id AND t.generation = r.generation
      ORDER BY r.finished_at DESC LIMIT ${limit}`,
    (rows) =>
      rows.flatMap((r) => {
        const late = Task.countedLateness(
          {
            scheduledFor: num(r.run_at),
            startedAt: num(r.started_at),
            manual: decodeRun(r).manual,
          },
          r.accepted_at === null || r.accepted_at === undefined
            ? Number.NEGATIVE_INFINITY
            : num(r.accepted_at),
        )
        return late === undefined ? [] : [late]
      }),
  )

/** Scheduled rows already due at `now`, and the earliest one's due time. */
export const overdue = (
  sql: SqlClient,
  now: number,
): Effect.Effect<{ readonly count: number; readonly since: number | null }, SqlError> =>
  Effect.map(
    sql<Raw>`SELECT COUNT(*) AS n, MIN(due_at) AS since FROM tickwork_tasks
      WHERE state = 'scheduled' AND due_at <= ${now}`,
    (rows) => ({
      count: num(rows[0]?.n ?? 0),
      since:
        rows[0] === undefined
          ? null
          : strOrNull(rows[0].since) === null
            ? null
            : num(rows[0].since),
    }),
  )

/**
 * When the latest failed run of task `id`'s `generation` ended (SPEC §6.9), epoch ms, and
 * whether a run of it succeeded after; `undefined` when its ledger holds no failed run (none
 * failed, or retention pruned it).
 */
export const lastFailureAt = (
  sql: SqlClient,
  id: string,
  generation: number,
): Effect.Effect<{ readonly at: number; readonly succeededSince: boolean } | undefined, SqlError> =>
  Effect.gen(function* () {
    const failed = yield* sql<Raw>`SELECT MAX(finished_at) AS at FROM tickwork_runs
      WHERE task_id = ${id} AND generation = ${generation} AND outcome <> 'succeeded'`
    const at = failed[0]?.at
    if (at === null || at === undefined) return undefined
    const since = yield* sql<Raw>`SELECT 1 AS one FROM tickwork_runs
      WHERE task_id = ${id} AND generation = ${generation} AND outcome = 'succeeded'
      AND finished_at >= ${num(at)} LIMIT 1`
    return { at: num(at), succeededSince: since.length > 0 }
  })

/**
 * The kept result of the latest run of task `id`'s `generation` (SPEC §19.3): its JSON text or
 * why none was kept; `undefined` when that run kept neither (or there is none). `SELECT *`: a
 * store not yet at migration 0006 has no result columns, and reads as keeping none.
 */
export const lastResult = (
  sql: SqlClient,
  id: string,
  generation: number,
): Effect.Effect<
  | { readonly finishedAt: number; readonly json: string | null; readonly error: string | null }
  | undefined,
  SqlError
> =>
  Effect.map(
    sql<Raw>`SELECT * FROM tickwork_runs WHERE task_id = ${id} AND generation = ${generation}
      ORDER BY finished_at DESC, fence DESC LIMIT 1`,
    (rows) => {
      const run = rows[0] === undefined ? undefined : decodeRun(rows[0])
      if (run === undefined || (run.result == null && run.resultError == null)) return undefined
      return {
        finishedAt: run.finishedAt,
        json: run.result ?? null,
        error: run.resultError ?? null,
      }
    },
  )
