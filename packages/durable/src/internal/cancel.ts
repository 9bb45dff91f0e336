/**
 * @internal
 * The store's cancel: a live task ends `cancelled` in one transaction, decided on its locked row
 * (`locked.ts`), with its event, and leaves its circuit breaker (SPEC §7: a half-open breaker whose probe it was lets another task through).
 */
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { StoreError } from "../Errors.ts"
import * as Breakers from "./breakers.ts"
import { eventRecord } from "./codec.ts"
import * as Events from "./events.ts"
import * as Failure from "./failure.ts"
import { lockedRow } from "./locked.ts"
import type { Cancelled } from "./model.ts"
import * as Write from "./write.ts"

/**
 * Cancels a scheduled, running or paused task at `now` (recording `origin`, when given, on its
 * event); `None` if it was none of those. A running task keeps its lease and fence: its run
 * completes under them and is recorded, and the task stays cancelled.
 */
export const cancel = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  id: string,
  now: number,
  origin?: string | undefined,
): Effect.Effect<Option.Option<Cancelled>, StoreError> =>
  sql
    .withTransaction(
      Effect.gen(function* () {
        // Locked: a cancel, completion or update committing meanwhile is seen, not overwritten
        // (two cancels at once end the task once, with one event).
        const locked = yield* lockedRow(sql, dialect, id, { live: true })
        if (Option.isNone(locked)) return Option.none<Cancelled>()
        const row = locked.value
        const found: Cancelled = {
          generation: row.generation,
          from: row.state as Cancelled["from"],
          slot: row.slot,
          fence: row.fence,
          leaseOwner: row.leaseOwner,
        }
        // The lease (and fence) stay: a run in flight still completes under its fence,
        // and its ledger row is written, but the task stays cancelled.
        yield* sql`UPDATE tickwork_tasks SET state = 'cancelled', finished_at = ${now},
          updated_at = ${now}, paused_reason = NULL WHERE id = ${id}`
        yield* sql`INSERT INTO tickwork_events ${sql.insert(
          eventRecord(
            Events.make("cancelled", { id, ...found }, now, found.leaseOwner, {
              cause: found.from,
              origin,
            }),
          ),
        )}`
        if (row.breaker !== null) {
          const tx: Breakers.Tx = { sql, dialect, seq: () => now * 1000, owner: null }
          const left = yield* Breakers.leave(
            tx,
            row.breaker,
            { id, generation: found.generation },
            now,
          )
          yield* Write.events(sql, left)
        }
        return Option.some(found)
      }),
    )
    .pipe(Effect.mapError(Failure.failing("cancel")))
