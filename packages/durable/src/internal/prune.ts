/**
 * @internal
 * The store's prune: the ledger (runs, events) and the final tasks that ended before a time are
 * deleted in one transaction, with the own breakers and tags nothing live refers to any more.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { StoreError } from "../Errors.ts"
import * as Failure from "./failure.ts"

/**
 * Cut-offs for the recorded starts of rate-limited scopes (SPEC §20.2), where they differ from
 * the prune's `before`: key scopes' (`key:…`), and named scopes' (`group:…`, `handler:…`)
 * whose window is longer than the retention. A start inside its scope's window is never pruned.
 */
export interface StartCutoffs {
  readonly keys: number
  readonly scopes: ReadonlyArray<readonly [scope: string, before: number]>
}

/**
 * Deletes ledger rows, final tasks and orphaned own breakers and tags older than `before`, and
 * the recorded starts of rate-limited scopes older than `before` or their scope's cut-off in
 * `starts`: a scope no claim touches any more (a one-off key) keeps none for long.
 */
export const prune = (
  sql: SqlClient,
  before: number,
  starts: StartCutoffs = { keys: before, scopes: [] },
): Effect.Effect<void, StoreError> =>
  sql
    .withTransaction(
      Effect.all([
        sql`DELETE FROM tickwork_runs WHERE finished_at < ${before}`,
        sql`DELETE FROM tickwork_events WHERE at < ${before}`,
        sql`DELETE FROM tickwork_breakers WHERE shared = 0 AND NOT EXISTS (
          SELECT 1 FROM tickwork_tasks t WHERE t.breaker = tickwork_breakers.key
            AND t.state IN ('scheduled', 'running', 'paused'))`,
        sql`DELETE FROM tickwork_tasks
          WHERE state IN ('done', 'failed', 'cancelled') AND finished_at < ${before}`,
        // Tags of pruned tasks, and of earlier generations of reused ids.
        sql`DELETE FROM tickwork_tags WHERE NOT EXISTS (SELECT 1 FROM tickwork_tasks t
          WHERE t.id = tickwork_tags.task_id AND t.generation = tickwork_tags.generation)`,
        sql`DELETE FROM tickwork_scope_starts WHERE scope LIKE 'key:%' AND at < ${starts.keys}`,
        sql`DELETE FROM tickwork_scope_starts WHERE scope NOT LIKE 'key:%' AND at < ${before}${
          starts.scopes.length === 0
            ? sql``
            : sql` AND scope NOT IN ${sql.in(starts.scopes.map(([s]) => s))}`
        }`,
        Effect.forEach(
          starts.scopes,
          ([scope, cut]) =>
            sql`DELETE FROM tickwork_scope_starts WHERE scope = ${scope} AND at < ${cut}`,
          { discard: true },
        ),
      ]),
    )
    .pipe(Effect.asVoid, Effect.mapError(Failure.failing("prune the ledger")))
