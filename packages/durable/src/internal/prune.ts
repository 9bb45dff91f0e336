/**
 * @internal
 * The store's prune: the ledger (runs, events) and the final tasks that ended before a time are
 * deleted in one transaction, with the own breakers and tags nothing live refers to any more.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { StoreError } from "../Errors.ts"
import * as Failure from "./failure.ts"

/** Deletes ledger rows, final tasks and orphaned own breakers and tags older than `before`. */
export const prune = (sql: SqlClient, before: number): Effect.Effect<void, StoreError> =>
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
      ]),
    )
    .pipe(Effect.asVoid, Effect.mapError(Failure.failing("prune the ledger")))
